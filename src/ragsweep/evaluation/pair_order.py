"""The order BERTScore's uncached pairs are scored in, so that each text is encoded about once.

Pairs are scored in blocks (``BERTScoreRunner.score``: 4,096 pairs, the unit an executor may send anywhere);
a block encodes each of its references and each of its candidates once. A candidate in several blocks is
encoded in each. Sorted by reference text, the pairs of one candidate (an extractive answer that several
questions got: the same sentences of one contract) were spread over the blocks: contractnli x1 encoded 1.26x
the tokens of its distinct texts, x4 1.68x, so the cost per pair grew with the corpus (BENCHMARKS "Cost
against corpus size"). Here the references are ordered by a breadth-first walk of the graph whose edges are the
pairs (a reference, then the references sharing a candidate with it, ...), so references that share candidates
land in the same block: 1.15x at x1 and 1.19x at x4. The walk is deterministic (each step in sorted order) and
linear in the pairs; a pair's score does not depend on its block, so no value changes.
"""

from __future__ import annotations

from collections import deque
from typing import TypeVar

K = TypeVar("K")


def clustered(pairs: list[tuple[K, tuple[str, str]]]) -> list[tuple[K, tuple[str, str]]]:
    """``pairs`` ((key, (candidate, reference)), each pair once) ordered by the breadth-first rank of their
    reference, then by candidate."""
    cands_of: dict[str, list[str]] = {}
    refs_of: dict[str, list[str]] = {}
    for _, (cand, ref) in pairs:
        cands_of.setdefault(ref, []).append(cand)
        refs_of.setdefault(cand, []).append(ref)
    rank: dict[str, int] = {}
    expanded: set[str] = set()  # candidates whose references are queued already
    for start in sorted(cands_of):
        if start in rank:
            continue
        rank[start] = len(rank)
        queue = deque([start])
        while queue:
            for cand in sorted(cands_of[queue.popleft()]):
                if cand in expanded:
                    continue
                expanded.add(cand)
                for ref in sorted(refs_of[cand]):
                    if ref not in rank:
                        rank[ref] = len(rank)
                        queue.append(ref)
    return sorted(pairs, key=lambda kv: (rank[kv[1][1]], kv[1][0]))
