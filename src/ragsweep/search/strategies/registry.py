"""The search strategies by name: adding one is a module and a line here (and its name in
``config/search.py``'s ``strategy``)."""

from __future__ import annotations

from ragsweep.search.strategies.greedy import GreedyStrategy
from ragsweep.search.strategies.grid import GridStrategy
from ragsweep.search.strategies.nsga2 import NSGA2Strategy
from ragsweep.search.strategies.random_search import RandomStrategy
from ragsweep.search.strategies.tpe import TPEStrategy

REGISTRY = {s.name: s for s in (GridStrategy, RandomStrategy, GreedyStrategy, TPEStrategy, NSGA2Strategy)}
