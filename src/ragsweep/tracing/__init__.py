"""Optional OpenTelemetry tracing of a sweep and of a served pipeline (issue 42): each answered (configuration,
question) and each judgement becomes spans named after the OpenInference conventions, so that Arize Phoenix shows
them as a RAG trace. On when the spec's ``tracing.otlp`` or the standard ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` /
``OTEL_EXPORTER_OTLP_ENDPOINT`` names an endpoint; off, nothing of OpenTelemetry is imported and every hook is one
check of a module global (BENCHMARKS.md, "Tracing").

The spans are built from the records the stages already write (sources, latencies, tokens, queue waits), in the
process that writes them, so a hook needs no tracing context threaded through LlamaIndex or the LLM engine's loop.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragsweep.config.tracing import TracingSpec
    from ragsweep.tracing.spans import SpanWriter

_WRITER: SpanWriter | None = None
_STACK: list[SpanWriter] = []  # the writers started and not yet stopped, oldest first
_REFUSED: set[str] = set()  # endpoints found unusable: said once, not probed again (each serve worker starts)
_WARNED: set[str] = set()


def endpoint(spec: TracingSpec | None) -> str | None:
    """The OTLP/HTTP traces URL: the spec's, else the per-signal variable, else the general one plus ``/v1/traces``
    (OpenTelemetry's own rule for the HTTP exporter)."""
    if spec is not None and spec.otlp:
        return spec.otlp
    url = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if url:
        return url
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return base.rstrip("/") + "/v1/traces" if base else None


def unreachable(url: str) -> str | None:
    """Why nothing listens at ``url`` (a TCP connection refused or timed out), or None."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "", port), timeout=3).close()
    except OSError as exc:
        return f"no trace collector answers at {parts.scheme}://{parts.netloc} ({exc.strerror or exc})"
    return None


def start(spec: TracingSpec | None, project: str, session: str) -> Callable[[], None]:
    """Send this process's spans from now on when an endpoint is named; returns what ends it (flushes, and puts
    back the tracer there was before: a run in a process that goes on, as the tests' in-process CLI, leaves
    tracing as it found it). ``project``: the Phoenix project unless the spec names one; ``session``: the
    ``session.id`` every span carries (the run's name, ``live``). Already sending there: kept, and ending it is
    left to whoever started it."""
    global _WRITER
    url = endpoint(spec)
    name = (spec.project if spec is not None else None) or project
    session = (spec.session if spec is not None else None) or session
    if url is None or url in _REFUSED or (_WRITER is not None and _WRITER.same(url, name, session)):
        return flush
    problem = unreachable(url)
    if problem is None:
        try:
            from ragsweep.tracing.spans import SpanWriter
        except ImportError as exc:  # OTEL_EXPORTER_OTLP_* set for another program, the extra not installed
            problem = f"{exc.name or 'opentelemetry'} is not installed (pip install 'ragsweep[tracing]')"
    if problem is not None:  # one line, once per process: not an exporter retrying every batch of the run
        _REFUSED.add(url)
        _warn_once(url, f"tracing is off: {problem}")
        return flush
    mine = SpanWriter(url, name, session)
    _STACK.append(mine)
    _WRITER = mine

    def stop() -> None:  # whatever order writers stop in, the one in use is the newest still open
        global _WRITER
        mine.close()
        if mine in _STACK:
            _STACK.remove(mine)
        _WRITER = _STACK[-1] if _STACK else None

    return stop


def active() -> bool:
    return _WRITER is not None


def for_workers(spec: Any) -> Any:
    """``spec`` with the endpoint, project and session this process sends spans to in its ``tracing`` (its
    ``otlp`` None when this process sends none), for the processes that answer for it: Ray workers, on other
    nodes too, lack the driver's ``OTEL_*`` variables, and trace exactly when the driver does (``worker_start``;
    each reads its own ``OTEL_EXPORTER_OTLP_HEADERS``). An endpoint a spec may not name (credentials or a query in
    it, from a variable) is not passed on: one warning, and the workers send nothing."""
    from pydantic import ValidationError

    from ragsweep.config.tracing import TracingSpec

    off = spec.model_copy(update={"tracing": TracingSpec(project=spec.tracing.project)})
    if _WRITER is None:
        return off
    url, project, session = _WRITER.key
    try:
        named = TracingSpec(otlp=url, project=project, session=session)
    except ValidationError:
        _warn_once(
            f"workers:{url}",
            "Ray workers send no spans: the trace endpoint carries credentials or a query, "
            "which are not passed to them; put credentials in OTEL_EXPORTER_OTLP_HEADERS",
        )
        return off
    return spec.model_copy(update={"tracing": named})


def worker_start(spec: Any) -> None:
    """In a Ray worker, before a task answers: send spans where the driver does (``for_workers``; nothing when it
    sends none), through one writer kept for the worker process's later tasks of the same run."""
    t = spec.tracing
    if not t.otlp or (_WRITER is not None and _WRITER.same(t.otlp, t.project or spec.name, t.session or "ray")):
        return
    shutdown()  # another run's writer, in a worker that outlived it
    start(t, spec.name, session="ray")


def answered(config: Any, question: Any, record: Any, nodes: list | None = None) -> None:
    """One answered (configuration, question): a CHAIN span with its retrieval, rerank, transform and generation
    children (``record``: the row the stage writes; ``nodes``: the retrieved nodes, for their texts)."""
    if _WRITER is not None:
        _WRITER.answer(config, question, record, nodes)


def judged(config: Any, question: Any, judge: str, repeat: int, result: dict, llm: Any) -> None:
    """One judgement: an EVALUATOR span with its verdict, tokens and the calls' service time and queue wait."""
    if _WRITER is not None:
        _WRITER.judgement(config, question, judge, repeat, result, llm)


def flush(timeout_s: float = 30.0) -> None:
    """Send what is buffered (the end of a sweep, of a Ray task), waiting at most ``timeout_s`` for the collector."""
    if _WRITER is not None:
        _WRITER.flush(timeout_s)


def _warn_once(key: str, message: str) -> None:
    """One warning line per process and ``key``, credentials redacted."""
    from ragsweep.redact import redact_text

    if key not in _WARNED:
        _WARNED.add(key)
        print(f"warning: {redact_text(message)}", file=sys.stderr)


def shutdown() -> None:
    """Send what is buffered and stop tracing (the exporter's atexit handler does the same at a process's end)."""
    global _WRITER
    while _STACK:
        _STACK.pop().close()
    _WRITER = None
