"""Who is calling the LLM (stage, configuration, judge), and what each unit of work consumed.

The scope travels in a context variable, so LlamaIndex components that call the LLM deep inside
(synthesizers, evaluators, QueryFusionRetriever) are accounted without knowing about it; asyncio
tasks copy it when created.
"""

from __future__ import annotations

import contextvars
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypedDict


class LLMUse(TypedDict, total=False):
    """One unit of work's LLM calls as records keep them (``Trace.as_dict``)."""

    llm_calls: int
    llm_cached: int
    prompt_tokens: int
    completion_tokens: int
    llm_ms: float
    llm_service_ms: float
    llm_queue_ms: float
    llm_service_unknown: int
    llm_truncated: int
    cost_usd: float | None
    llm_retries: int


@dataclass
class Trace:
    """LLM calls made for one unit of work (an answer, a judgement)."""

    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ms: float = 0.0  # wall time of the requests, queue waits at the server included
    service_ms: float = 0.0  # the server's time on them alone where known, else their wall time
    service_unknown: int = 0  # calls whose service time is not known (their wall time is in service_ms)
    queue_ms: float = 0.0  # time this invocation's calls waited in the server's queue (where known)
    truncated: int = 0  # replies cut at max_tokens (finish_reason "length")
    cached_ms: float = 0.0  # stored service time (else request time) of the calls served from the cache
    cost_usd: float = 0.0
    unpriced: int = 0
    retries: int = 0
    replies: list[str] = field(default_factory=list)  # reply texts, in call order (for inspection)
    last_messages: list[dict] = field(default_factory=list)  # the last call's messages (a repair re-asks after them)

    def as_dict(self) -> LLMUse:
        return {
            "llm_calls": self.calls,
            "llm_cached": self.cached,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "llm_ms": self.ms,
            "llm_service_ms": self.service_ms,
            "llm_queue_ms": self.queue_ms,
            "llm_service_unknown": self.service_unknown,
            "llm_truncated": self.truncated,
            "cost_usd": None if self.unpriced and not self.cost_usd else self.cost_usd,
            "llm_retries": self.retries,
        }


_SCOPE: contextvars.ContextVar[dict] = contextvars.ContextVar("ragsweep_llm_scope", default={})
_TRACE: contextvars.ContextVar[Trace | None] = contextvars.ContextVar("ragsweep_llm_trace", default=None)


@contextmanager
def llm_scope(trace: Trace | None = None, **scope):
    """Attribute LLM calls made inside to ``scope`` (stage, config_id, judge) and record them in ``trace``."""
    t1 = _SCOPE.set({**_SCOPE.get(), **scope})
    t2 = _TRACE.set(trace)
    try:
        yield trace
    finally:
        _SCOPE.reset(t1)
        _TRACE.reset(t2)


def current_scope() -> dict:
    return dict(_SCOPE.get())


def current_trace() -> Trace | None:
    return _TRACE.get()


_EXTRA: contextvars.ContextVar[dict] = contextvars.ContextVar("ragsweep_llm_extra", default={})


@contextmanager
def llm_extra(**params):
    """Request parameters every LLM call made inside adds (a judgement's repeat: its own ``seed``), however deep in
    LlamaIndex it is made; they are part of the call cache's key, so a repeat is a call of its own."""
    token = _EXTRA.set({**_EXTRA.get(), **params})
    try:
        yield
    finally:
        _EXTRA.reset(token)


def current_extra() -> dict:
    return dict(_EXTRA.get())
