"""What every query transform shares: the process-wide memo of its outputs and the wrapper interface.

A transform's LLM output for a question is a function of (transform settings, question) alone, so it
is written once per process and reused by every (splitter, embedding) index, retriever, top_k and
reranker; each configuration still reports what it would cost alone: later uses replay the first
one's milliseconds into ``memo.REPLAY`` (as ``memo.SharedResults`` does for index searches) and
every record carries the transform's LLM calls (``transform_llm``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # light at import: the run's StageContext holds a memo before any retriever loads
    from ragsweep.llm.usage import LLMUse
    from ragsweep.retrievers.memo import SharedResults


@dataclass(frozen=True)
class TransformOutput:
    """What a transform searched with for one question, and what writing it cost."""

    queries: tuple[str, ...]  # the queries searched (the question first), or HyDE's embedding texts
    note: str | None = None  # why it fell back to the question alone, when it did
    llm: LLMUse | None = None  # llm.usage.Trace.as_dict() of the calls that wrote it
    ms: float = 0.0  # wall time, with cached LLM calls at their original time

    def record(self) -> dict:
        """The answer payload's fields: ``transformed_queries``, ``transform_llm``, ``transform_note``."""
        out: dict = {"transformed_queries": list(self.queries)}
        if self.llm:
            out["transform_llm"] = self.llm
        if self.note:
            out["transform_note"] = self.note
        return out


Writer = Callable[[str], tuple[list[str], str | None]]  # question -> (queries searched, fallback note)


class TransformMemo:
    """(transform key, question) -> ``TransformOutput`` for the whole process (``StageContext``); a
    question is written once even when several threads ask for it at the same time."""

    def __init__(self) -> None:
        self._store: dict[tuple[str, str], TransformOutput] = {}
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._guard = threading.Lock()

    def forget(self) -> None:
        """Drop the stored outputs (a question asked again is written again)."""
        with self._guard:
            self._store.clear()
            self._locks.clear()

    @property
    def size(self) -> int:
        return len(self._store)

    def get(self, key: str, question: str, write: Writer, stage: str = "query_transform") -> TransformOutput:
        """The output for ``question``: written now (its LLM calls under ``stage``), or the stored one with its
        time replayed."""
        from ragsweep.llm.usage import Trace, llm_scope
        from ragsweep.retrievers.memo import REPLAY

        with self._guard:
            lock = self._locks.setdefault((key, question), threading.Lock())
        with lock:
            hit = self._store.get((key, question))
            if hit is not None:
                REPLAY.ms += hit.ms
                return hit
            trace = Trace()
            t0 = time.perf_counter()
            with llm_scope(trace, stage=stage, config_id=None):
                queries, note = write(question)
            REPLAY.ms += trace.cached_ms  # fresh calls are in the caller's wall time already
            out = TransformOutput(
                tuple(queries),
                note,
                trace.as_dict() if trace.calls else None,
                (time.perf_counter() - t0) * 1000 + trace.cached_ms,
            )
            self._store[(key, question)] = out
            return out

    def peek(self, key: str, question: str) -> TransformOutput | None:
        """The stored output without replaying its time (for the records)."""
        return self._store.get((key, question))


class AppliedTransform:
    """A query transform over one index's retrievers (``factory.IndexRetrievers``): ``part`` swaps the
    shared results of one part (``bm25``, ``vector``, ``graph``), ``wrap`` wraps a whole retriever at
    top_k ``k``; ``record`` gives the answer payload's fields for a question. The defaults do nothing."""

    def part(self, name: str, shared: SharedResults) -> SharedResults:
        return shared

    def wrap(self, retriever, k: int):
        return retriever

    def record(self, question: str) -> dict:
        return {}

    def stores(self) -> list[SharedResults]:
        """The results its own searches store (its ``SharedResults`` attributes: RM3's, HyDE's)."""
        from ragsweep.retrievers.memo import SharedResults

        return [v for v in vars(self).values() if isinstance(v, SharedResults)]


def transform_key(spec) -> str:
    """What identifies a transform's outputs: its settings (not its name or ``apply_to``)."""
    return json.dumps(spec.identity(), sort_keys=True)


def require_llm(host, kind: str):
    """The LLM a transform writes with; without one LlamaIndex would fall back to its default OpenAI LLM."""
    if host.llm is None:
        raise ValueError(f"query transform {kind} needs the spec's llm")
    return host.llm
