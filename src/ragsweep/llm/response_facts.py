"""What a reply says beyond its text: why it ended, the server's own time on it; and what a call adds to the
trace of the unit of work that made it."""

from __future__ import annotations

from ragsweep.llm.cache import CachedCall
from ragsweep.llm.usage import Trace


def timeout_errors() -> tuple[type[BaseException], ...]:
    import openai

    return (openai.APITimeoutError,)


def finish_reason(raw) -> str | None:
    try:
        return raw.choices[0].finish_reason  # type: ignore[union-attr]
    except (AttributeError, IndexError, TypeError):
        return None


def server_ms(raw) -> float | None:
    """The service time a server reported with its reply: llama.cpp's ``timings`` (prompt + generation)."""
    extra = getattr(raw, "model_extra", None) or {}
    timings = extra.get("timings") if isinstance(extra, dict) else None
    if not isinstance(timings, dict):
        return None
    try:
        ms = float(timings.get("prompt_ms") or 0) + float(timings.get("predicted_ms") or 0)
    except (TypeError, ValueError):
        return None
    return ms if ms > 0 else None


def record_call(trace: Trace | None, call: CachedCall, cached: bool) -> None:
    if trace is None:
        return
    trace.calls += 1
    trace.cached += int(cached)
    trace.prompt_tokens += call.prompt_tokens
    trace.completion_tokens += call.completion_tokens
    trace.ms += call.ms
    trace.truncated += call.finish_reason == "length"
    service = call.ms if call.service_ms is None else call.service_ms
    trace.service_ms += service
    trace.service_unknown += call.service_ms is None
    trace.replies.append(call.content)
    if cached:
        trace.cached_ms += service  # replayed: the server's time on it, not what it once waited in a queue
    else:
        trace.queue_ms += call.queue_ms or 0.0
        if call.cost_usd is None:
            trace.unpriced += 1
        else:
            trace.cost_usd += call.cost_usd
