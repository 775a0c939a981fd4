"""What an executor is (BEIR's ``BaseSearch`` is the model: a contract of a few lines).

``ragsweep.driver`` drives a run through this protocol alone, so the local and the Ray executor take the same
calls with the same parameters: ``answer`` runs the plan's units up to the answers (chunk, index, queries,
graph, answer, then generate), ``score`` the score unit over the answers it is given.
"""

from __future__ import annotations

from typing import Any, Protocol

from ragsweep.errors import RagsweepError
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.plan import SweepPlan


class Executor(Protocol):
    kind: str

    def describe(self) -> dict:
        """What the manifest records about it (``{"kind": "local"}``; a Ray cluster's address, CPUs, GPUs)."""
        ...

    def answer(self, plan: SweepPlan, ctx: StageContext, sink, bar, clients: Any = None) -> RagsweepError | None:
        """Run ``plan``'s units up to every pending answer into ``sink`` (the journal); return the error that
        stopped the stage (a budget, a refused key, a lost cluster), None when it ran to the end."""
        ...

    def score(self, ctx: StageContext, questions: list, todo: list, journal, scorer_key: str) -> None:
        """The score unit: BERTScore the answers ``todo`` lists (``stages.score.unscored``) into ``journal``."""
        ...
