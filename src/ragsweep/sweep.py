"""Run (or resume) a sweep: plan its units, have an executor run them, score, judge, write the run directory.

Work is shared along the grid (``pipelines.plan``): each splitter runs once per corpus, each
(splitter, embedding) pair is embedded and indexed once, each index is queried once per question
at the largest top_k, each distinct (answer, reference) pair is BERTScored once. Every
(configuration, question) result is journaled as it completes, so an interrupted sweep resumes
where it stopped; one process at a time writes a run directory and a cache (``pipelines.lock``).
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsweep.cache_dir import DEFAULT_CACHE, CacheDir
from ragsweep.config import SweepSpec
from ragsweep.datasets.types import Dataset
from ragsweep.errors import RagsweepError
from ragsweep.heap import give_back
from ragsweep.pipelines.journal import Journal
from ragsweep.pipelines.stats import SweepStats, Timer


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
    with writer_locks(spec, run_dir, cache.root, request.console):
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
    from ragsweep.evaluation.split import question_split
    from ragsweep.executors import open_executor
    from ragsweep.llm.clients import llms_in_use
    from ragsweep.pipelines.grid import expand
    from ragsweep.pipelines.outputs.manifest import write_started
    from ragsweep.pipelines.outputs.write import write_outputs
    from ragsweep.pipelines.preflight import preflight, secret_values
    from ragsweep.pipelines.progress import Progress
    from ragsweep.pipelines.stages import score
    from ragsweep.pipelines.stages.export import export_models
    from ragsweep.pipelines.stages.judge import judge_keys

    spec, console, stats = request.spec, request.console, SweepStats()
    with Timer(stats, "load_dataset"):
        dataset = request.dataset
        if dataset is None:
            from ragsweep.datasets.load import load_dataset

            dataset = load_dataset(spec.dataset, report_dir=run_dir)
    questions = dataset.questions[: request.limit] if request.limit else list(dataset.questions)
    if console is not None:
        console.print(f"dataset {dataset.name}: {len(dataset.documents)} documents, {len(questions)} questions "
                      f"(fingerprint {dataset.fingerprint()})")
        for note in dataset.notes:
            console.print(f"  note: {note}")
    configs = expand(spec)
    scorer_key = preflight(spec, configs, request.budget)
    journal = Journal(run_dir / "journal.sqlite", secrets=secret_values(spec, configs))
    error: RagsweepError | None = None
    bars = Progress(enabled=request.progress, console=console)
    clients = None
    stage2_info: dict | None = None
    search_info: dict | None = None
    stack = ExitStack()
    try:
        check_dataset(journal, run_dir, dataset)
        run_id = _run_id(journal)
        stats.invocation = _next_invocation(journal)
        if llms_in_use(spec):
            from ragsweep.llm.clients import LLMClients

            clients = LLMClients(spec, cache.llm_calls, run_id=run_id, budget_usd=request.budget)
        split = question_split(spec, dataset)
        if spec.adaptive:  # its labels and classifiers, before any work (one error line)
            from ragsweep.pipelines.stages.adaptive import check_classifiers

            check_classifiers(spec, dataset)
        searching = spec.search.searching
        plan = _plan(spec, configs, questions, journal)
        stats.skipped_done = 0 if searching else sum(len(questions) for _ in configs) - plan.total
        unscored_before = None if plan.total else score.unscored(journal, questions, configs, scorer_key)
        has_work = bool(plan.total or unscored_before)
        # Ray is joined (and checked) before the run is marked as started, and only when there is work
        kind = spec.executor if has_work else "local"
        executor = stack.enter_context(open_executor(kind, spec, configs, cache, console))
        stats.executor = executor.describe()
        if kind == "local":  # the ONNX exports first, while this process is small
            export_models(spec, cache.root, plan, scoring=has_work)
        write_started(spec, dataset, questions, configs, run_dir, request.limit, cache.root, scorer_key, split,
                      judge_keys(spec) if spec.stage2 is not None else None)
        with bars:
            ctx = _driver_context(spec, dataset, cache, stats, bars, clients, configs)
            if searching:  # trials come one by one: what one retrieved serves the next (top_k, postprocessor)
                ctx.retrievers_memo = {}
            stack.callback(_release, ctx)

            def stage1(chosen: list, asked: list, retry: bool = True) -> RagsweepError | None:
                """Answer and score ``chosen`` on ``asked``: what the journal lacks (a search's trials); ``retry``
                False leaves the failed answers failed (a race's later looks: tried once per invocation)."""
                part = _plan(spec, chosen, asked, journal, retry)
                failed = None
                with bars.scope():
                    if part.total:
                        failed = executor.answer(part, ctx, journal, bars.add("answering", part.total),
                                                 clients=clients)
                    if failed is None:
                        executor.score(ctx, asked, score.unscored(journal, asked, chosen, scorer_key), journal,
                                       scorer_key)
                return failed

            judged = configs
            if searching:
                from ragsweep.search.run import search

                with Timer(stats, "search"):
                    found = search(spec, configs, questions, split, run_dir, journal, scorer_key, stage1, bars,
                                   cached=_cached_chunks(configs, cache, dataset))
                error, search_info, judged = found.error, found.record, found.finalists
                configs = found.evaluated
                ctx.retrievers_memo = None  # its results and the rerankers they hold go back
            elif plan.total:
                error = executor.answer(plan, ctx, journal, bars.add("answering", plan.total), clients=clients)
            ctx.models.release(stats)  # answered: the embedding models' memory goes back before BERTScore
            ctx.rerankers.release()
            give_back()
            with Timer(stats, "scoring"):
                try:
                    todo = unscored_before if unscored_before is not None else score.unscored(
                        journal, questions, configs, scorer_key)
                    executor.score(ctx, questions, todo, journal, scorer_key)
                except RagsweepError as exc:  # answers are kept and written; the scores are missing
                    error = error or exc
            stack.close()  # Ray, a Chroma server it needed, the embedding cache: not needed for judging
            give_back()  # the BERTScore encoder's, before the outputs are built
            if spec.stage2 is not None and error is None:
                from ragsweep.pipelines.stages.judge import run_stage2

                with Timer(stats, "stage2"):
                    stage2_info, error = run_stage2(spec, dataset, questions, judged, journal, clients, stats, bars,
                                                    split, scorer_key)
        if spec.stage2 is not None and stage2_info is None:  # stage 2 did not run now: keep what it did before
            stage2_info = {"judge_keys": judge_keys(spec), "selected": [], "skipped": "stage 1 did not finish"}
        if error is not None:
            from ragsweep.llm.budget import BudgetExhausted

            stats.stopped = "budget" if isinstance(error, BudgetExhausted) else "error"
        if clients is not None:
            stats.llm = clients.counters()
            stats.llm["spending"] = _spending(cache, run_id)
        stats.timings["total"] = time.perf_counter() - t_start
        write_outputs(spec, dataset, questions, configs, journal, run_dir, stats, request.limit, console, cache.root,
                      scorer_key, split=split, stage2=stage2_info, search=search_info)
    finally:
        stack.close()
        if clients is not None:
            clients.close()
        journal.close()
    if error is not None:
        raise error
    return run_dir


def _cached_chunks(configs, cache: CacheDir, dataset) -> set:
    """The splitters whose chunks the cache holds, as the search's cost units (``search.cost.shared_units``)."""
    from ragsweep.pipelines.stages.chunk import cached_chunks_path

    first = {c.chunk_key: c for c in reversed(configs)}
    return {("chunk", key) for key, c in first.items() if cached_chunks_path(cache, c, dataset).is_file()}


def _plan(spec, configs, questions, journal, retry: bool = True):
    """The units still pending for ``configs`` on ``questions`` (the journal's answers are not redone; nor its
    failed ones, unless ``retry``; nor, ever, those that failed for good: ``Journal.permanent``)."""
    from ragsweep.pipelines.plan import SweepPlan

    done = (journal.done() | journal.permanent()) if retry else journal.attempted()
    pending = {c.config_hash: [q for q in questions if (c.config_hash, q.qid) not in done] for c in configs}
    return SweepPlan.build(configs, pending, generate=spec.generator.kind == "llm", judge=spec.stage2 is not None)


def _driver_context(spec, dataset, cache: CacheDir, stats, bars, clients, configs):
    """The stage context of this process: the SQLite embedding cache, the run's LLM and Neo4j connection."""
    from ragsweep.pipelines.context import Models, StageContext
    from ragsweep.pipelines.stages.graph import neo4j_connection

    def embedding_cache():  # imported (with numpy) only when a vector is needed
        from ragsweep.embeddings.cache import EmbeddingCache

        return EmbeddingCache(cache.embeddings)

    llm = clients.get(spec.llm) if clients is not None and spec.llm is not None else None
    return StageContext(spec=spec, dataset=dataset, cache=cache,
                        models=Models(embedding_cache, cache.root),
                        stats=stats, bars=bars, llm=llm, llm_for=clients.get if clients is not None else None,
                        neo4j=neo4j_connection(spec, configs))


def _release(ctx) -> None:
    """Count what the run's models computed; close the embedding cache and the Neo4j connection."""
    ctx.models.count_into(ctx.stats)
    ctx.models.close()
    if ctx.neo4j is not None:
        ctx.neo4j.close()


def _run_id(journal: Journal) -> str:
    """A random id of this run directory, tagging the LLM calls it paid for (in the shared cache)."""
    import uuid

    rid = journal.meta("run_id")
    if rid is None:
        rid = uuid.uuid4().hex
        journal.set_meta("run_id", rid)
    return rid


def _next_invocation(journal: Journal) -> int:
    """This invocation's number in the run directory (timed figures carry it, so mixing is visible)."""
    n = int(journal.meta("invocations") or 0) + 1
    journal.set_meta("invocations", str(n))
    return n


def _spending(cache: CacheDir, run_id: str) -> list[dict]:
    from ragsweep.llm.cache import LLMCallCache

    db = LLMCallCache(cache.llm_calls)
    try:
        return db.spending(run_id)
    finally:
        db.close()


def check_dataset(journal: Journal, run_dir: Path, dataset: Dataset) -> None:
    """Refuse to mix results of different datasets in one run directory (checked in the journal,
    which exists from the first answer on, so a killed first run is covered too)."""
    fp = dataset.fingerprint()
    old = journal.meta("dataset_fingerprint")
    if old is None:
        journal.set_meta("dataset_fingerprint", fp)
    elif old != fp:
        raise RagsweepError(
            f"{run_dir}: holds a run over another dataset (fingerprint {old}, now {fp}); "
            "pass --fresh to start over or change the spec's name"
        )

