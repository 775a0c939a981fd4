"""nDCG with novelty-aware gains counted in gold spans."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ragsweep.metrics.relevance import Span, first_new_gold, gold_groups, gold_ranges, top_k


def ndcg_at_k(retrieved: Iterable[Sequence], gold: Sequence[Span], k: int) -> float:
    """Normalised discounted cumulative gain at ``k`` with a log2(rank + 1) discount.

    Järvelin & Kekäläinen 2002, "Cumulated gain-based evaluation of IR
    techniques" (ACM TOIS 20(4)). Gold spans are the relevant items. The gain
    at a rank is the number of gold spans the chunk is the first to overlap, so
    a span cut into several chunks is rewarded once, and a large chunk that
    covers several spans earns one gain per span. The ideal ranking finds one
    new span per rank (min(k, #gold spans) ranks); a coarse chunk that finds
    several spans at once can beat it, so the ratio is capped at 1: fine and
    coarse chunkers both score 1 when all gold is retrieved at the top. A span
    and its copies elsewhere in the corpus are one relevant item. NaN when
    ``gold`` is empty.
    """
    ranked = top_k(retrieved, k)
    if not gold_ranges(gold):
        return float("nan")
    pieces = len({group for group, _ in gold_groups(gold)})  # a span and its copies are one piece
    dcg = sum(new / math.log2(rank + 1) for rank, new in enumerate(first_new_gold(ranked, gold), start=1))
    idcg = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, pieces) + 1))
    return min(1.0, dcg / idcg)
