"""The per-question explorer's data: every question with each configuration's answer, scores,
judge verdicts (with reasoning) and retrieved sources (document, span, PDF page, score,
per-retriever ranks, graph triplets, whether it overlaps gold evidence)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ragsweep.metrics.catalogue import BY_NAME, ordered
from ragsweep.results.run import as_list, clean, overlaps_gold

if TYPE_CHECKING:
    from ragsweep.results.run import RunData

JUDGES = ("correctness", "faithfulness", "relevancy")


def explorer_data(run: RunData) -> dict:
    recs = run.records
    questions = run.questions
    if questions.empty and not recs.empty:  # no questions table: take what the records carry
        questions = recs.drop_duplicates("qid")[["qid", "question", "qtype", "reference_answer", "split"]].assign(
            evidence=[[] for _ in range(recs["qid"].nunique())]
        )
    gold = {q.qid: list(q.evidence) for q in questions.itertuples()}
    configs = list(dict.fromkeys(recs["config_id"])) if not recs.empty else []
    index = {c: i for i, c in enumerate(configs)}
    judges = [j for j in JUDGES if f"{j}_status" in recs.columns and recs[f"{j}_status"].notna().any()]
    shown = ordered("explorer")  # the catalogue's per-question columns
    answers: dict[str, list] = {}
    for r in recs.to_dict("records"):
        answers.setdefault(r["qid"], []).append(
            {
                "c": index[r["config_id"]],
                "answer": clean(r.get("answer")),
                "error": clean(r.get("error")),
                "scores": [_num(r.get(m)) for m in shown],
                "judges": {j: _judge(r, j) for j in judges},
                "sources": [_source(s, gold.get(r["qid"], [])) for s in as_list(r.get("sources"))],
                "rewrite": clean(r.get("standalone_question")),  # a history mode's search text for a follow-up
            }
        )
    return {
        "questions": [
            {
                "qid": q.qid,
                "question": clean(q.question),
                "type": clean(q.qtype),
                "split": clean(q.split),
                "ref": clean(q.reference_answer),
                "gold": [[g["doc_id"], int(g["start"]), int(g["end"])] for g in gold.get(q.qid, [])],
                "history": [[t["role"], t["content"]] for t in as_list(getattr(q, "history", None))],
            }
            for q in questions.itertuples()
            if q.qid in answers
        ],
        "configs": _configs(recs, configs),
        "metrics": [{"name": m, "label": BY_NAME[m].label, "digits": BY_NAME[m].digits} for m in shown],
        "judges": judges,
        "answers": answers,
    }


def _judge(row: dict, judge: str) -> dict | None:
    status = clean(row.get(f"{judge}_status"))
    if status is None:
        return None
    reasoning = clean(row.get("correctness_reasoning")) if judge == "correctness" else None
    return {
        "status": status,
        "score": _num(row.get(judge)),
        "reason": clean(row.get(f"{judge}_reason")),
        "reasoning": reasoning or clean(row.get(f"{judge}_raw")),
    }


def _source(s: dict, gold: list) -> dict:
    """One retrieved source; ``page`` only for paged documents (PDFs), so other reports are unchanged."""
    page = clean(s.get("page"))
    return {
        "rank": s.get("rank"),
        "doc": s.get("doc_id"),
        "start": s.get("start"),
        "end": s.get("end"),
        **({"page": str(page)} if page is not None else {}),
        "score": _num(s.get("score")),
        "rv": s.get("rank_vector"),
        "rb": s.get("rank_bm25"),
        "rg": s.get("rank_graph"),
        "triplets": [str(t) for t in as_list(s.get("triplets"))],
        **({"rbase": int(clean(s.get("rank_base")))} if clean(s.get("rank_base")) is not None else {}),
        "gold": overlaps_gold(s, gold),
    }


def _configs(recs, configs: list) -> list[dict]:
    """Each configuration's splitter, retriever and top_k (None when adaptive); none without records."""
    if recs.empty:
        return []
    meta = recs.drop_duplicates("config_id").set_index("config_id")
    return [
        {
            "id": c,
            "splitter": meta.loc[c, "splitter"],
            "retriever": meta.loc[c, "retriever"],
            "top_k": None if _adaptive(meta, c) else _int(meta.loc[c, "top_k"]),
        }
        for c in configs
    ]


def _adaptive(meta, config_id: str) -> bool:
    """An adaptive configuration: its records' top_k is each question's, not the configuration's."""
    return "adaptive_class" in meta.columns and clean(meta.loc[config_id, "adaptive_class"]) is not None


def _int(v) -> int | None:
    """A top_k; None when a configuration has none (adaptive: it varies per question)."""
    n = _num(v)
    return None if n is None else int(n)


def _num(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else round(f, 5)
