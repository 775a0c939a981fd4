"""Chunks on disk: a splitter's output per corpus and settings, so no later run splits again."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ragsweep.splitters.build import Chunk


def load_chunks(path: Path):
    """Chunks saved by ``save_chunks``, or None if absent or unreadable (then they are recomputed)."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return [Chunk(*row) for row in rows]


def save_chunks(path: Path, chunks) -> None:
    """Write atomically (temp file + rename) so a killed run never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    # a chunk's context (contextual chunks) is a sixth field, left out without one (older files read the same)
    rows = [
        [c.node_id, c.doc_id, c.start, c.end, c.text] + ([c.context] if c.context is not None else []) for c in chunks
    ]
    tmp.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
