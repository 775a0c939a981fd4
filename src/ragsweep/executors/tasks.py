"""The work a Ray worker does: chunk a corpus, build an index or a graph, answer a batch of questions.

Each task runs the very functions the local executor runs (``pipelines.sweep``), so a record made
on a worker is the record a local run makes. Workers keep no state the driver does not give
them: no journal and no SQLite cache (SQLite's WAL mode needs every process on one host), only a
private scratch directory. The driver sends the chunks, the cached vectors and graphs a task
needs, and stores what the task computed.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ragsweep.embeddings.cache import MemoryEmbeddingCache
from ragsweep.errors import short_reason

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

    rows: list[tuple[str, str, str, dict]] = field(default_factory=list)
    gen_items: list = field(default_factory=list)
    vectors: dict[str, list] = field(default_factory=dict)  # model key -> MemoryEmbeddingCache.new_items
    graph_files: dict[str, str] = field(default_factory=dict)  # graph key -> persisted SimplePropertyGraphStore
    graph_failures: dict[str, str] = field(default_factory=dict)  # retriever spec (JSON) -> why its graph failed
    chunks: list | None = None
    stats: object = None


class _Rows:
    """The journal interface ``_answer_config`` and ``_fail_group`` write to, kept in memory."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, dict]] = []

    def add_answer(self, config_hash: str, qid: str, config_id: str, payload: dict) -> None:
        self.rows.append((config_hash, qid, config_id, payload))

    def flush(self) -> None:
        return None


def export_root(cache_root: Path) -> Path:
    """Where ONNX exports go: the sweep's cache directory when this node sees it (the driver's host, or
    shared storage), else one directory per node, shared by its workers (exports are written under a lock)."""
    return cache_root if cache_root.is_dir() else Path(tempfile.gettempdir()) / "ragsweep-exports"


class _Models:
    """``model_for`` of the sweep functions: cache-first models over in-memory caches the driver filled."""

    def __init__(self, cache_root: Path, vectors: dict[str, tuple[dict, dict]] | None = None) -> None:
        self.caches: dict[str, MemoryEmbeddingCache] = {}
        self.models: dict[str, object] = {}
        self._vectors = vectors or {}
        self._root = export_root(cache_root)

    def __call__(self, emb):
        from ragsweep.embeddings.factory import cached_model, model_key

        key = model_key(emb)
        if key not in self.models:
            vecs, ms = self._vectors.get(key, ({}, {}))
            self.caches[key] = MemoryEmbeddingCache(vecs, ms)
            self.models[key] = cached_model(emb, self.caches[key], cache_root=self._root)
        return self.models[key]

    def computed(self) -> dict[str, list]:
        return {k: c.new_items for k, c in self.caches.items() if c.new_items}

    def count_into(self, stats) -> None:
        for m in self.models.values():
            stats.embeddings_computed += m.computed
            stats.query_embeddings_computed += m.computed_queries
            stats.embeddings_from_cache += m.from_cache


def _quiet():
    from ragsweep.pipelines.progress import Progress
    from ragsweep.pipelines.sweep import SweepStats

    return SweepStats(), Progress(enabled=False)


def _scratch_cache(graph_files: dict[str, str] | None = None):
    """A CacheDir in the scratch directory holding the graphs the driver sent."""
    from ragsweep.pipelines.cache_dir import CacheDir

    cache = CacheDir(scratch())
    for key, text in (graph_files or {}).items():
        path = cache.root / "graphs" / f"{key}.json"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(path)
    return cache


def chunk_task(spec, dataset, config, cache_root: Path) -> TaskResult:
    """Split the corpus with ``config``'s splitter (semantic chunking embeds on the worker)."""
    from ragsweep.pipelines.sweep import _chunks_for

    stats, bars = _quiet()
    models = _Models(cache_root)
    chunks = _chunks_for(spec, dataset, config, _scratch_cache(), models, stats, bars)
    models.count_into(stats)
    return TaskResult(chunks=chunks, vectors=models.computed(), stats=stats)


def index_task(spec, dataset, config, chunks, vectors, cache_root: Path) -> TaskResult:
    """Build (or find) the Chroma collection of (splitter, embedding)."""
    from ragsweep.pipelines.sweep import _vector_index
    from ragsweep.retrievers.chroma import client_for

    stats, bars = _quiet()
    models = _Models(cache_root, vectors)
    client = client_for(None, spec.vector_store.url)
    _vector_index(spec, dataset, config, chunks, client, models(config.embedding), stats, bars, max(spec.top_k))
    models.count_into(stats)
    return TaskResult(vectors=models.computed(), stats=stats)


def query_task(embedding, queries: list[str], vectors, cache_root: Path) -> TaskResult:
    """Embed the pending questions once per model, timing each one as a local run does."""
    from ragsweep.pipelines.sweep import _Timer

    stats, _ = _quiet()
    models = _Models(cache_root, vectors)
    with _Timer(stats, "embedding_queries"):
        models(embedding).timed_query_embeddings(queries)
    models.count_into(stats)
    return TaskResult(vectors=models.computed(), stats=stats)


def graph_task(spec, dataset, configs, chunks, graph_files: dict[str, str]) -> TaskResult:
    """Build (or reopen) the knowledge graphs of one splitter's graph configurations and load them into
    Neo4j where the spec says so; a graph that fails is reported, for the driver to record once."""
    from ragsweep.pipelines.sweep import _chunk_graphs, _neo4j_connection

    stats, bars = _quiet()
    cache = _scratch_cache(graph_files)
    neo4j = _neo4j_connection(spec, configs)
    try:
        graphs = _chunk_graphs(spec, dataset, configs[0], chunks, cache, max(spec.top_k), stats, bars, None, neo4j)
        failures = {}
        for key, rspec in {c.retriever.model_dump_json(): c.retriever for c in configs}.items():
            try:
                graphs.shared(rspec)
            except Exception as exc:  # noqa: BLE001 - recorded by the driver, with the local executor's words
                failures[key] = f"building the query engine failed: {short_reason(exc)}"
    finally:
        if neo4j is not None:
            neo4j.close()
    built = {info["key"] for info in stats.graphs.values() if info.get("built")}
    files = {key: (cache.root / "graphs" / f"{key}.json").read_text(encoding="utf-8") for key in built}
    return TaskResult(graph_files=files, graph_failures=failures, stats=stats)


def answer_task(spec, dataset, group, chunks, pending, vectors, graph_files: dict[str, str],
                cache_root: Path) -> TaskResult:
    """Answer ``pending`` (configuration hash -> questions) with one splitter's configurations, exactly
    as ``_answer_chunk_group`` does locally; LLM-written answers go back as generation items."""
    from ragsweep.pipelines.progress import _NullBar
    from ragsweep.pipelines.sweep import _answer_chunk_group, _neo4j_connection

    stats, bars = _quiet()
    models = _Models(cache_root, vectors)
    rows, gen_items = _Rows(), []
    neo4j = _neo4j_connection(spec, group)
    try:
        _answer_chunk_group(spec, dataset, group, chunks, pending, rows, _scratch_cache(graph_files), models, stats,
                            bars, _NullBar(), None, gen_items, neo4j)
    finally:
        if neo4j is not None:
            neo4j.close()
    stats.indexes_reused, stats.graphs = 0, {}  # counted once by the index and graph tasks
    return TaskResult(rows=rows.rows, gen_items=gen_items, vectors=models.computed(), stats=stats)
