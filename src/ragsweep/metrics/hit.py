"""Hit rate (success@k): did any relevant chunk make the cut-off."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ragsweep.metrics.relevance import Span, gold_ranges, relevance, top_k


def hit_at_k(retrieved: Iterable[Sequence], gold: Sequence[Span], k: int) -> float:
    """1.0 if any of the first ``k`` retrieved ranges overlaps a gold span, else 0.0.

    The binary "success at k" used throughout TREC-style evaluation (e.g.
    Voorhees 1999, "The TREC-8 Question Answering Track Report"). NaN when
    ``gold`` is empty: the question has no evidence, so retrieval is undefined.
    """
    ranked = top_k(retrieved, k)
    gold = gold_ranges(gold)
    if not gold:
        return float("nan")
    return 1.0 if any(relevance(ranked, gold)) else 0.0
