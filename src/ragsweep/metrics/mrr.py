"""Reciprocal rank of the first relevant chunk."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ragsweep.metrics.relevance import Span, gold_ranges, relevance, top_k


def reciprocal_rank(retrieved: Iterable[Sequence], gold: Sequence[Span], k: int) -> float:
    """1/rank of the first of the top ``k`` ranges that overlaps gold; 0.0 if none does.

    Averaged over questions this is MRR (Voorhees 1999, "The TREC-8 Question
    Answering Track Report"). NaN when ``gold`` is empty.
    """
    ranked = top_k(retrieved, k)
    gold = gold_ranges(gold)
    if not gold:
        return float("nan")
    for rank, relevant in enumerate(relevance(ranked, gold), start=1):
        if relevant:
            return 1.0 / rank
    return 0.0
