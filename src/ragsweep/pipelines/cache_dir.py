"""The persistent cache directory shared by runs and sweeps (default ``.ragsweep/cache``).

Layout: ``embeddings.sqlite`` (vectors by model and text hash), ``bertscore.sqlite`` (pair scores
and baselines), ``llm_calls.sqlite`` (every LLM call's reply, tokens and cost), ``chunks/`` (splitter output per corpus and splitter), ``chroma/`` (embedded
Chroma collections per corpus, splitter and embedding), ``onnx/`` (ONNX exports of embedding
models, per model and precision).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CACHE = Path(".ragsweep/cache")


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
    def chroma(self) -> Path:
        return self.root / "chroma"

    def chunks_path(self, key: str) -> Path:
        return self.root / "chunks" / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".json")


def load_chunks(path: Path):
    """Chunks saved by ``save_chunks``, or None if absent or unreadable (then they are recomputed)."""
    from ragsweep.splitters.build import Chunk

    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return [Chunk(*row) for row in rows]


def save_chunks(path: Path, chunks) -> None:
    """Write atomically (temp file + rename) so a killed run never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps([[c.node_id, c.doc_id, c.start, c.end, c.text] for c in chunks], ensure_ascii=False),
                   encoding="utf-8")
    os.replace(tmp, path)
