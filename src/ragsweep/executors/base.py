"""What an executor is (BEIR's ``BaseSearch`` is the model: a contract of a few lines).

``ragsweep.driver`` drives a run through this protocol alone: it hands the executor a ``PlanRun`` (the plan,
the units to run, the invocation's state) and the executor runs every unit, in an order their needs allow. The
splitter's units (chunk, index, queries, graph, answer) it runs its way (in this process, or as Ray tasks); the
run stages after them (``plan.RUN_STAGES``) through ``plan_run.run_stages``, here, in plan order, so a new one
needs no executor change.
"""

from __future__ import annotations

from typing import Protocol

from ragsweep.pipelines.plan_run import PlanRun


class Executor(Protocol):
    kind: str

    def describe(self) -> dict:
        """What the manifest records about it (``{"kind": "local"}``; a Ray cluster's address, CPUs, GPUs)."""
        ...

    def run(self, run: PlanRun) -> None:
        """Run ``run.units`` into the journal; ``run.error`` is the error that stopped them (a budget, a refused
        key, a lost cluster), None when they ran to the end."""
        ...
