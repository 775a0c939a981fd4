"""A persistent, content-addressed embedding cache: (model key, text hash) -> float32 vector.

SQLite in WAL mode: one file, atomic commits (a killed process loses nothing committed), safe
for several readers, and fast enough for batch look-ups of thousands of keys. The cache is shared
by every run and sweep that points at the same directory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embedding (
    model TEXT NOT NULL,
    key BLOB NOT NULL,
    dim INTEGER NOT NULL,
    vec BLOB NOT NULL,
    ms REAL,
    PRIMARY KEY (model, key)
) WITHOUT ROWID;
"""


def text_key(text: str, role: str = "text") -> bytes:
    """Hash of the exact text and its role (query and document embeddings may differ)."""
    return hashlib.sha256(role.encode() + b"\0" + text.encode("utf-8")).digest()[:20]


class EmbeddingCache:
    """Look up and store embeddings; counts hits so callers and tests can see what was reused."""

    def __init__(self, path: Path) -> None:
        from ragsweep.sqlite_store import open_store

        self.path = path
        self._db = open_store(path, _SCHEMA, threads=True, fast_sync=True)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(embedding)")}
        if "ms" not in columns:  # caches written before query latencies were recorded
            with self._db:
                self._db.execute("ALTER TABLE embedding ADD COLUMN ms REAL")

    def _select(self, model: str, keys: list[bytes], column: str, where: str = "") -> dict[bytes, object]:
        out: dict[bytes, object] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), 500):
            batch = unique[i : i + 500]
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(
                f"SELECT key, {column} FROM embedding WHERE model = ? {where} AND key IN ({marks})", [model, *batch]
            )
            out.update((bytes(key), value) for key, value in rows)
        return out

    def get_many(self, model: str, keys: list[bytes]) -> dict[bytes, list[float]]:
        rows = self._select(model, keys, "vec").items()
        return {k: np.frombuffer(cast(bytes, v), dtype=np.float32).tolist() for k, v in rows}  # vec: a BLOB

    def put_many(
        self, model: str, items: Sequence[tuple[bytes, Sequence[float] | np.ndarray]], ms: list[float] | None = None
    ) -> None:
        """Store vectors; ``ms`` optionally records how long each took to compute (query latency)."""
        rows = []
        for i, (key, vec) in enumerate(items):
            arr = np.asarray(vec, dtype=np.float32)
            rows.append((model, key, int(arr.shape[0]), arr.tobytes(), ms[i] if ms is not None else None))
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO embedding VALUES (?, ?, ?, ?, ?)", rows)

    def get_ms(self, model: str, keys: list[bytes]) -> dict[bytes, float]:
        """Recorded compute times (ms) of the given keys, where one was recorded."""
        return cast(dict[bytes, float], self._select(model, keys, "ms", "AND ms IS NOT NULL"))  # ms: REAL

    def arrays(self, model: str, keys: list[bytes]) -> tuple[dict[bytes, np.ndarray], dict[bytes, float]]:
        """Vectors (float32 arrays) and recorded latencies of ``keys``: what a Ray task is sent."""
        rows = self._select(model, keys, "vec").items()
        vecs = {k: np.frombuffer(cast(bytes, v), dtype=np.float32) for k, v in rows}  # vec: a BLOB
        return vecs, self.get_ms(model, keys)

    def put_computed(self, model: str, items: list[tuple[bytes, np.ndarray, float | None]]) -> None:
        """Store what a worker computed (``MemoryEmbeddingCache.new_items``), query latencies included."""
        plain = [(k, v) for k, v, ms in items if ms is None]
        timed = [(k, v, ms) for k, v, ms in items if ms is not None]
        if plain:
            self.put_many(model, plain)
        if timed:
            self.put_many(model, [(k, v) for k, v, _ in timed], ms=[ms for _, _, ms in timed])

    def count(self, model: str | None = None) -> int:
        if model is None:
            return self._db.execute("SELECT COUNT(*) FROM embedding").fetchone()[0]
        return self._db.execute("SELECT COUNT(*) FROM embedding WHERE model = ?", [model]).fetchone()[0]

    def close(self) -> None:
        self._db.close()


class MemoryEmbeddingCache:
    """``EmbeddingCache``'s interface over dicts, for Ray workers.

    Workers never open the SQLite cache (WAL needs every process on one host): the driver sends
    the vectors a task may need, per model key as ``EmbeddingCache.arrays`` gives them, and stores
    the ones it computed (``new_items``, per model key). Vectors are kept as float32, as in the
    SQLite cache, so a worker retrieves with the very vectors a local run would read back.
    """

    def __init__(self, models: dict[str, tuple[dict[bytes, np.ndarray], dict[bytes, float]]] | None = None) -> None:
        self._vecs: dict[str, dict[bytes, np.ndarray]] = {m: dict(v) for m, (v, _) in (models or {}).items()}
        self._ms: dict[str, dict[bytes, float]] = {m: dict(ms) for m, (_, ms) in (models or {}).items()}
        self.new_items: dict[str, list[tuple[bytes, np.ndarray, float | None]]] = {}

    def get_many(self, model: str, keys: list[bytes]) -> dict[bytes, list[float]]:
        vecs = self._vecs.get(model, {})
        return {k: vecs[k].tolist() for k in keys if k in vecs}

    def put_many(self, model: str, items: list[tuple[bytes, list[float]]], ms: list[float] | None = None) -> None:
        vecs, times = self._vecs.setdefault(model, {}), self._ms.setdefault(model, {})
        new = self.new_items.setdefault(model, [])
        for i, (key, vec) in enumerate(items):
            arr = np.asarray(vec, dtype=np.float32)
            vecs[key] = arr
            if ms is not None:
                times[key] = ms[i]
            new.append((key, arr, ms[i] if ms is not None else None))

    def get_ms(self, model: str, keys: list[bytes]) -> dict[bytes, float]:
        times = self._ms.get(model, {})
        return {k: times[k] for k in keys if k in times}

    def close(self) -> None:
        return None
