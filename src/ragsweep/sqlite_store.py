"""Opening the project's SQLite files (caches and the run journal) the same way everywhere.

WAL mode lets readers go on while one process writes, and a committed row survives ``kill -9``.
``fast_sync`` (synchronous=NORMAL) suits caches, whose rows can be recomputed; ``threads`` lets a
connection be used from more than one thread (callers then serialise access themselves).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ragsweep.errors import RagsweepError


def open_store(path: Path, schema: str, *, threads: bool = False, fast_sync: bool = False) -> sqlite3.Connection:
    """The connection, or a one-line error naming a file that is not a readable SQLite database."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(str(path), timeout=60, check_same_thread=not threads)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        if fast_sync:
            db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(schema)
    except sqlite3.DatabaseError as exc:
        db.close()
        if isinstance(exc, sqlite3.OperationalError) and not _corrupt(exc):  # locked, disk full, I/O: as it is
            raise
        raise RagsweepError(
            f"{path}: not a readable SQLite database ({exc}); a cache file is rebuilt once deleted; an exported "
            "folder's, by exporting the run again"
        ) from None
    return db


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text
