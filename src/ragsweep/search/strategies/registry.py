"""The search strategies by name, from ``config/search.py``'s ``STRATEGIES`` (where a strategy is declared: its
module, imported here on first use, and its capabilities)."""

from __future__ import annotations

from ragsweep.config.search import STRATEGIES
from ragsweep.search.strategies.base import Strategy


def strategy_class(name: str) -> type[Strategy]:
    """The strategy class ``name`` declares (``search.strategy``; auto is resolved before)."""
    return STRATEGIES[name].load()
