"""One pass of an executor over a plan's units, and how the run stages (``plan.RUN_STAGES``) run in this process.

The driver makes a ``PlanRun`` for the invocation's plan (and the search one for each trial) and hands it to
``Executor.run``. The executor runs the splitter's units its way; the run stages after them all run here, in
plan order, through ``run_stages``: each by the function its declaration names, unless the executor has its
own way to run it. A unit that raises a ``RagsweepError`` (a budget, a refused key, a lost cluster) stops the
plan: what is journaled stays, and only the stages declared ``after_stop`` still run.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from ragsweep.components import load
from ragsweep.datasets.types import Question
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.answer_record import Retrieved
from ragsweep.pipelines.plan import SPLITTER_STAGES, SweepPlan, Unit
from ragsweep.pipelines.run_state import RunState
from ragsweep.pipelines.stats import Timer


@dataclass
class PlanRun:
    """What the units of one plan share: the invocation (``st``: journal, stage context, clients), the plan, the
    questions its score unit scores, the answering bar, the answers retrieved for the LLM to write
    (``generate``), and the error that stopped it.

    ``trial``: a search's trial. Its answering models stay for the next trial, a stop ends it (the search
    stops), and its time counts to the search's."""

    st: RunState
    plan: SweepPlan
    questions: list[Question]
    bar: Any = None
    trial: bool = False
    retrieved: list[Retrieved] = field(default_factory=list)
    error: RagsweepError | None = None

    def __post_init__(self) -> None:
        self.todo: list[Unit] = self.plan.units()

    @property
    def splitter_units(self) -> list[Unit]:
        return [u for u in self.todo if u.stage in SPLITTER_STAGES]

    @property
    def stage_units(self) -> list[Unit]:
        return [u for u in self.todo if u.stage not in SPLITTER_STAGES]

    def free(self, what: str) -> None:
        """Give memory back before a stage (``Stage.frees``): ``models``, what answering held (embedding models,
        rerankers, memos), kept by a trial for the next; ``executor``, Ray, a Chroma server and the embedding
        cache (the invocation's ``stack``; it closes once)."""
        from ragsweep.heap import give_back

        if what == "models" and not self.trial:
            from ragsweep.pipelines.memos import forget

            self.st.ctx.models.release(self.st.stats)  # answered: the embedding models' memory, before BERTScore
            self.st.ctx.rerankers.release()
            forget()  # chunk n-gram sets, sentences, flags: of no use to scoring
            give_back()
        elif what == "executor":
            self.st.stack.close()
            give_back()


def run_stages(run: PlanRun, own: dict[str, Callable[[PlanRun, Unit], None]] | None = None) -> None:
    """Run ``run``'s run-stage units in this process, in plan order: each by ``own[stage]`` (an executor's way to
    run it) or the function its declaration names. After a stop only ``after_stop`` stages run, and not in a
    search's trial."""
    for unit in run.stage_units:
        stage = run.plan.stage(unit.stage)
        if run.error is not None and (run.trial or not stage.after_stop):
            continue
        if stage.frees:
            run.free(stage.frees)
        fn = (own or {}).get(unit.stage) or (load(stage.runs) if isinstance(stage.runs, str) else stage.runs)
        try:
            with Timer(run.st.stats, stage.timing) if stage.timing and not run.trial else nullcontext():
                fn(run, unit)
        except RagsweepError as exc:  # what is journaled stays; later stages see the stop
            run.error = run.error or exc
        finally:
            run.st.journal.flush()
