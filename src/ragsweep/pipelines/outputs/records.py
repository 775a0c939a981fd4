"""``records.parquet``: one row per (configuration, question), built from the journal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from ragsweep.pipelines.answer_record import AnswerRecord
from ragsweep.pipelines.outputs.columns import (
    ANSWER_METRICS,
    BERTSCORE_METRICS,
    DEGENERATE_FLAGS,
    GROUNDEDNESS_METRICS,
    JUDGE_METRICS,
    LATENCY_METRICS,
    RETRIEVAL_METRICS,
    SUMMARY_METRICS,
    WRITTEN_ONLY,
)
from ragsweep.pipelines.outputs.records_file import RecordsFile
from ragsweep.pipelines.outputs.row_columns import RowColumns
from ragsweep.pipelines.outputs.sources_column import SourcesColumn

# whole configurations' rows handed to ``parts`` together until they are this many: a part costs about 40 ms
# whatever its size (a frame, an Arrow table, a file written and read back), 27 parts of 194 rows were a second of
# privacy_qa's outputs; one configuration of contractnli x4 (3,908 rows) is a part alone
PART_ROWS = 2048


def question_rows(questions, split: dict | None = None) -> list[dict]:
    """The questions as plain rows (written to ``questions.parquet``): what records need of them,
    plus the gold evidence spans the report shows."""
    return [
        {
            "qid": q.qid,
            "question": q.question,
            "qtype": q.qtype,
            "reference_answer": q.reference_answer,
            "split": (split or {}).get(q.qid, "all"),
            "history_turns": len(q.history),  # a follow-up's conversation before it (0: asked alone)
            "history": [{"role": t.role, "content": t.content} for t in q.history],
            "evidence": [
                {
                    "doc_id": e.doc_id,
                    "start": e.start,
                    "end": e.end,
                    **({"copy_of": e.copy_of} if e.copy_of is not None else {}),
                }
                for e in q.evidence
            ],
        }
        for q in questions
    ]


def answer_scores(payload: AnswerRecord, reference: str | None) -> Mapping[str, float | None]:
    """The short-answer metrics of a journaled answer against the reference answer: cheap and
    deterministic, so computed here rather than journaled; None for a row that failed (no answer)."""
    from ragsweep.metrics import all_answer_metrics

    if payload.get("error"):
        return dict.fromkeys(ANSWER_METRICS)
    return all_answer_metrics(payload.get("answer"), reference)


def abstention(payload: AnswerRecord, answerable: bool | None) -> dict:
    """Whether the answer abstained (the generator's own record; an LLM answer journaled before
    abstention was recorded is read with ``is_refusal``) and the per-question abstention rates
    (``answerable``: the question has gold evidence; None when no question of the dataset has any)."""
    from ragsweep.metrics.abstention import abstention_scores, is_refusal

    if payload.get("error"):
        return {"abstained": None, **abstention_scores(None, answerable)}
    abstained = payload.get("abstained")
    if abstained is None:
        abstained = str(payload.get("generator") or "").startswith("llm:") and is_refusal(payload.get("answer"))
    return {"abstained": bool(abstained), **abstention_scores(bool(abstained), answerable)}


def retrieval_llm(payload: AnswerRecord) -> dict:
    """LLM use while retrieving (query rewrites and transforms, LLM reranking): calls, tokens and cost per question."""
    parts = [
        p
        for p in (
            payload.get("rewrite_llm"),
            payload.get("transform_llm"),
            payload.get("rerank_llm"),
            payload.get("history_llm"),
        )
        if p
    ]
    if not parts:
        return {"retrieval_llm_calls": None, "retrieval_tokens": None, "retrieval_cost_usd": None}
    costs = [p.get("cost_usd") for p in parts if p.get("cost_usd") is not None]
    return {
        "retrieval_llm_calls": sum(p.get("llm_calls") or 0 for p in parts),
        "retrieval_tokens": sum((p.get("prompt_tokens") or 0) + (p.get("completion_tokens") or 0) for p in parts),
        "retrieval_cost_usd": sum(costs) if costs else None,
    }


def llm_answer_timing(payload: AnswerRecord) -> dict:
    """An LLM answer's reply and time apart from ``generation_ms`` (the server's time on its calls where known):
    its wall time with queue waits, the queue wait, whether a reply was cut at max_tokens, the invocation that
    made it; and for a failed answer the kind of failure (``context_window``: a prompt too long for the server)."""
    llm = payload.get("llm") or {}
    return {
        "generation_wall_ms": payload.get("generation_wall_ms"),
        "generation_queue_ms": payload.get("generation_queue_ms"),
        "truncated": payload.get("truncated"),
        "llm_truncated": llm.get("llm_truncated"),
        "invocation": payload.get("invocation"),
        "error_kind": payload.get("error_kind"),
    }


class Judgements(NamedTuple):
    """Which stage-2 judgements join the records: those journaled under the judges' current keys (``keys``:
    judge -> key), each judged ``repeats`` times."""

    keys: dict
    repeats: int = 1


def build_records(
    questions: list[dict],
    configs: list[dict],
    journal,
    scorer_key: str | None = None,
    judgements: Judgements | None = None,
    sources: bool | RecordsFile = True,
):
    """One row per (configuration, question) present in the journal, with scores joined in
    (only scores made with the current BERTScore settings, ``scorer_key``, when given) and, with
    ``judge_keys``, the stage-2 judgements made with the current judge settings. The short-answer
    metrics (``ANSWER_METRICS``) are computed from the answer and the reference answer. The rows are in the
    configurations' order, then the questions'. ``judgements``: the stage-2 judgements that join them.

    ``questions`` are ``question_rows``, ``configs`` ``Configuration.labels()``: plain rows, so a
    killed run's records can be rebuilt from its directory alone (``ragsweep.load_run``).

    ``sources=False``: the sources are left out (a caller that reads only the scores). ``sources`` a
    ``RecordsFile``: whole configurations' rows are handed there as they are made, ``PART_ROWS`` or more at a
    time but the last (``RecordsFile.add``, their sources compact in a ``SourcesColumn``), and the frame
    returned leaves out the sources and the columns only written (``WRITTEN_ONLY``)."""
    parts = sources if isinstance(sources, RecordsFile) else None
    keep_sources = sources is not False
    judge_keys, repeats = judgements if judgements is not None else (None, 1)
    by_hash = {c["config_hash"]: c for c in configs}
    order = {c["config_hash"]: i for i, c in enumerate(configs)}  # the frame's order: configurations, questions
    qs = {q["qid"]: q for q in questions}
    qorder = {q["qid"]: i for i, q in enumerate(questions)}
    scores = {k: v for k, v in journal.scores().items() if scorer_key is None or v.get("scorer") == scorer_key}
    judged = journal.repeated_judgements(judge_keys, repeats) if judge_keys else {}
    with_evidence = any(q["evidence"] for q in questions)  # else answerability is unknown
    rows = RowColumns()
    whole, found = (RowColumns(), SourcesColumn()) if parts is not None else (rows, None)
    for h in sorted(order, key=order.__getitem__):
        for qid, payload in journal.answers_of(h, qorder):
            row = _row(by_hash[h], qs[qid], payload, scores.pop((h, qid), {}), with_evidence)  # each used once
            if found is not None or not keep_sources:
                listed = row.pop("sources")
                if found is not None:
                    found.add(listed)
            if judge_keys:
                row.update(judgement_columns(judged, h, qid, judge_keys))
            whole.add(row)
            if parts is not None:
                rows.add({k: v for k, v in row.items() if k not in _WRITTEN})
        if parts is not None and len(whole) >= PART_ROWS:
            parts.add(_typed(whole.frame()), found)
            whole, found = RowColumns(), SourcesColumn()
    if parts is not None and len(whole):
        parts.add(_typed(whole.frame()), found)
    return _typed(rows.frame())


_WRITTEN = frozenset(WRITTEN_ONLY)


def _typed(df):
    """The metric columns as float64 (NaN where unmeasured)."""
    import pandas as pd

    if df.empty:
        return df
    for m in SUMMARY_METRICS + [m for m in JUDGE_METRICS if m in df.columns]:
        df[m] = pd.to_numeric(df[m], errors="coerce").astype("float64")
    return df


def _row(config: dict, q: dict, payload: AnswerRecord, scores: dict, with_evidence: bool) -> dict:
    """One (configuration, question) row before its judgements: the configuration's labels, the question, the
    answer and sources, retrieval, latency, groundedness and degenerate-answer columns, the LLM's calls and
    costs, BERTScore (``scores``), the short-answer metrics and abstention."""
    qid = q["qid"]
    row = {
        **config,
        "qid": qid,
        "question": q["question"],
        "qtype": q["qtype"],
        "reference_answer": q["reference_answer"],
        "history_turns": q.get("history_turns", 0),
        "n_gold_spans": len(q["evidence"]),
        "answer": payload.get("answer"),
        "answer_empty": payload.get("answer_empty"),
        "generator": payload.get("generator"),
        "sources": payload.get("sources") or [],
        **{m: payload.get(m) for m in RETRIEVAL_METRICS + LATENCY_METRICS + GROUNDEDNESS_METRICS},
        # LLM answers only (NaN: extractive, failed, or journaled before the flags existed)
        **{m: None if payload.get("error") else payload.get(m) for m in DEGENERATE_FLAGS},
        "error": payload.get("error"),
        "expanded_query": payload.get("expanded_query"),
        # an LLM query transform: the queries (HyDE: the texts embedded) searched, why it fell back if it did
        "transformed_queries": payload.get("transformed_queries"),
        "transform_note": payload.get("transform_note"),
        # a history mode: what a follow-up was searched with (an LLM's rewrite), why it fell back if it did
        "standalone_question": payload.get("standalone_question"),
        "history_note": payload.get("history_note"),
        "fusion_weights": payload.get("fusion_weights"),
        "n_retrieved": payload.get("n_retrieved"),  # with a postprocessor: nodes retrieved before it
        "context_order": payload.get("context_order"),  # long_context_reorder: ranks in the generator's order
        # adaptive: the question's predicted class and the top_k it was retrieved (and scored) at
        **(
            {"top_k": payload.get("top_k"), "adaptive_class": payload["adaptive_class"]}
            if payload.get("adaptive_class")
            else {}
        ),
    }
    llm = payload.get("llm") or {}
    row.update(retrieval_llm(payload))
    row.update(llm_answer_timing(payload))
    row.update(
        {
            "split": q["split"],
            "llm_calls": llm.get("llm_calls"),
            "llm_cached": llm.get("llm_cached"),
            "prompt_tokens": llm.get("prompt_tokens"),
            "completion_tokens": llm.get("completion_tokens"),
            "cost_usd": llm.get("cost_usd"),
        }
    )
    row.update({m: scores.get(m) for m in BERTSCORE_METRICS})
    row.update(answer_scores(payload, q["reference_answer"]))
    row.update(abstention(payload, bool(q["evidence"]) if with_evidence else None))
    return row


def judgement_columns(judged: dict, config_hash: str, qid: str, judge_keys) -> dict:
    """A row's stage-2 columns per judge: status, reason, raw reply, score (when ok), cost, truncation; and
    correctness's reasoning and pass flag. A question not judged (yet) has them all empty. With repeats, the
    score and pass flag are the means of the repeats that were measured, the status ``ok`` once every repeat is
    made and one is measured, the text fields the first repeat's, and ``<judge>_repeats`` (and
    ``correctness_pass_repeats``) keep each repeat's value for the CIs and the self-agreement."""
    row: dict = {}
    for j in judge_keys:
        runs = judged.get((config_hash, qid, j)) or []
        jv = runs[0] if runs else None
        made = [p for p in runs if p is not None and p.get("ok")]
        complete = bool(runs) and len(made) == len(runs)
        ok = [p for p in made if p.get("status") == "ok"]
        status = None if not complete else ("ok" if ok else runs[0].get("status"))
        if runs and not complete:
            status = "failed" if any(p is not None and not p.get("ok") for p in runs) else None
        row[f"{j}_status"] = status
        row[f"{j}_reason"] = jv.get("reason") if jv else None
        row[f"{j}_raw"] = jv.get("raw") if jv else None
        row[j] = sum(p["score"] for p in ok) / len(ok) if ok and complete else None
        if j == "correctness":
            row["correctness_reasoning"] = jv.get("reasoning") if jv else None
            row["correctness_pass"] = sum(float(p["passing"]) for p in ok) / len(ok) if ok and complete else None
        costs = [c for p in runs if p is not None and (c := (p.get("llm") or {}).get("cost_usd")) is not None]
        row[f"{j}_cost_usd"] = sum(costs) if costs else None
        row[f"{j}_truncated"] = (jv.get("llm") or {}).get("llm_truncated") if jv else None
        if len(runs) > 1:
            row[f"{j}_repeats"] = [p.get("score") if p and p.get("status") == "ok" else None for p in runs]
            if j == "correctness":
                row["correctness_pass_repeats"] = [
                    float(p["passing"]) if p and p.get("status") == "ok" else None for p in runs
                ]
    return row
