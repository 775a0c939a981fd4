"""Run (or resume) a sweep: plan its units, have an executor run them, score, judge, write the run directory.

Work is shared along the grid (``pipelines.plan``): each splitter runs once per corpus, each
(splitter, embedding) pair is embedded and indexed once, each index is queried once per question
at the largest top_k, each distinct (answer, reference) pair is BERTScored once. Every
(configuration, question) result is journaled as it completes, so an interrupted sweep resumes
where it stopped; one process at a time writes a run directory and a cache (``pipelines.lock``).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsweep import tracing
from ragsweep.cache_dir import DEFAULT_CACHE, CacheDir
from ragsweep.config import SweepSpec
from ragsweep.datasets.types import Dataset
from ragsweep.errors import RagsweepError
from ragsweep.heap import run_scope
from ragsweep.pipelines.journal import Journal
from ragsweep.pipelines.journal_meta import check_dataset, next_invocation, run_id
from ragsweep.pipelines.run_state import RunState
from ragsweep.pipelines.stats import SweepStats, Timer
from ragsweep.run_dir import RunDir

if TYPE_CHECKING:
    from ragsweep.executors.base import Executor


@dataclass(frozen=True)
class SweepRequest:
    """What to run: the spec, and where and how.

    ``run_dir`` defaults to ``output_dir/name``, ``cache_dir`` to the spec's (else ``.ragsweep/cache``);
    ``fresh`` empties the run directory first; ``limit`` answers only the first questions;
    ``dataset`` skips loading the spec's; ``budget`` (USD) bounds this invocation's LLM spending: the
    run stops cleanly before passing it, keeping what is done; ``console`` (rich) gets the table."""

    spec: SweepSpec
    run_dir: Path | None = None
    cache_dir: Path | None = None
    fresh: bool = False
    limit: int | None = None
    progress: bool = True
    console: Any = None
    dataset: Dataset | None = None
    budget: float | None = None


def run_sweep(request: SweepRequest) -> Path:
    """Run (or resume) ``request.spec``; return the run directory holding manifest, records and summary.

    Stage 1 answers every (configuration, question) and scores it (BERTScore, retrieval metrics);
    stage 2, when the spec has one, runs the LLM judges on the configurations stage 1 selects on
    the validation questions, over the test questions.
    """
    from ragsweep.pipelines.lock import writer_locks

    if not isinstance(request, SweepRequest):
        raise TypeError("run_sweep takes a SweepRequest, e.g. run_sweep(SweepRequest(spec))")
    t_start = time.perf_counter()
    spec = request.spec
    run_dir = Path(request.run_dir or spec.default_run_dir())
    cache = CacheDir(Path(request.cache_dir or spec.cache_dir or DEFAULT_CACHE))
    with writer_locks(spec, run_dir, cache.root, request.console), run_scope():
        if request.fresh:
            _clear_run_dir(run_dir)
        return _run(request, run_dir, cache, t_start)


def _clear_run_dir(run_dir: Path) -> None:
    """``--fresh``: remove what the run directory holds, but not the lock this process holds on it."""
    import shutil

    from ragsweep.pipelines.lock import LOCK_NAME

    for child in run_dir.iterdir() if run_dir.is_dir() else ():
        if child.name == LOCK_NAME:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def _run(request: SweepRequest, run_dir: Path, cache: CacheDir, t_start: float) -> Path:
    """The driver: open the run, start it, stage 1 (answer and score, or a search), stage 2, the outputs."""
    state = _open(request, run_dir, cache, t_start)
    stop_tracing = tracing.start(request.spec.tracing, request.spec.name, session=run_dir.name)  # off: no import
    try:
        executor = _start(state)
        with state.bars:
            _stages(state, executor)
        _finish(state)
    finally:
        state.close()
        stop_tracing()
    _track(request.spec, run_dir, request.console)
    if state.error is not None:
        raise state.error
    return run_dir


def _track(spec: SweepSpec, run_dir: Path, console) -> None:
    """Log the finished run to the spec's tracker; a tracker that fails is a warning (the run itself is done)."""
    if not spec.tracking.mlflow:
        return
    from rich.console import Console

    from ragsweep.tracking.mlflow_log import track_run

    console = console or Console(stderr=True)
    try:
        line = track_run(run_dir, spec.tracking.mlflow, spec.tracking.experiment).line()
        console.print(line, highlight=False, soft_wrap=True)
    except RagsweepError as exc:
        console.print(
            f"warning: {exc}; the run is complete: log it later with ragsweep track {run_dir} --mlflow URI",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _open(request: SweepRequest, run_dir: Path, cache: CacheDir, t_start: float) -> RunState:
    """The dataset (loaded unless given), its questions, the configurations, the preflight checks, the journal."""
    from ragsweep.config import backend_default
    from ragsweep.evaluation import default_metric
    from ragsweep.pipelines.grid import expand
    from ragsweep.pipelines.outputs.manifest import read_previous
    from ragsweep.pipelines.preflight import context_notes, preflight, secret_values
    from ragsweep.pipelines.progress import Progress

    spec, console, stats = request.spec, request.console, SweepStats()
    with Timer(stats, "load_dataset"):
        dataset = request.dataset
        if dataset is None:
            from ragsweep.datasets.load import load_dataset

            dataset = load_dataset(spec.dataset, report_dir=run_dir, kept_in=cache.datasets)
    questions = dataset.questions[: request.limit] if request.limit else list(dataset.questions)
    # an existing run directory keeps the backend its unset ones had (``config.backend_default``)
    written, pin_note = backend_default.pinned_spec(request.spec, read_previous(run_dir), str(run_dir))
    metric, metric_why = default_metric.for_run(written, dataset)  # scoring.metric, or the data's (unset)
    spec = default_metric.resolved(written, metric)
    if console is not None:
        console.print(
            f"dataset {dataset.name}: {len(dataset.documents)} documents, {len(questions)} questions "
            f"(fingerprint {dataset.fingerprint()})"
        )
        for note in dataset.notes:
            console.print(f"  note: {note}")
        for line in ([f"  note: {pin_note}"] if pin_note else []) + [backend_default.line(spec)]:
            console.print(line, markup=False)
    configs = expand(written)  # the spec as written: a configuration's hash never depends on the dataset
    scorer_key = preflight(spec, configs, request.budget, str(cache.server_facts))
    for note in context_notes(spec, str(cache.server_facts)) if console is not None else []:
        console.print(f"  note: {note}", markup=False)
    journal = Journal(RunDir(run_dir).journal, secrets=secret_values(spec, configs))
    return RunState(
        spec=spec,
        run_dir=run_dir,
        cache=cache,
        t_start=t_start,
        stats=stats,
        dataset=dataset,
        questions=questions,
        configs=configs,
        scorer_key=scorer_key,
        journal=journal,
        bars=Progress(enabled=request.progress, console=console),
        limit=request.limit,
        budget=request.budget,
        console=console,
        metric_why=metric_why,
    )


def _start(st: RunState) -> Executor:
    """Check the journal's dataset, count the invocation, open the LLM clients, plan what is pending, open the
    executor (Ray only when there is work), export ONNX models, and mark the run as started."""
    from ragsweep.embeddings.onnx_export import failures_remembered
    from ragsweep.evaluation.split import question_split
    from ragsweep.executors import open_executor
    from ragsweep.llm.clients import llms_in_use
    from ragsweep.pipelines.outputs.manifest import write_started
    from ragsweep.pipelines.stages import score
    from ragsweep.pipelines.stages.export import export_models
    from ragsweep.pipelines.stages.judge import judge_keys

    spec, journal, questions = st.spec, st.journal, st.questions
    check_dataset(journal, st.run_dir, st.dataset)
    st.run_id = run_id(journal)
    st.stats.invocation = next_invocation(journal)
    if llms_in_use(spec):
        from ragsweep.llm.clients import LLMClients

        st.clients = LLMClients(spec, st.cache.llm_calls, run_id=st.run_id, budget_usd=st.budget)
    st.split = question_split(spec, st.dataset)
    if spec.adaptive:  # its labels and classifiers, before any work (one error line)
        from ragsweep.pipelines.stages.adaptive import check_classifiers

        check_classifiers(spec, st.dataset)
    st.plan = _plan(st, st.configs, questions)
    st.stats.skipped_done = 0 if spec.search.searching else sum(len(questions) for _ in st.configs) - st.plan.total
    st.unscored_before = None if st.plan.total else score.unscored(journal, questions, st.configs, st.scorer_key)
    has_work = bool(st.plan.total or st.unscored_before)
    # Ray is joined (and checked) before the run is marked as started, and only when there is work
    kind = spec.executor if has_work else "local"
    executor = st.stack.enter_context(open_executor(kind, spec, st.configs, st.cache, st.console))
    st.stats.executor = executor.describe()
    if kind == "local":  # the ONNX exports first, while this process is small
        st.stack.enter_context(failures_remembered())
        console = st.console
        say = (lambda line: console.print(line, markup=False)) if console is not None else None
        export_models(spec, st.cache.root, st.plan, scoring=has_work, say=say)
    write_started(st, judge_keys(spec) if spec.stage2 is not None else None)
    return executor


def _stages(st: RunState, executor: Executor) -> None:
    """Every unit of the plan through the executor: answer, score, judge (``plan.units``). A search runs its
    trials (each a plan of its own) first; then the score unit scores what a stopped trial left, and the judge
    unit judges the finalists. Ray, a Chroma server and the embedding cache go back before the outputs."""
    from ragsweep.pipelines.plan import SweepPlan
    from ragsweep.pipelines.plan_run import PlanRun

    st.ctx = _driver_context(st)
    st.stack.callback(_release, st.ctx)
    st.judged = st.configs
    plan = st.plan
    if st.spec.search.searching:
        _search(st, executor)
        plan = SweepPlan.build(st.configs, {c.config_hash: [] for c in st.configs}, judge=plan.judge)
    bar = st.bars.add("answering", plan.total) if plan.total else None
    run = PlanRun(st, plan, st.questions, bar, error=st.error)
    executor.run(run)
    st.error = run.error
    run.free("executor")  # (once: a judge unit gave them back already) the BERTScore encoder's memory too


def _search(st: RunState, executor: Executor) -> None:
    """A search over the grid: its trials answer and score what the journal lacks, one by one."""
    from ragsweep.search.run import search

    st.ctx.retrievers_memo = {}  # trials come one by one: what one retrieved serves the next (top_k, postprocessor)
    with Timer(st.stats, "search"):
        found = search(
            st, functools.partial(_answer_and_score, st, executor), _cached_chunks(st.configs, st.cache, st.dataset)
        )
    st.error, st.search_info, st.judged = found.error, found.record, found.finalists
    st.configs = found.evaluated
    st.ctx.retrievers_memo = None  # its results and the rerankers they hold go back


def _answer_and_score(
    st: RunState, executor: Executor, chosen: list, asked: list, retry: bool = True
) -> RagsweepError | None:
    """Answer and score ``chosen`` on ``asked``: what the journal lacks (a search's trial, a plan with no judge
    unit); ``retry`` False leaves the failed answers failed (a race's later looks: tried once per invocation)."""
    from ragsweep.pipelines.plan_run import PlanRun

    part = _plan(st, chosen, asked, retry, judge=False)
    with st.bars.scope():
        run = PlanRun(st, part, asked, st.bars.add("answering", part.total) if part.total else None, trial=True)
        executor.run(run)
    return run.error


def _finish(st: RunState) -> None:
    """How the run ended, its LLM counters and spending, its total time; then the outputs."""
    from ragsweep.pipelines.outputs.write import write_outputs
    from ragsweep.pipelines.stages.judge import judge_keys

    spec, stats = st.spec, st.stats
    if spec.stage2 is not None and st.stage2_info is None:  # stage 2 did not run now: keep what it did before
        st.stage2_info = {"judge_keys": judge_keys(spec), "selected": [], "skipped": "stage 1 did not finish"}
    if st.error is not None:
        from ragsweep.llm.budget import BudgetExhausted

        stats.stopped = "budget" if isinstance(st.error, BudgetExhausted) else "error"
    if st.clients is not None:
        stats.llm = st.clients.counters()
        stats.llm["spending"] = _spending(st.cache, st.run_id)
    stats.timings["total"] = time.perf_counter() - st.t_start
    write_outputs(st)


def _cached_chunks(configs, cache: CacheDir, dataset) -> set:
    """The splitters whose chunks the cache holds, as the search's cost units (``search.cost.shared_units``)."""
    from ragsweep.pipelines.stages.chunk import cached_chunks_path

    first = {c.chunk_key: c for c in reversed(configs)}
    return {("chunk", key) for key, c in first.items() if cached_chunks_path(cache, c, dataset).is_file()}


def _plan(st: RunState, configs: list, questions: list, retry: bool = True, judge: bool = True):
    """The units still pending for ``configs`` on ``questions`` (the journal's answers are not redone; nor its
    failed ones, unless ``retry``; nor, ever, those that failed for good: ``Journal.permanent``); ``judge``
    False: no judge unit (a search's trial)."""
    from ragsweep.pipelines.plan import SweepPlan

    done = (st.journal.done() | st.journal.permanent()) if retry else st.journal.attempted()
    pending = {c.config_hash: [q for q in questions if (c.config_hash, q.qid) not in done] for c in configs}
    spec = st.spec
    return SweepPlan.build(configs, pending, generate=spec.generator.calls_llm, judge=judge and spec.stage2 is not None)


def _driver_context(st: RunState):
    """The stage context of this process: the SQLite embedding cache, the run's LLM and Neo4j connection."""
    from ragsweep.pipelines.context import Models, StageContext
    from ragsweep.pipelines.stages.graph import neo4j_connection

    spec, cache, clients = st.spec, st.cache, st.clients

    def embedding_cache():  # imported (with numpy) only when a vector is needed
        from ragsweep.embeddings.cache import EmbeddingCache

        return EmbeddingCache(cache.embeddings)

    llm = clients.get(spec.llm) if clients is not None and spec.llm is not None else None
    return StageContext(
        spec=spec,
        dataset=st.dataset,
        cache=cache,
        models=Models(embedding_cache, cache.root),
        stats=st.stats,
        bars=st.bars,
        llm=llm,
        llm_for=clients.get if clients is not None else None,
        neo4j=neo4j_connection(spec, st.configs),
    )


def _release(ctx) -> None:
    """Count what the run's models computed; close the embedding cache and the Neo4j connection."""
    ctx.models.count_into(ctx.stats)
    ctx.models.close()
    if ctx.neo4j is not None:
        ctx.neo4j.close()


def _spending(cache: CacheDir, run_id: str) -> list[dict]:
    from ragsweep.llm.cache import LLMCallCache

    db = LLMCallCache(cache.llm_calls)
    try:
        return db.spending(run_id)
    finally:
        db.close()
