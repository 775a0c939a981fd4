"""The grid as a strategy: every configuration, in the spec's order, all in one batch. Only a race
(``search.racing``) makes it a search: the race drops configurations early, on validation questions."""

from __future__ import annotations

from ragsweep.search.strategies.base import Strategy


class GridStrategy(Strategy):
    name = "grid"

    def propose(self, space, trials: list, pending: set[str]):
        seen = {t.config_hash for t in trials if t.config_hash is not None and t.state != "skipped"} | pending
        nxt = next((c for c in space.configs if c.config_hash not in seen), None)
        return space.params(nxt) if nxt is not None else None
