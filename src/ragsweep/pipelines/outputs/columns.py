"""The metric columns of records and summaries, and the question splits they are reported on."""

from __future__ import annotations

RETRIEVAL_METRICS = ["hit", "mrr", "ndcg", "span_recall", "span_precision", "doc_mrr"]
BERTSCORE_METRICS = ["bertscore_p", "bertscore_r", "bertscore_f1",
                     "bertscore_p_rescaled", "bertscore_r_rescaled", "bertscore_f1_rescaled"]
# the answer against the reference answer, SQuAD-normalised (evaluation.metrics.answer); built with the records
ANSWER_METRICS = ["answer_contains", "exact_match", "token_f1"]
# rerank_ms, postprocess_ms: part of retrieval_ms, reported apart (empty without a reranker / postprocessor)
LATENCY_METRICS = ["retrieval_ms", "query_embedding_ms", "rerank_ms", "postprocess_ms", "generation_ms"]
# 1/0 per question, NaN where undefined (evaluation.metrics.abstention): abstained on an unanswerable question
# (higher is better), abstained on an answerable one (lower is better); built with the records
ABSTENTION_METRICS = ["abstention_rate", "false_abstention_rate"]
# groundedness of the answer in the context it was written from, by a cheap detector (groundedness/detectors/quip.py:
# share of the answer's character 21-grams in the context); journaled with the answer
GROUNDEDNESS_METRICS = ["quip"]
# degenerate LLM answers (pipelines/degenerate.py), 1/0 per answer, journaled with it; NaN for extractive answers
# and answers journaled before the flags were: the answer echoes the prompt's scaffolding / is mostly a long verbatim
# copy of the context. Their summary means are rates; the summary also counts them (n_echoed_prompt, n_copied_context)
DEGENERATE_FLAGS = ["echoed_prompt", "copied_context"]
SUMMARY_METRICS = (BERTSCORE_METRICS + ANSWER_METRICS + RETRIEVAL_METRICS + LATENCY_METRICS + ABSTENTION_METRICS
                   + GROUNDEDNESS_METRICS + DEGENERATE_FLAGS)
SELECTABLE_METRICS = BERTSCORE_METRICS + ANSWER_METRICS + RETRIEVAL_METRICS + ABSTENTION_METRICS + GROUNDEDNESS_METRICS
TABLE_METRICS = ["bertscore_f1_rescaled", "hit", "answer_contains", "mrr", "ndcg", "span_recall", "span_precision",
                 *ABSTENTION_METRICS]
# stage 2: per question, correctness is the 1-5 score, the others 1/0 (YES/NO); NaN when unmeasured
JUDGE_METRICS = ["correctness", "correctness_pass", "faithfulness", "relevancy"]
JUDGE_OF = {"correctness": "correctness", "correctness_pass": "correctness", "faithfulness": "faithfulness",
            "relevancy": "relevancy"}
SPLITS = ["test", "validation", "all"]
