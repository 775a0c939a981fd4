"""The metric columns of records and summaries, and the question splits they are reported on: all derived from
the metric catalogue (metrics/catalogue.py), which says what each one is."""

from __future__ import annotations

from ragsweep.metrics.catalogue import CATALOGUE, names, ordered

RETRIEVAL_METRICS = names("retrieval")
BERTSCORE_METRICS = names("bertscore")
# the answer against the reference answer; built with the records
ANSWER_METRICS = names("answer")
# rerank_ms, postprocess_ms: part of retrieval_ms, reported apart (empty without a reranker / postprocessor)
LATENCY_METRICS = names("latency")
# built with the records; NaN where undefined
ABSTENTION_METRICS = names("abstention")
# journaled with the answer
GROUNDEDNESS_METRICS = names("groundedness")
# journaled with the answer; NaN for extractive answers and answers journaled before the flags were. Their summary
# means are rates; the summary also counts them (n_echoed_prompt, n_copied_context)
DEGENERATE_FLAGS = names("degenerate")
SUMMARY_METRICS = [m.name for m in CATALOGUE if m.family != "judge"]
SELECTABLE_METRICS = names(selectable=True)
TABLE_METRICS = ordered("table")
# stage 2: per question, correctness is the 1-5 score, the others 1/0 (YES/NO); NaN when unmeasured
JUDGE_METRICS = names("judge")
JUDGE_OF = {m.name: m.judge for m in CATALOGUE if m.judge}
SPLITS = ["test", "validation", "all"]
# the records' columns only written to records.parquet (no summary, comparison or verdict reads them): the sweep's
# outputs stream them to the file one configuration at a time (``records_file.py``) instead of holding them
WRITTEN_ONLY = [
    "answer",
    "expanded_query",
    "transformed_queries",
    "transform_note",
    "standalone_question",
    "history_note",
    "fusion_weights",
    "context_order",
]
