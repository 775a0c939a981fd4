"""A persistent cache of LLM calls, keyed by (model, messages, parameters).

Re-running a sweep makes no call twice, and a killed stage resumes without repeating finished
calls: every call is committed as soon as its reply arrives. Each row also records who paid for
it (run, stage, configuration, judge) and what it cost, so a run's spending is known even after
``kill -9``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY, model TEXT NOT NULL, content TEXT NOT NULL, finish_reason TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, ms REAL, cost_usd REAL, created REAL NOT NULL,
    run TEXT, stage TEXT, config_id TEXT, judge TEXT, service_ms REAL, queue_ms REAL
);
CREATE INDEX IF NOT EXISTS calls_run ON calls (run);
"""
_COLUMNS = (
    "key",
    "model",
    "content",
    "finish_reason",
    "prompt_tokens",
    "completion_tokens",
    "ms",
    "cost_usd",
    "created",
    "run",
    "stage",
    "config_id",
    "judge",
    "service_ms",
    "queue_ms",
)
_ADDED = {"service_ms": "REAL", "queue_ms": "REAL"}  # columns a cache written before them lacks


def call_key(model: str, messages: list[dict], params: dict) -> str:
    """Stable hash of what determines a reply (the base URL does not: the same model elsewhere
    is the same model)."""
    blob = json.dumps({"model": model, "messages": messages, "params": params}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class CachedCall:
    """``ms``: the request's wall time, queue wait at the server included; ``service_ms``: the server's time on
    it alone, where known (see ``capacity.Served``), and ``queue_ms`` the rest."""

    content: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    ms: float
    cost_usd: float | None
    service_ms: float | None = None
    queue_ms: float | None = None
    cached: bool = False  # replayed from the cache (nothing was paid for it now)


class LLMCallCache:
    def __init__(self, path: Path) -> None:
        from ragsweep.sqlite_store import open_store

        self.path = path
        self._db = open_store(path, _SCHEMA, threads=True, fast_sync=True)
        self._lock = threading.Lock()
        have = {row[1] for row in self._db.execute("PRAGMA table_info(calls)")}
        with self._lock, self._db:
            for name, kind in _ADDED.items():
                if name not in have:
                    try:
                        self._db.execute(f"ALTER TABLE calls ADD COLUMN {name} {kind}")
                    except sqlite3.OperationalError as exc:  # another process added it meanwhile
                        if "duplicate column" not in str(exc):
                            raise

    def get(self, key: str) -> CachedCall | None:
        with self._lock:
            row = self._db.execute(
                "SELECT content, finish_reason, prompt_tokens, completion_tokens, ms, cost_usd, service_ms, queue_ms "
                "FROM calls WHERE key = ?",
                [key],
            ).fetchone()
        return CachedCall(row[0], row[1], row[2] or 0, row[3] or 0, row[4] or 0.0, *row[5:]) if row else None

    def has(self, key: str) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM calls WHERE key = ?", [key]).fetchone() is not None

    def put(self, key: str, model: str, call: CachedCall, scope: dict) -> None:
        with self._lock, self._db:
            self._db.execute(
                f"INSERT OR REPLACE INTO calls ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
                [
                    key,
                    model,
                    call.content,
                    call.finish_reason,
                    call.prompt_tokens,
                    call.completion_tokens,
                    call.ms,
                    call.cost_usd,
                    time.time(),
                    scope.get("run"),
                    scope.get("stage"),
                    scope.get("config_id"),
                    scope.get("judge"),
                    call.service_ms,
                    call.queue_ms,
                ],
            )

    def spending(self, run: str) -> list[dict]:
        """Calls paid for by ``run``, grouped by (stage, configuration, judge, model)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT stage, config_id, judge, model, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), "
                "SUM(cost_usd), COUNT(cost_usd) FROM calls WHERE run = ? GROUP BY stage, config_id, judge, model",
                [run],
            ).fetchall()
        return [
            {
                "stage": s,
                "config_id": c,
                "judge": j,
                "model": m,
                "calls": n,
                "prompt_tokens": p or 0,
                "completion_tokens": o or 0,
                "cost_usd": cost if priced == n else None,
            }
            for s, c, j, m, n, p, o, cost, priced in rows
        ]

    def close(self) -> None:
        with self._lock:
            self._db.close()
