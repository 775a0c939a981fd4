"""The local executor: the plan's units, one after another, in this process (``executors.inprocess``).

Splitter by splitter, in plan order: chunk, then each embedding's index and (once per model) the
question vectors, the answers that need no graph, then the knowledge graphs and their answers; then the
run stages (``plan.RUN_STAGES``: baselines, LLM answers, score, judge). A unit that fails records its
configurations' questions as failed with its reason and the sweep goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ragsweep.errors import RagsweepError
from ragsweep.executors.inprocess import InProcess
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.plan import SPLITTER_STAGES, SweepPlan
from ragsweep.pipelines.plan_run import PlanRun, run_stages
from ragsweep.pipelines.stages import generate


@contextmanager
def open_local(spec, configs, cache, console=None) -> Iterator[LocalExecutor]:
    """The local executor (nothing to start or stop)."""
    yield LocalExecutor()


class LocalExecutor:
    """Runs a ``SweepPlan`` in this process."""

    kind = "local"

    def describe(self) -> dict:
        return {"kind": "local"}

    def run(self, run: PlanRun) -> None:
        """Every unit of ``run``, in plan order; ``run.error`` is what stopped it (a budget, a refused key)."""
        answer_here(run)
        run_stages(run)


def answer_here(run: PlanRun, plan: SweepPlan | None = None, ctx: StageContext | None = None) -> None:
    """The splitter units of ``run`` (or of ``plan``: the part of them the Ray executor keeps on the driver, with
    its ``ctx``: the served Chroma, the workers' tracing) in this process, their LLM answers left in
    ``run.retrieved``; a stop is kept in ``run.error``."""
    ctx = ctx or run.st.ctx
    units = run.splitter_units if plan is None else plan.units(SPLITTER_STAGES)
    plan = plan or run.plan
    if run.error is not None or not units:
        return
    try:
        if ctx.llm is not None:
            generate.prefetch_rewrites(
                [c for g in plan.groups.values() for c in g.configs], plan.pending, ctx.llm, ctx.stats
            )
        InProcess(plan, ctx, run.st.journal, run.bar, run.retrieved).run(units)
    except RagsweepError as exc:  # a budget, a refused key, a lost cluster: the stage stops, the rest is kept
        run.error = exc
    finally:
        run.st.journal.flush()
