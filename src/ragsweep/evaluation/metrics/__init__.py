"""Retrieval metrics judged by character overlap with gold evidence spans.

Every metric takes ``(retrieved, gold, k)``: ``retrieved`` is a ranked sequence
of ``(doc_id, start, end)`` half-open character ranges, ``gold`` a sequence of
EvidenceSpan (or equal triples). Empty gold gives NaN (out-of-scope question,
excluded from means); empty retrieval gives 0.0; ``k < 1`` raises ValueError.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ragsweep.evaluation.metrics.document import document_reciprocal_rank
from ragsweep.evaluation.metrics.hit import hit_at_k
from ragsweep.evaluation.metrics.mrr import reciprocal_rank
from ragsweep.evaluation.metrics.ndcg import ndcg_at_k
from ragsweep.evaluation.metrics.relevance import Range, Span, first_new_gold, overlap
from ragsweep.evaluation.metrics.span import span_precision_at_k, span_recall_at_k

RETRIEVAL_METRICS = {
    "hit": hit_at_k,
    "mrr": reciprocal_rank,
    "ndcg": ndcg_at_k,
    "span_recall": span_recall_at_k,
    "span_precision": span_precision_at_k,
    "doc_mrr": document_reciprocal_rank,
}


def all_retrieval_metrics(retrieved: Iterable[Sequence], gold: Sequence[Span], k: int) -> dict[str, float]:
    """Every retrieval metric at cut-off ``k``, keyed without ``@k`` (the caller adds it if wanted)."""
    retrieved = list(retrieved)  # may be a one-shot iterator; each metric reads it
    gold = list(gold)
    return {name: fn(retrieved, gold, k) for name, fn in RETRIEVAL_METRICS.items()}


__all__ = [
    "RETRIEVAL_METRICS",
    "Range",
    "Span",
    "all_retrieval_metrics",
    "document_reciprocal_rank",
    "first_new_gold",
    "hit_at_k",
    "ndcg_at_k",
    "overlap",
    "reciprocal_rank",
    "span_precision_at_k",
    "span_recall_at_k",
]
