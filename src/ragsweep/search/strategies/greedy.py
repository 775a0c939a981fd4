"""Greedy search, node by node (AutoRAG's strategy; Kim et al. 2024, "AutoRAG: Automated Framework for
optimization of Retrieval Augmented Generation Pipeline", arXiv:2410.20878): for each axis in turn,
every value is tried with the axes already decided at their best values and the later ones at the
spec's first values that fit; the best value is kept and the next axis is tried. ``order:
models_first`` decides the embedding, reranker and transform first, which IBM's RAG-HPO study
(arXiv:2505.03452) found better than pipeline order."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ragsweep.search.strategies.base import Strategy

if TYPE_CHECKING:
    from ragsweep.search.space import ConfigLike


class GreedyStrategy(Strategy):
    name = "greedy"

    def propose(self, space, trials: list, pending: set[str]):
        quality = {t.config_hash: t.values.get("quality") for t in trials if t.state == "complete"}
        tried = {t.config_hash for t in trials if t.evaluated} | pending
        fixed: dict[str, str] = {}
        for axis in space.axes:
            reps: dict[str, ConfigLike] = {}  # axis value -> its first configuration
            for c in space.matching(fixed):  # grid order: the later axes at the spec's first values
                reps.setdefault(space.values[c.config_hash][axis], c)
            if len(reps) > 1:
                todo = [c for c in reps.values() if c.config_hash not in tried]
                if todo:
                    return space.params(todo[0])
                if any(c.config_hash in pending for c in reps.values()):
                    return None  # this axis waits for its batch: nothing to add now
            fixed[axis] = self._best(reps, quality)
        return None  # every axis decided

    def _best(self, reps: dict, quality: dict) -> str:
        """The value whose representative scored best (a failed one never wins; ties: the spec's order)."""
        sign = -1.0 if self.lower_is_better else 1.0

        def score(value: str) -> float:
            q = quality.get(reps[value].config_hash)
            return sign * q if q is not None and math.isfinite(q) else -math.inf

        return max(reps, key=score)
