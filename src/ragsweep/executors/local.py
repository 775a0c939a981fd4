"""The local executor: the plan's units, one after another, in this process (``executors.inprocess``).

Splitter by splitter, in plan order: chunk, then each embedding's index and (once per model) the
question vectors, the answers that need no graph, then the knowledge graphs and their answers; LLM
answers are generated after every splitter is done. A unit that fails records its configurations'
questions as failed with its reason and the sweep goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ragsweep.errors import ClusterLost, RagsweepError
from ragsweep.executors.inprocess import InProcess
from ragsweep.pipelines.answer_record import AnswerSink, Retrieved
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.plan import ANSWERING, SweepPlan
from ragsweep.pipelines.stages import generate, score


@contextmanager
def open_local(spec, configs, cache, console=None) -> Iterator[LocalExecutor]:
    """The local executor (nothing to start or stop)."""
    yield LocalExecutor()


class LocalExecutor:
    """Runs a ``SweepPlan`` in this process."""

    kind = "local"

    def describe(self) -> dict:
        return {"kind": "local"}

    def answer(self, plan: SweepPlan, ctx: StageContext, sink, bar, clients=None) -> RagsweepError | None:
        """Run the plan's units up to the answers (chunk, index, queries, answer, graph, generate); returns the
        error that stopped the stage (budget, refused key, lost cluster)."""
        return answer_here(plan, ctx, sink, bar, clients, [])

    def score(self, ctx: StageContext, questions, todo: list, journal, scorer_key: str) -> None:
        """The score unit: BERTScore the answers ``todo`` lists (``stages.score.unscored``), in this process."""
        score.score_answers(ctx, questions, todo, journal, scorer_key)


def answer_here(
    plan: SweepPlan, ctx: StageContext, sink: AnswerSink, bar, clients, gen_items: list[Retrieved]
) -> RagsweepError | None:
    """``LocalExecutor.answer``, generating ``gen_items`` (answers retrieved elsewhere: the Ray executor's
    workers) with the plan's own."""
    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError

    try:
        if ctx.llm is not None:
            generate.prefetch_rewrites(
                [c for g in plan.groups.values() for c in g.configs], plan.pending, ctx.llm, ctx.stats
            )
        return InProcess(plan, ctx, sink, bar, gen_items, clients).run(plan.units(ANSWERING)).error
    except (BudgetExhausted, LLMFatalError, ClusterLost) as exc:
        return exc
    finally:
        sink.flush()
