"""What every stage reads: the spec, the dataset, the caches, the run's models and counters.

A stage never opens a cache or a model itself: it asks the context, so the same stage runs in the
driver (SQLite caches in the cache directory) and in a Ray task (in-memory caches the driver
filled, a private scratch directory), and gives the same results in both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ragsweep.cache_dir import CacheDir
from ragsweep.config import EmbeddingSpec, SweepSpec
from ragsweep.datasets.types import Dataset
from ragsweep.pipelines.progress import Progress
from ragsweep.pipelines.stats import SweepStats
from ragsweep.rerankers.registry import RerankerModels
from ragsweep.retrievers.transforms.base import TransformMemo


class Models:
    """The run's cache-first embedding models, one per model key, over one embedding cache.

    ``open_cache`` makes the cache on first need: an ``EmbeddingCache`` (SQLite, the driver) or a
    ``MemoryEmbeddingCache`` (a Ray task); ``export_root`` is where ONNX exports are kept."""

    def __init__(self, open_cache: Callable[[], Any], export_root: Path | None = None) -> None:
        self._open_cache = open_cache
        self._cache = None
        self.export_root = export_root
        self._models: dict[str, Any] = {}

    @property
    def cache(self):
        if self._cache is None:
            self._cache = self._open_cache()
        return self._cache

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()

    def __call__(self, emb: EmbeddingSpec):
        from ragsweep.embeddings.factory import cached_model, model_key

        key = model_key(emb)
        if key not in self._models:
            self._models[key] = cached_model(emb, self.cache, cache_root=self.export_root)
        return self._models[key]

    def count_into(self, stats: SweepStats) -> None:
        for m in self._models.values():
            stats.embeddings_computed += m.computed
            stats.query_embeddings_computed += m.computed_queries
            stats.embeddings_from_cache += m.from_cache

    def release(self, stats: SweepStats) -> None:
        """Count what the models computed into ``stats`` and drop them (a later call loads them again):
        scoring and judging need no embedding model, and their weights and buffers would stay resident."""
        self.count_into(stats)
        self._models.clear()


@dataclass
class StageContext:
    """One process's view of a sweep; ``llm`` writes fusion rewrites and LLM graphs (driver only)."""

    spec: SweepSpec
    dataset: Dataset
    cache: CacheDir
    models: Models
    stats: SweepStats = field(default_factory=SweepStats)
    bars: Progress = field(default_factory=lambda: Progress(enabled=False))
    llm: Any = None
    llm_for: Any = None  # LLMSpec -> its LLM (llm.clients.LLMClients.get): contextual chunks with their own LLM
    neo4j: Any = None  # a graphs.neo4j_store.Neo4jConnection when a graph is served from Neo4j
    rerankers: RerankerModels = field(default_factory=RerankerModels)  # built on first use, dropped after answering
    tuned_weights: dict = field(default_factory=dict)  # configuration hash -> tuning the run recorded (ask)
    abstain_thresholds: dict = field(default_factory=dict)  # configuration hash -> the run's tuned threshold
    # what LLM query transforms wrote per (transform, question), shared by every index of the process
    transform_memo: TransformMemo = field(default_factory=TransformMemo)
    adaptive: dict = field(default_factory=dict)  # classifier identity -> stages.adaptive.Classified, trained once
    # a search: (splitter, embedding, graphs) -> its retrievers.factory.IndexRetrievers with what they retrieved,
    # kept from trial to trial so a configuration differing only in top_k or postprocessor retrieves nothing
    # again; None (a grid): built per answer unit and dropped after it
    retrievers_memo: dict | None = None

    @property
    def k_max(self) -> int:
        """Every index is queried once per question at the largest top_k (or reranker candidates);
        smaller ones reuse it."""
        return self.spec.retrieval_depth
