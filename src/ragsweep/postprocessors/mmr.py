"""Maximal marginal relevance: re-rank the retrieved nodes for relevance and novelty together.

Carbonell & Goldstein 1998, "The Use of MMR, Diversity-Based Reranking for Reordering Documents and
Producing Summaries" (SIGIR): the next node is the one with the greatest

    lambda * rel(d) - (1 - lambda) * max over ranked s of sim(d, s),

so a chunk that repeats one already ranked (overlapping windows, a clause quoted in two documents) moves
down. ``rel`` is the retriever's score min-max normalised over the candidates, or ``1 - (rank - 1) / n``
where scores are missing or all equal (graph retrievers); ``sim`` is the cosine of the nodes' term-frequency
vectors (lower-cased words), so MMR needs no embedding model and orders the same in a Ray task as on the
driver. Ties go to the better-ranked node; ``lambda = 1`` keeps the ranking.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from ragsweep.postprocessors.base import Shaped

_WORD = re.compile(r"\w+")


def relevances(scores: list[float | None]) -> list[float]:
    """Scores min-max normalised to [0, 1]; by rank when any is missing or all are equal."""
    n = len(scores)
    known = [s for s in scores if s is not None and math.isfinite(s)]
    if len(known) < n or n == 0 or max(known) == min(known):
        return [1.0 - i / n for i in range(n)]
    lo, hi = min(known), max(known)
    return [(float(s) - lo) / (hi - lo) for s in known]


def term_vector(text: str) -> Counter:
    return Counter(_WORD.findall(text.lower()))


def cosine(a: Counter, b: Counter) -> float:
    """The cosine of two term-frequency vectors (0 when either is empty)."""
    if len(b) < len(a):
        a, b = b, a
    dot = sum(v * b[t] for t, v in a.items() if t in b)
    na, nb = math.sqrt(sum(v * v for v in a.values())), math.sqrt(sum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0


def mmr_order(rel: list[float], vectors: list[Counter], lam: float) -> list[int]:
    """Indices in MMR order: greedily the greatest ``lam * rel - (1 - lam) * max similarity to those taken``."""
    left = list(range(len(rel)))
    most_similar = [0.0] * len(rel)
    order: list[int] = []
    while left:
        best = max(left, key=lambda i: (lam * rel[i] - (1 - lam) * most_similar[i], -i))
        order.append(best)
        left.remove(best)
        for i in left:
            most_similar[i] = max(most_similar[i], cosine(vectors[i], vectors[best]))
    return order


def apply(spec, config, nodes: list, dataset) -> Shaped:
    """The nodes in MMR order (ranking and context alike)."""
    rel = relevances([None if n.score is None else float(n.score) for n in nodes])
    order = mmr_order(rel, [term_vector(n.node.get_content()) for n in nodes], spec.relevance)
    ranked = [nodes[i] for i in order]
    return Shaped(ranked, list(ranked))
