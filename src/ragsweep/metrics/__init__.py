"""Retrieval metrics judged by character overlap with gold evidence spans, and
short-answer metrics judged against the gold answer text.

Every retrieval metric takes ``(retrieved, gold, k)``: ``retrieved`` is a ranked
sequence of ``(doc_id, start, end)`` half-open character ranges, ``gold`` a
sequence of EvidenceSpan (or equal triples). Empty gold gives NaN (out-of-scope
question, excluded from means); empty retrieval gives 0.0; ``k < 1`` raises
ValueError.

Every answer metric takes ``(answer, references)`` (one gold string or several)
on SQuAD-normalised text. No reference gives NaN; an empty answer gives 0.0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ragsweep.metrics.answer import (
    References,
    answer_contains,
    exact_match,
    normalize_answer,
    token_f1,
)
from ragsweep.metrics.catalogue import functions
from ragsweep.metrics.document import document_reciprocal_rank
from ragsweep.metrics.hit import hit_at_k
from ragsweep.metrics.mrr import reciprocal_rank
from ragsweep.metrics.ndcg import ndcg_at_k
from ragsweep.metrics.relevance import Range, Span, first_new_gold, overlap
from ragsweep.metrics.span import span_precision_at_k, span_recall_at_k

RETRIEVAL_FUNCTIONS = functions("retrieval")
ANSWER_FUNCTIONS = functions("answer")


def all_retrieval_metrics(retrieved: Iterable[Sequence], gold: Sequence[Span], k: int) -> dict[str, float]:
    """Every retrieval metric at cut-off ``k``, keyed without ``@k`` (the caller adds it if wanted)."""
    retrieved = list(retrieved)  # may be a one-shot iterator; each metric reads it
    gold = list(gold)
    return {name: fn(retrieved, gold, k) for name, fn in RETRIEVAL_FUNCTIONS.items()}


def all_answer_metrics(answer: str | None, references: References) -> dict[str, float]:
    """Every answer metric of ``answer`` against ``references`` (one string or several)."""
    if isinstance(references, Iterable) and not isinstance(references, str):
        references = list(references)  # may be a one-shot iterator; each metric reads it
    return {name: fn(answer, references) for name, fn in ANSWER_FUNCTIONS.items()}


__all__ = [
    "ANSWER_FUNCTIONS",
    "RETRIEVAL_FUNCTIONS",
    "Range",
    "References",
    "Span",
    "all_answer_metrics",
    "all_retrieval_metrics",
    "answer_contains",
    "document_reciprocal_rank",
    "exact_match",
    "first_new_gold",
    "hit_at_k",
    "ndcg_at_k",
    "normalize_answer",
    "overlap",
    "reciprocal_rank",
    "span_precision_at_k",
    "span_recall_at_k",
    "token_f1",
]
