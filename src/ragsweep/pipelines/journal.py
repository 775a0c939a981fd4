"""The run journal: one row per (configuration, question) as it completes, in SQLite.

Rows are committed in small batches (every ``flush_seconds`` or ``flush_rows``), so killing the
process, even with SIGKILL, loses at most the last fraction of a second of work; running the
same command again skips every committed row. Rows are keyed by the configuration *hash*, so a
spec edit that keeps an id does not reuse stale results.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from pathlib import Path

from ragsweep.pipelines.answer_record import AnswerRecord

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answer (
    config_hash TEXT NOT NULL, qid TEXT NOT NULL, config_id TEXT NOT NULL, ok INTEGER NOT NULL, payload TEXT NOT NULL,
    PRIMARY KEY (config_hash, qid)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS score (
    config_hash TEXT NOT NULL, qid TEXT NOT NULL, payload TEXT NOT NULL,
    PRIMARY KEY (config_hash, qid)
);
CREATE TABLE IF NOT EXISTS judgement (
    config_hash TEXT NOT NULL, qid TEXT NOT NULL, judge TEXT NOT NULL, judge_key TEXT NOT NULL, ok INTEGER NOT NULL,
    payload TEXT NOT NULL, PRIMARY KEY (config_hash, qid, judge)
);
"""


