"""The contexts the reference baselines answer from, instead of a retriever's results (pure functions).

- ``no_retrieval``: nothing. An LLM answers from the question alone; the extractive generator has no sentence
  to pick. How much of a score a pipeline owes to retrieval at all (HyPA-RAG's LLM-only row, syftr's
  ``no_rag`` flows).
- ``oracle``: the question's gold evidence spans, in document order: what the generator reaches when retrieval
  is perfect (BERGEN's oracle contexts; Rau et al. 2024, "BERGEN: A Benchmarking Library for Retrieval-Augmented
  Generation").
- ``full_document``: the gold documents whole, in the order the evidence names them, read from their start
  until ``max_chars`` is full (a long-context reader with a window: Li et al. 2024, "Retrieval Augmented
  Generation or Long-Context LLMs?"). A document cut short may lose its evidence, as such a reader would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ragsweep.datasets.types import EvidenceSpan

KINDS = ("no_retrieval", "oracle", "full_document")


@dataclass(frozen=True)
class Span:
    """A character range ``[start, end)`` of a document, one piece of a baseline's context."""

    doc_id: str
    start: int
    end: int


def context_spans(
    kind: str, evidence: tuple[EvidenceSpan, ...], length: Callable[[str], int], max_chars: int | None = None
) -> list[Span]:
    """The context of baseline ``kind`` for a question with ``evidence``; ``length(doc_id)`` is a document's
    length in characters, ``max_chars`` the full-document budget (None: whole documents)."""
    if kind == "no_retrieval":
        return []
    if kind == "oracle":
        return oracle_spans(evidence)
    if kind == "full_document":
        return document_spans(evidence, length, max_chars)
    raise ValueError(f"unknown baseline {kind!r}; known: {', '.join(KINDS)}")


def oracle_spans(evidence: tuple[EvidenceSpan, ...]) -> list[Span]:
    """The gold spans, copies of another span left out (one piece of evidence, one passage), overlapping spans
    of one document merged, in document order."""
    spans = sorted((e.doc_id, e.start, e.end) for e in evidence if e.copy_of is None and e.end > e.start)
    merged: list[Span] = []
    for doc_id, start, end in spans:
        last = merged[-1] if merged else None
        if last is not None and last.doc_id == doc_id and start <= last.end:
            merged[-1] = Span(doc_id, last.start, max(last.end, end))
        else:
            merged.append(Span(doc_id, start, end))
    return merged


def document_spans(
    evidence: tuple[EvidenceSpan, ...], length: Callable[[str], int], max_chars: int | None = None
) -> list[Span]:
    """Each gold document once, whole, in the order the evidence first names it, until ``max_chars`` is spent
    (the last one cut short)."""
    out: list[Span] = []
    left = max_chars
    for doc_id in dict.fromkeys(e.doc_id for e in evidence if e.copy_of is None):
        n = length(doc_id)
        if left is not None:
            if left <= 0:
                break
            n = min(n, left)
            left -= n
        if n > 0:
            out.append(Span(doc_id, 0, n))
    return out
