"""Opening the project's SQLite files (caches and the run journal) the same way everywhere.

WAL mode lets readers go on while one process writes, and a committed row survives ``kill -9``.
``fast_sync`` (synchronous=NORMAL) suits caches, whose rows can be recomputed; ``threads`` lets a
connection be used from more than one thread (callers then serialise access themselves).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_store(path: Path, schema: str, *, threads: bool = False, fast_sync: bool = False) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), timeout=60, check_same_thread=not threads)
    db.execute("PRAGMA journal_mode=WAL")
    if fast_sync:
        db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(schema)
    return db