class Journal:
    """``secrets``: values (API keys) scrubbed from everything written, e.g. a server's error text."""

    def __init__(
        self,
        path: Path,
        flush_seconds: float = 0.5,
        flush_rows: int = 500,
        secrets: tuple[str, ...] = (),
        read_only: bool = False,
    ) -> None:
        self._secrets = tuple(s for s in secrets if s)
        if read_only:  # reading a run (perhaps while its sweep still writes): never create or change it
            import sqlite3

            self._db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=60)
        else:
            from ragsweep.sqlite_store import open_store

            self._db = open_store(path, _SCHEMA)
        self._pending: list[tuple[str, tuple]] = []
        self._last = time.monotonic()
        self._flush_seconds = flush_seconds
        self._flush_rows = flush_rows

    def meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])

    def done(self) -> set[tuple[str, str]]:
        """(config hash, qid) pairs answered without error; failed ones are retried by the next run."""
        self.flush()
        return {(h, q) for h, q in self._db.execute("SELECT config_hash, qid FROM answer WHERE ok = 1")}

    def permanent(self) -> set[tuple[str, str]]:
        """(config hash, qid) pairs that failed for good: a prompt longer than the server's context window (the
        same prompt fails the same way, so a re-run does not send it again; ``--fresh`` does)."""
        self.flush()
        return {
            (h, q)
            for h, q in self._db.execute(
                "SELECT config_hash, qid FROM answer WHERE ok = 0 AND json_extract(payload, '$.error_kind') = ?",
                ["context_window"],
            )
        }

    def attempted(self) -> set[tuple[str, str]]:
        """(config hash, qid) pairs with an answer row, failed ones included."""
        self.flush()
        return {(h, q) for h, q in self._db.execute("SELECT config_hash, qid FROM answer")}

    def add_answer(self, config_hash: str, qid: str, config_id: str, payload: AnswerRecord) -> None:
        ok = 0 if payload.get("error") else 1
        self._add(
            "INSERT OR REPLACE INTO answer VALUES (?, ?, ?, ?, ?)",
            (config_hash, qid, config_id, ok, self._scrub(json.dumps(payload, ensure_ascii=False))),
        )

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def add_score(self, config_hash: str, qid: str, payload: dict) -> None:
        """NaN (an unmeasured score) is stored as null: SQLite before 3.42 reads NaN as malformed JSON."""
        clean = {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in payload.items()}
        self._add("INSERT OR REPLACE INTO score VALUES (?, ?, ?)", (config_hash, qid, json.dumps(clean)))

    def add_judgement(self, config_hash: str, qid: str, judge: str, judge_key: str, payload: dict) -> None:
        """A stage-2 judgement; ``ok`` = 0 (a call that failed) is retried by the next run, while an
        unparseable reply is a finished, *unmeasured* judgement."""
        ok = 0 if payload.get("status") == "failed" else 1
        self._add(
            "INSERT OR REPLACE INTO judgement VALUES (?, ?, ?, ?, ?, ?)",
            (config_hash, qid, judge, judge_key, ok, self._scrub(json.dumps(payload, ensure_ascii=False))),
        )

    def judgements(self, judge_keys: dict[str, str] | None = None) -> dict[tuple[str, str, str], dict]:
        """(config hash, qid, judge) -> payload, only those made with the judge's current settings."""
        self.flush()
        out = {}
        for h, q, j, key, ok, p in self._db.execute("SELECT * FROM judgement"):
            if judge_keys is None or judge_keys.get(j) == key:
                out[(h, q, j)] = {**json.loads(p), "ok": bool(ok)}
        return out

    def repeated_judgements(self, judge_keys: dict[str, str], repeats: int = 1) -> dict[tuple[str, str, str], list]:
        """(config hash, qid, judge) -> each repeat's payload (``repeat_name``; None where it was not made), only
        those made with the judge's current settings."""
        self.flush()
        index = {(repeat_name(j, r), k): (j, r) for j, k in judge_keys.items() for r in range(repeats)}
        out: dict[tuple[str, str, str], list] = {}
        for h, q, j, key, ok, p in self._db.execute("SELECT * FROM judgement"):
            found = index.get((j, key))
            if found is not None:
                out.setdefault((h, q, found[0]), [None] * repeats)[found[1]] = {**json.loads(p), "ok": bool(ok)}
        return out

    def _add(self, sql: str, row: tuple) -> None:
        self._pending.append((sql, row))
        if len(self._pending) >= self._flush_rows or time.monotonic() - self._last >= self._flush_seconds:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            with self._db:
                for sql, row in self._pending:
                    self._db.execute(sql, row)
                self._db.execute(
                    "INSERT INTO meta VALUES ('revision', '1') ON CONFLICT(key) DO UPDATE SET "
                    "value = CAST(value AS INTEGER) + 1"
                )
            self._pending.clear()
        self._last = time.monotonic()

    def revision(self) -> int:
        """How many times rows were written (answers, scores, judgements): unchanged means nothing new."""
        self.flush()
        value = self.meta("revision")
        return int(value) if value is not None else 0

    def unscored(self, scorer_key: str) -> set[tuple[str, str]]:
        """(config hash, qid) of answers without error and without a score made with ``scorer_key``,
        found by SQLite alone (no payload is parsed here)."""
        self.flush()
        rows = self._db.execute(
            "SELECT a.config_hash, a.qid FROM answer a LEFT JOIN score s "
            "ON s.config_hash = a.config_hash AND s.qid = a.qid "
            "WHERE a.ok = 1 AND (s.payload IS NULL OR CASE WHEN json_valid(s.payload) "  # a NaN row of an older run
            "THEN json_extract(s.payload, '$.scorer') END IS NOT ?)",
            [scorer_key],
        )
        return {(h, q) for h, q in rows}

    def answer_texts(self, keys: set[tuple[str, str]]) -> list[tuple[str, str, str]]:
        """(config hash, qid, answer text) of the answered ``keys``: the text alone, since the payloads'
        sources would hold far more memory than scoring needs (parsed here: payloads may hold NaN,
        which SQLite's JSON functions refuse)."""
        self.flush()
        out = []
        for h, q, p in self._db.execute("SELECT config_hash, qid, payload FROM answer WHERE ok = 1"):
            if (h, q) in keys:
                out.append((h, q, json.loads(p).get("answer") or ""))
        return out

    def answers(self, config_hashes: set[str] | None = None) -> Iterator[tuple[str, str, str, AnswerRecord]]:
        """(config hash, qid, config id, payload) of every answer (of ``config_hashes``), decoded one at a time:
        a sweep's payloads at once (their sources) were the largest part of the outputs' memory."""
        self.flush()
        for h, q, c, p in self._db.execute("SELECT config_hash, qid, config_id, payload FROM answer"):  # noqa: S608
            if config_hashes is None or h in config_hashes:
                yield h, q, c, json.loads(p)

    def answers_of(self, config_hash: str, qorder: dict[str, int]) -> Iterator[tuple[str, AnswerRecord]]:
        """(qid, payload) of one configuration's answers to the questions ``qorder`` ranks, in that order, decoded
        one at a time (one configuration's payloads are held as text while they are sorted)."""
        self.flush()
        found = [
            (qorder[q], q, p)
            for q, p in self._db.execute("SELECT qid, payload FROM answer WHERE config_hash = ?", [config_hash])
            if q in qorder
        ]
        found.sort()
        for _, q, p in found:
            yield q, json.loads(p)

    def scores(self) -> dict[tuple[str, str], dict]:
        """Every score by (config hash, qid). Equal keys, strings and lists are one object however many rows repeat
        them (the scorer's key, the backbone, the baseline): decoded apart, they were most of the outputs' memory."""
        self.flush()
        shared: dict = {}
        out = {}
        for h, q, p in self._db.execute("SELECT config_hash, qid, payload FROM score"):
            payload = {}
            for k, v in json.loads(p).items():
                if v is None and k.startswith("bertscore"):
                    v = math.nan
                elif isinstance(v, str):
                    v = shared.setdefault(v, v)
                elif isinstance(v, list) and all(isinstance(x, float | int | str) for x in v):
                    v = shared.setdefault(("list", *((type(x), x) for x in v)), v)  # 1 and 1.0 stay apart
                payload[shared.setdefault(k, k)] = v
            out[(shared.setdefault(h, h), q)] = payload
        return out

    def close(self) -> None:
        self.flush()
        self._db.close()


class MemorySink:
    """The journal's writing interface kept in a list: what a Ray task hands back, what ``ask`` reads."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, AnswerRecord]] = []

    def add_answer(self, config_hash: str, qid: str, config_id: str, payload: AnswerRecord) -> None:
        self.rows.append((config_hash, qid, config_id, payload))

    def flush(self) -> None:
        return None


def repeat_name(judge: str, repeat: int) -> str:
    """The name a judgement's repeat is journaled under (its own row): the judge's for the first (so one repeat is
    what stage 2 always journaled), then ``judge+rN``."""
    return judge if repeat == 0 else f"{judge}+r{repeat}"
