"""The persistent cache directory shared by runs and sweeps (default ``.ragsweep/cache``).

Layout: ``embeddings.sqlite`` (vectors by model and text hash), ``bertscore.sqlite`` (pair scores
and baselines), ``llm_calls.sqlite`` (every LLM call's reply, tokens and cost), ``chunks/`` (splitter
output per corpus and splitter), ``doc_chunks.sqlite`` (the same per document), ``chroma/`` (embedded
Chroma collections per corpus, splitter and embedding), ``graphs/`` (knowledge graphs per corpus, chunks
and extractor), ``onnx/`` (ONNX exports of embedding models, per model and precision), ``datasets/`` (loaded
datasets by their files' hash).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CACHE = Path(".ragsweep/cache")


def user_cache() -> Path | None:
    """Where a loaded pipeline keeps what outlives one load (its embedding model's ONNX export, minutes of work
    once written into a folder it must not write to): ``$RAGSWEEP_USER_CACHE``, else ``$XDG_CACHE_HOME/ragsweep``,
    else ``~/.cache/ragsweep``; None where it cannot be made (a read-only home)."""
    import os

    if os.environ.get("RAGSWEEP_USER_CACHE"):
        root = Path(os.environ["RAGSWEEP_USER_CACHE"])
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ragsweep"
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return root if os.access(root, os.W_OK) else None


@dataclass(frozen=True)
class CacheDir:
    root: Path

    @property
    def embeddings(self) -> Path:
        return self.root / "embeddings.sqlite"

    @property
    def bertscore(self) -> Path:
        return self.root / "bertscore.sqlite"

    @property
    def llm_calls(self) -> Path:
        return self.root / "llm_calls.sqlite"

    @property
    def server_facts(self) -> Path:
        """What LLM servers were found to hold when they state nothing (``llm.server_info``)."""
        return self.root / "server_facts.json"

    @property
    def chroma(self) -> Path:
        return self.root / "chroma"

    def graph(self, key: str) -> Path:
        """A knowledge graph's file, a persisted ``SimplePropertyGraphStore``, by key (``graphs.build.graph_key``)."""
        return self.root / "graphs" / f"{key}.json"

    @property
    def datasets(self) -> Path:
        """Loaded datasets by the hash of their files, spec and code (``datasets/loaded_cache.py``)."""
        return self.root / "datasets"

    @property
    def doc_chunks(self) -> Path:
        """Each document's chunks per splitter (``splitters/doc_chunks.py``)."""
        return self.root / "doc_chunks.sqlite"

    def chunks_path(self, key: str) -> Path:
        return self.root / "chunks" / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")
