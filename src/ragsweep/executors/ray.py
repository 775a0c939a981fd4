"""The Ray executor: the plan's units as Ray tasks, driven from the ``ragsweep run`` process.

The plan's units (``SweepPlan.units()``) become tasks as soon as their needs are finished
(``ray_dispatch``): a chunk task per splitter (unless its chunks are cached), an index task per
(splitter, embedding), a queries task per model, a graph task per splitter, and answer tasks over
slices of the questions, each running all the unit's configurations so that every index is still
searched once per question. Splitters proceed independently, so one splitter's questions are
answered while another is embedded. Tasks run ``ray_tasks``, which call the same stages the local
executor calls.

The driver keeps the journal (it writes every row as its task finishes: a killed sweep resumes
like a local one), every cache, and every LLM call: configurations that call an LLM while
retrieving (fusion query rewrites, LLM graph extraction) run on the driver, and LLM-written
answers are generated there from the sources the workers retrieved. One process holds the run's
rate limiter and budget, so they bound the whole cluster by construction.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

from ragsweep import tracing
from ragsweep.errors import ClusterLost, RagsweepError, short_reason
from ragsweep.executors.ray_dispatch import Dispatch, task_cause
from ragsweep.pipelines.plan import SweepPlan, Unit
from ragsweep.pipelines.plan_run import PlanRun, run_stages
from ragsweep.pipelines.stages import answer, chunk


@contextmanager
def open_ray(spec, configs, cache, console=None) -> Iterator[RayExecutor]:
    """Ray joined (``ray.address``) or started here, checked against the spec (``cluster.ray_session``), until exit."""
    from ragsweep.executors.cluster import ray_session

    with ray_session(spec, configs, cache, console) as session:
        yield RayExecutor(session)


def on_driver(config) -> bool:
    """Configurations whose retrieval calls an LLM (``rewrite_llm``) stay with the run's LLM client;
    tuned fusion weights and abstention thresholds are chosen once, on the run's validation questions, here."""
    from ragsweep.pipelines.stages.abstain import tunes_abstention

    return (
        config.rewrite_llm is not None
        or getattr(config.retriever, "tuned", False)
        or tunes_abstention(config)
        or config.adaptive is not None
    )  # an adaptive configuration's classifier is trained once, here


class RayExecutor:
    """Runs a ``SweepPlan`` on the Ray cluster of a ``cluster.RaySession``; what needs the run's LLM while
    retrieving, and LLM generation, runs here with the local executor."""

    kind = "ray"

    def __init__(self, session) -> None:
        self.session = session
        self.lost = False  # the cluster stopped answering: what is left runs here

    def describe(self) -> dict:
        return self.session.cluster.describe()

    def run(self, run: PlanRun) -> None:
        """The splitter units as Ray tasks, but for what must run here (``on_driver``); then the run stages here,
        the score unit's blocks as Ray tasks. ``run.error``: what stopped it (a budget, a refused key, a lost
        cluster)."""
        if run.splitter_units:
            self._answer(run)
        run_stages(run, own={"score": self._score})

    def _answer(self, run: PlanRun) -> None:
        from dataclasses import replace

        from ragsweep.executors.cluster import with_absolute_models
        from ragsweep.executors.local import answer_here

        plan, sink = run.plan, run.st.journal
        # an embedded Chroma is served: the driver uses it too; the workers send spans where the driver does
        ctx = replace(run.st.ctx, spec=tracing.for_workers(self.session.worker_spec))
        try:
            failed = self._llm_contexts(plan, ctx, sink, run.bar)
        except RagsweepError as exc:  # the budget ran out, or the endpoint refused the key
            sink.flush()
            run.error = exc
            return
        configs = [c for g in plan.groups.values() for c in g.configs if g.chunk_key not in failed]
        remote = plan.only([with_absolute_models(c) for c in configs if not on_driver(c)])
        if remote.groups:
            try:
                Dispatch(remote, ctx, sink, run.bar, run.retrieved, self.session.cluster).run()
            except ClusterLost as exc:
                sink.flush()
                self.lost = True
                run.error = exc
                return
        # the driver's part: what must run here (the reference baselines have a run stage of their own)
        answer_here(run, plan.only([c for c in configs if on_driver(c)]), ctx)

    @staticmethod
    def _llm_contexts(plan: SweepPlan, ctx, sink, bar) -> set[str]:
        """Chunk here the splitters whose contexts an LLM writes (every LLM call stays on the driver); the
        chunk tasks then find them cached. A splitter that fails here fails all its configurations, those
        answered on the workers and here alike (its calls are not sent twice); returns their group keys."""
        from ragsweep.config import uses_llm
        from ragsweep.llm.budget import BudgetExhausted
        from ragsweep.llm.engine import LLMFatalError

        failed = set()
        for key, g in plan.groups.items():
            first = g.configs[0]
            if uses_llm(first.splitter.context) and chunk.cached_chunks(ctx, first) is None:
                try:
                    chunk.chunk(ctx, first)
                except (BudgetExhausted, LLMFatalError):
                    raise
                except Exception as exc:  # noqa: BLE001 - one splitter failing must not lose the others
                    answer.record_failures(
                        g.configs, plan.pending, sink, ctx.stats, bar, f"chunking failed: {short_reason(exc)}"
                    )
                    failed.add(key)
        return failed

    def _score(self, run: PlanRun, unit: Unit) -> None:
        """The score unit as Ray tasks: blocks of uncached pairs scored on the workers (each loads the
        BERTScore encoder once), stored by the driver as each block returns. After a lost cluster the
        journaled answers are scored here instead."""
        from ragsweep.pipelines.stages import score

        if self.lost:
            return score.run_unit(run, unit)
        st, todo = run.st, score.todo_of(run)
        block = max(64, min(2048, math.ceil(len(todo) / (4 * self.session.cluster.cpus)))) if todo else 2048
        blocks = score.Blocks(self._run_blocks(st.ctx), block)
        score.score_answers(st.ctx, run.questions, todo, st.journal, st.scorer_key, blocks)

    def _run_blocks(self, ctx):
        import ray

        from ragsweep.executors import ray_tasks
        from ragsweep.executors.cluster import with_absolute_model

        remote = ray.remote(num_cpus=1, num_gpus=1 if self.session.cluster.gpus else 0, max_retries=1)(
            ray_tasks.score_task
        )
        bertscore = with_absolute_model(ctx.spec.scoring.bertscore)
        root = ctx.cache.root.resolve()

        def failed(exc: BaseException) -> RagsweepError:
            return RagsweepError(
                f"ray: scoring failed ({short_reason(task_cause(exc))}); the answers are journaled: "
                "run the same command again to score them"
            )

        def run(blocks):
            try:
                spec_ref = ray.put(bertscore)
                refs = {remote.remote(spec_ref, root, b): i for i, b in enumerate(blocks)}
            except Exception as exc:  # noqa: BLE001 - a cluster lost before the blocks went out
                raise failed(exc) from None
            while refs:
                try:
                    ready, _ = ray.wait(list(refs), num_returns=1)
                    scores = ray.get(ready[0])
                except Exception as exc:  # noqa: BLE001 - a lost cluster or a failing block stops scoring alike
                    raise failed(exc) from None
                yield refs.pop(ready[0]), scores

        return run
