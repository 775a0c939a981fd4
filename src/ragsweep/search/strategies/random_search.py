"""Random search (Bergstra & Bengio 2012, "Random Search for Hyper-Parameter Optimization", JMLR 13):
the grid's configurations in a seeded random order, without replacement, uniform over configurations
(not over the axes, which would favour configurations in small branches)."""

from __future__ import annotations

import random

from ragsweep.search.strategies.base import Strategy


class RandomStrategy(Strategy):
    name = "random"

    def propose(self, space, trials: list, pending: set[str]):
        seen = {t.config_hash for t in trials if t.config_hash is not None and t.state != "skipped"} | pending
        order = sorted(space.by_hash)  # by hash: the order does not depend on how the spec lists things
        random.Random(self.seed).shuffle(order)
        nxt = next((h for h in order if h not in seen), None)
        return space.params(space.by_hash[nxt]) if nxt is not None else None
