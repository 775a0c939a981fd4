"""The units a Ray worker runs: chunk a corpus, build an index or the graphs, embed questions, answer a slice.

Each task calls the very stage functions the local executor calls (``pipelines.stages``), so a
record made on a worker is the record a local run makes. Workers keep no state the driver does
not give them: no journal and no SQLite cache (SQLite's WAL mode needs every process on one host),
only a private scratch directory. The driver sends the chunks, the cached vectors and graphs a
task needs, and stores what the task computed.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragsweep import tracing
from ragsweep.cache_dir import CacheDir
from ragsweep.embeddings.cache import MemoryEmbeddingCache
from ragsweep.pipelines.answer_record import AnswerRecord, Retrieved
from ragsweep.pipelines.context import Models, StageContext
from ragsweep.pipelines.journal import MemorySink
from ragsweep.pipelines.stages import chunk, graph, index, queries
from ragsweep.pipelines.stats import SweepStats

_SCRATCH: list[Path] = []


def scratch() -> Path:
    """This worker process's private directory (chunk and graph files of its tasks), removed at exit."""
    if not _SCRATCH:
        path = Path(tempfile.mkdtemp(prefix="ragsweep-worker-"))
        atexit.register(shutil.rmtree, path, True)
        _SCRATCH.append(path)
    return _SCRATCH[0]


@dataclass
class TaskResult:
    """What a task hands back: journal rows, LLM generation items, vectors and graphs to store, counters."""

    rows: list[tuple[str, str, str, AnswerRecord]] = field(default_factory=list)
    gen_items: list[Retrieved] = field(default_factory=list)
    vectors: dict[str, list] = field(default_factory=dict)  # model key -> MemoryEmbeddingCache.new_items
    graph_files: dict[str, str] = field(default_factory=dict)  # graph key -> persisted SimplePropertyGraphStore
    graph_failures: dict[str, str] = field(default_factory=dict)  # retriever spec (JSON) -> why its graph failed
    chunks: list | None = None
    stats: SweepStats = field(default_factory=SweepStats)


def export_root(cache_root: Path) -> Path:
    """Where ONNX exports go: the sweep's cache directory when this node sees it (the driver's host, or
    shared storage), else one directory per node, shared by its workers (exports are written under a lock)."""
    return cache_root if cache_root.is_dir() else Path(tempfile.gettempdir()) / "ragsweep-exports"


def _scratch_cache(graph_files: dict[str, str] | None = None) -> CacheDir:
    """A CacheDir in the scratch directory holding the graphs the driver sent."""
    cache = CacheDir(scratch())
    for key, text in (graph_files or {}).items():
        path = cache.graph(key)
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
    return cache


def _context(spec, dataset, cache_root: Path, vectors=None, graph_files=None, configs=()) -> StageContext:
    """A task's stage context: in-memory caches the driver filled, no LLM, quiet progress."""
    models = Models(lambda: MemoryEmbeddingCache(vectors), export_root(cache_root))
    return StageContext(
        spec=spec,
        dataset=dataset,
        cache=_scratch_cache(graph_files),
        models=models,
        neo4j=graph.neo4j_connection(spec, list(configs)),
    )


def _result(ctx: StageContext, **kw) -> TaskResult:
    models: Any = ctx.models  # a Models
    models.count_into(ctx.stats)
    new = {k: v for k, v in models.cache.new_items.items() if v}
    if ctx.neo4j is not None:
        ctx.neo4j.close()
    return TaskResult(vectors=new, stats=ctx.stats, **kw)


def chunk_task(spec, dataset, config, cache_root: Path) -> TaskResult:
    """The chunk unit (semantic chunking embeds on the worker)."""
    ctx = _context(spec, dataset, cache_root)
    chunks = chunk.chunk(ctx, config)
    return _result(ctx, chunks=chunks)


def index_task(spec, dataset, config, chunks, vectors, cache_root: Path) -> TaskResult:
    """The index unit of (splitter, embedding): build (or find) its Chroma collection."""
    from ragsweep.retrievers.chroma import client_for

    ctx = _context(spec, dataset, cache_root, vectors)
    index.vector_index(ctx, config, chunks, client_for(None, spec.vector_store.url))
    return _result(ctx)


def query_task(spec, dataset, embedding, questions: list[str], vectors, cache_root: Path) -> TaskResult:
    """The queries unit of one model: embed the pending questions, timing each one as a local run does."""
    ctx = _context(spec, dataset, cache_root, vectors)
    queries.embed_questions(ctx, embedding, questions)
    return _result(ctx)


def graph_task(spec, dataset, configs, chunks, graph_files: dict[str, str]) -> TaskResult:
    """The graph unit of one splitter: build (or reopen) its graphs and load them into Neo4j where the spec
    says so; a graph that fails is reported, for the driver to record once."""
    ctx = _context(spec, dataset, Path(), graph_files=graph_files, configs=configs)
    try:
        graphs = graph.chunk_graphs(ctx, configs[0], chunks)
        failures = graph.build_graphs(graphs, configs)
    finally:
        if ctx.neo4j is not None:
            ctx.neo4j.close()
            ctx.neo4j = None
    built = {info["key"] for info in ctx.stats.graphs.values() if info.get("built")}
    files = {key: ctx.cache.graph(key).read_text(encoding="utf-8") for key in built}
    return _result(ctx, graph_files=files, graph_failures=failures)


@dataclass(frozen=True)
class AnswerSlice:
    """What one answering task answers: ``configs`` of one splitter on a slice of the questions (``pending``:
    configuration hash -> questions), with the cached question vectors it needs (``vectors``). The chunks and
    graphs are the task's own arguments: Ray hands a task the objects its top-level references name."""

    configs: list
    pending: dict
    vectors: dict


def answer_task(spec, dataset, chunks, graph_files: dict[str, str], cache_root: Path, part: AnswerSlice) -> TaskResult:
    """An answer unit of one splitter, on a slice of the questions: open the indexes and graphs the driver's
    earlier tasks made, then answer exactly as the local executor does; LLM-written answers go back as
    generation items."""
    from ragsweep.executors.inprocess import InProcess
    from ragsweep.pipelines.plan import SPLITTER_STAGES, SweepPlan
    from ragsweep.pipelines.progress import NullBar

    configs = part.configs
    ctx = _context(spec, dataset, cache_root, part.vectors, graph_files, configs)
    sink, bar = MemorySink(), NullBar()
    gen_items: list[Retrieved] = []
    plan = SweepPlan.build(configs, part.pending)
    tracing.worker_start(spec)  # where the driver sends spans, if it does (tracing.for_workers)
    try:  # the plan's units in this process: the chunks are the driver's, indexes and graphs its tasks' (reopened)
        InProcess(plan, ctx, sink, bar, gen_items, chunks={configs[0].chunk_key: chunks}).run(
            plan.units(SPLITTER_STAGES)
        )
    finally:
        tracing.flush(timeout_s=5)  # this task's spans sent before its result is (a stalled collector: 5 s at most)
        if ctx.neo4j is not None:
            ctx.neo4j.close()
            ctx.neo4j = None
    ctx.stats.indexes_reused, ctx.stats.graphs = 0, {}  # counted once by the index and graph tasks
    return _result(ctx, rows=sink.rows, gen_items=gen_items)


def score_task(bertscore_spec, cache_root: Path, pairs: list[tuple[str, str]]) -> list[tuple[float, float, float]]:
    """The score unit on a block of pairs: raw BERTScores (the driver stores them in its pair cache)."""
    from ragsweep.evaluation.bertscore import score_block

    return score_block(bertscore_spec, export_root(cache_root), pairs)
