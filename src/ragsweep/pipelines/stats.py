"""What one invocation did and how long each stage took (written to the manifest)."""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field


@dataclass
class SweepStats:
    """Counters and timings of one invocation; an executor's tasks each keep their own and merge them."""

    timings: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    embeddings_computed: int = 0
    query_embeddings_computed: int = 0
    embeddings_from_cache: int = 0
    chunks: dict[str, int] = field(default_factory=dict)
    documents_split: int = 0  # documents a splitter cut now (the others' chunks were cached: ``doc_chunks``)
    unique_chunk_texts: dict[str, int] = field(default_factory=dict)
    indexes_built: int = 0
    indexes_reused: int = 0
    answered: int = 0
    failed: int = 0
    failed_for_good: int = 0  # of ``failed``: prompts over the server's context window (a re-run does not resend)
    skipped_done: int = 0
    bertscore_pairs_computed: int = 0
    bertscore_pairs_total: int = 0
    judged: int = 0
    judge_failed: int = 0
    llm: dict = field(default_factory=dict)
    graphs: dict = field(default_factory=dict)
    chunk_contexts: dict = field(default_factory=dict)  # splitter label -> what writing its LLM contexts took
    units: dict[str, float] = field(default_factory=dict)  # "chunk:SPLITTER", "index:SPLITTER@EMBEDDING" -> seconds
    executor: dict = field(default_factory=lambda: {"kind": "local"})
    stopped: str | None = None
    invocation: int | None = None  # this invocation's number in the run (1, 2, ...): answers carry it

    def merge(self, part: "SweepStats") -> None:
        """Add a task's counters and timings to these."""
        for name in (
            "answered",
            "documents_split",
            "failed",
            "failed_for_good",
            "embeddings_computed",
            "query_embeddings_computed",
            "embeddings_from_cache",
            "indexes_built",
            "indexes_reused",
            "bertscore_pairs_computed",
        ):
            setattr(self, name, getattr(self, name) + getattr(part, name))
        for k, v in part.timings.items():
            self.timings[k] += v
        self.chunks.update(part.chunks)
        self.unique_chunk_texts.update(part.unique_chunk_texts)
        self.chunk_contexts.update(part.chunk_contexts)
        for k, v in part.units.items():
            self.units[k] = self.units.get(k, 0.0) + v
        for label, info in part.graphs.items():
            self.graphs.setdefault(label, {}).update(info)


class Timer:
    """``with Timer(stats, "chunking"):`` adds the block's wall time to ``stats.timings["chunking"]``."""

    def __init__(self, stats: SweepStats, name: str) -> None:
        self.stats, self.name = stats, name

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc) -> None:
        self.stats.timings[self.name] += time.perf_counter() - self.t0


class UnitTimer(Timer):
    """``with UnitTimer(stats, "chunk:sentence512"):`` adds the block's wall time to ``stats.units``: what one
    shared unit took to compute (the search's cost model and benchmark read it from the manifest)."""

    def __exit__(self, *exc) -> None:
        self.stats.units[self.name] = self.stats.units.get(self.name, 0.0) + time.perf_counter() - self.t0
