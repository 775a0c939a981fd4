"""What ``ragsweep validate`` says about a dataset beyond its notes: how many questions are follow-ups with a
conversation history, how the evidence was found, where gold text recurs, which documents nearly duplicate
others, and where the unlocated texts are listed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ragsweep.datasets.types import Dataset
from ragsweep.run_dir import RunDir

MAX_LISTED = 10


def history_line(dataset: Dataset) -> str | None:
    """``follow-up questions with history: N of M (types: conversational N)``; None when no question has one."""
    types = Counter(q.qtype or "untyped" for q in dataset.questions if q.history)
    n = sum(types.values())
    if not n:
        return None
    by_type = ", ".join(f"{t} {c}" for t, c in sorted(types.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"follow-up questions with history: {n} of {len(dataset.questions)} (types: {by_type})"


def evidence_lines(dataset: Dataset, report_dir: Path | None = None) -> list[str]:
    """Lines for the terminal: follow-up questions with a history (``history_line``), tier counts, unlocated
    texts (a few, and the file with all), copies counted as gold, and near-duplicate documents
    (``duplicates.near_duplicate_documents``)."""
    from ragsweep.datasets.duplicates import near_duplicate_documents

    history = history_line(dataset)
    lines: list[str] = [history] if history else []
    ev = dataset.evidence or {}
    loc = ev.get("location")
    if ev.get("spans") is not None:
        by_text = ev.get("located_by_text", 0)
        lines.append(
            f"gold evidence: {ev['spans']} span(s) in {ev['questions_with_evidence']} question(s): "
            f"{ev['given_as_spans']} given as character spans (checked against their documents), "
            f"{by_text} located by text"
        )
    if loc:
        fuzzy = (
            f", fuzzy {loc['fuzzy']} (similarity >= {loc['fuzzy_threshold']})"
            if loc.get("fuzzy_threshold") is not None
            else ", fuzzy off (dataset.fuzzy_evidence)"
        )
        lines.append(
            f"evidence given as text: {loc['total']}; located exact {loc['exact']}, "
            f"normalised {loc['normalised']}{fuzzy}; unlocated {loc['unlocated']}"
        )
    unlocated = ev.get("unlocated") or []
    for u in unlocated[:MAX_LISTED]:
        near = (
            f" (closest in {u['closest_doc_id']!r}, similarity {u['similarity']:.3f})"
            if u.get("closest_doc_id")
            else " (nothing similar)"
        )
        text = " ".join(str(u.get("text", "")).split())
        lines.append(f"  unlocated: question {u.get('qid')!r} {u.get('field')}: {text[:70]!r}{near}")
    if unlocated:
        where = RunDir(Path(report_dir)).unlocated_evidence if report_dir is not None else None
        more = f"{len(unlocated) - MAX_LISTED} more; " if len(unlocated) > MAX_LISTED else ""
        if where is not None and where.is_file():
            lines.append(f"  ({more}every unlocated text with its closest match: {where})")
    copies = ev.get("copies")
    if copies and copies.get("questions"):
        lines.append(
            f"gold evidence of {copies['questions']} question(s) recurs elsewhere: {copies['spans_added']} "
            f"copy span(s) count as gold too (dataset.duplicate_evidence)"
        )
        for p in copies["documents"][:MAX_LISTED]:
            lines.append(f"  {p['evidence_doc']} -> {p['copy_doc']}: {p['copies']} cop(ies)")
    near_docs = near_duplicate_documents({d.doc_id: d.text for d in dataset.documents})
    if near_docs:
        lines.append(f"near-duplicate documents (>= 80% of one's 8-word shingles in the other): {len(near_docs)}")
        for p in near_docs[:MAX_LISTED]:
            lines.append(f"  {p['document']} within {p['within']}: {p['containment']:.0%}")
    return lines
