"""nDCG with novelty-aware binary gains."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ragsweep.evaluation.metrics.relevance import Span, first_new_gold, gold_ranges, top_k


def ndcg_at_k(retrieved: Iterable[Sequence], gold: Sequence[Span], k: int) -> float:
    """Normalised discounted cumulative gain at ``k`` with a log2(rank + 1) discount.

    Järvelin & Kekäläinen 2002, "Cumulated gain-based evaluation of IR
    techniques" (ACM TOIS 20(4)). The gain at a rank is 1 only if the chunk
    overlaps a gold span no higher-ranked chunk overlapped, so a span cut into
    several chunks is rewarded once; the ideal ranking puts min(k, #gold spans)
    gains of 1 first, so the score lies in [0, 1]. NaN when ``gold`` is empty.
    """
    ranked = top_k(retrieved, k)
    gold = gold_ranges(gold)
    if not gold:
        return float("nan")
    dcg = sum(1.0 / math.log2(rank + 1) for rank, new in enumerate(first_new_gold(ranked, gold), start=1) if new)
    idcg = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(gold)) + 1))
    return dcg / idcg
