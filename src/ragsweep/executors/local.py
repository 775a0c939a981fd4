"""The local executor: the plan's units, one after another, in this process.

Splitter by splitter, in plan order: chunk, then each embedding's index and (once per model) the
question vectors, then the knowledge graphs, then the answers; LLM answers are generated after
every splitter is done. A unit that fails records its configurations' questions as failed with
its reason (``chunking failed: ...``, ``indexing failed: ...``) and the sweep goes on.
"""

from __future__ import annotations

from ragsweep.errors import ClusterLost, RagsweepError, short_reason
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.plan import Group, SweepPlan
from ragsweep.pipelines.stages import answer, chunk, generate, score


class LocalExecutor:
    """Runs a ``SweepPlan`` in this process."""

    kind = "local"

    def describe(self) -> dict:
        return {"kind": "local"}

    def answer(self, plan: SweepPlan, ctx: StageContext, sink, bar, clients=None) -> RagsweepError | None:
        """Run the chunk, index, queries, graph and answer units of every splitter, then the generate unit;
        returns the error that stopped the stage (budget, refused key, lost cluster)."""
        return self.answer_groups(plan, ctx, sink, bar, list(plan.groups.values()), clients, [])

    def answer_groups(self, plan: SweepPlan, ctx: StageContext, sink, bar, groups: list[Group], clients,
                      gen_items: list) -> RagsweepError | None:
        """``answer`` for the splitters ``groups`` only, generating ``gen_items`` (answers retrieved elsewhere:
        the Ray executor's workers) with their own."""
        from ragsweep.llm.budget import BudgetExhausted
        from ragsweep.llm.engine import LLMFatalError

        try:
            if ctx.llm is not None:
                generate.prefetch_rewrites([c for g in groups for c in g.configs], plan.pending, ctx.llm, ctx.stats)
            questions = {label: texts for label, (_, texts) in plan.query_embeddings(groups).items()}
            query_ms: dict[str, dict] = {}
            for g in groups:
                self._group(plan, ctx, g, questions, query_ms, sink, bar, gen_items)
            if gen_items:
                return generate.generate_all(ctx.spec, gen_items, sink, clients, ctx.stats, bar)
            return None
        except (BudgetExhausted, LLMFatalError, ClusterLost) as exc:
            return exc
        finally:
            sink.flush()

    def _group(self, plan: SweepPlan, ctx: StageContext, g: Group, questions, query_ms: dict, sink, bar,
               gen_items: list) -> None:
        """One splitter's units in plan order: chunk, then the answer unit with what it searches (index and
        queries per embedding, then graph)."""
        from ragsweep.llm.budget import BudgetExhausted
        from ragsweep.llm.engine import LLMFatalError

        try:
            chunks = chunk.chunk(ctx, g.splitter)
        except (BudgetExhausted, LLMFatalError):
            raise  # LLM-written chunk contexts: the stage stops, a later run goes on
        except Exception as exc:  # noqa: BLE001 - one splitter failing must not lose the others
            answer.record_failures(g.configs, plan.pending, sink, ctx.stats, bar,
                                   f"chunking failed: {short_reason(exc)}")
            return
        answer.answer_splitter(ctx, g.configs, chunks, plan.pending, sink, bar, gen_items, questions, query_ms)

    def score(self, ctx: StageContext, questions, todo: list, journal, scorer_key: str) -> None:
        """The score unit: BERTScore the answers ``todo`` lists (``stages.score.unscored``), in this process."""
        score.score_answers(ctx, questions, todo, journal, scorer_key)
