"""Which LLM failures are worth retrying, and how long to wait before the next try.

Retry 429, 5xx, timeouts and dropped connections; never 401/403 (the key), 404 (the model) or
400 (the request). Waits use exponential backoff with "equal jitter" (Brooker 2015, "Exponential
Backoff and Jitter", AWS Architecture Blog) and honour a server's ``Retry-After``.
"""

from __future__ import annotations

import json
import random
import re
from email.utils import parsedate_to_datetime


def status_of(exc: BaseException) -> int | None:
    return getattr(exc, "status_code", None)


def is_retryable(exc: BaseException) -> bool:
    import openai

    if is_fatal(exc):
        return False
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    status = status_of(exc)
    return status is not None and (status == 429 or status == 408 or status >= 500)


def is_fatal(exc: BaseException) -> bool:
    """Failures that every later call would repeat: a bad key, no access, an unknown model, or
    OpenAI's 429 ``insufficient_quota`` (billing exhausted: waiting does not help)."""
    return status_of(exc) in (401, 403, 404) or getattr(exc, "code", None) == "insufficient_quota"


def retry_after_seconds(exc: BaseException) -> float | None:
    """The wait a server asked for (``retry-after-ms``, ``retry-after`` seconds or HTTP date)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        import time

        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def backoff_delay(
    attempt: int,
    retry_after: float | None = None,
    *,
    base: float = 0.5,
    cap: float = 60.0,
    rng: random.Random | None = None,
) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based).

    With a ``Retry-After`` the server's wait is used (capped at ``cap``); otherwise
    ``d = min(cap, base * 2**attempt)`` and the wait is uniform in [d/2, d].
    """
    if retry_after is not None:
        return min(cap, retry_after)
    d = min(cap, base * (2**attempt))
    return d / 2 + (rng or random).uniform(0, d / 2)


_LIMIT = re.compile(
    r"maximum context length is (\d+)|context (?:window|size|length) of (\d+)|"
    r"n_ctx[\"']?\s*[:=]\s*(\d+)",
    re.IGNORECASE,
)
# the prompt's tokens where the message says them apart from the reply's ("(2531 in the messages, 512 in the
# completion)"), else the request's
_ASKED = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"(\d+) in the messages",
        r"request has (\d+) (?:input )?tokens",
        r"Requested tokens \((\d+)\)",
        r"n_prompt_tokens[\"']?\s*[:=]\s*(\d+)",
        r"you requested (\d+) tokens",
    )
)  # in this order
_OVERFLOW = re.compile(
    r"context[_ ]length[_ ]exceeded|exceed_context_size|maximum context length|exceeds? (?:the )?"
    r"(?:available )?context (?:size|window|length)|context window",
    re.IGNORECASE,
)


def context_overflow(exc: BaseException) -> tuple[int | None, int | None] | None:
    """``(prompt tokens the server counted, its context window)`` when a server refused a request as longer
    than its context window (OpenAI, vLLM, llama-cpp-python: ``context_length_exceeded``; llama.cpp:
    ``exceed_context_size_error``), each None where its message does not say; None for any other error."""
    if status_of(exc) not in (400, 413, 422):
        return None
    body = getattr(exc, "body", None)
    text = " ".join(
        str(x)
        for x in (
            getattr(exc, "code", None) or "",
            getattr(exc, "message", None) or exc,
            json.dumps(body) if isinstance(body, (dict, list)) else body or "",
        )
    )
    if not _OVERFLOW.search(text):
        return None

    def first(*patterns: re.Pattern) -> int | None:
        for pattern in patterns:
            if m := pattern.search(text):
                return int(next(g for g in m.groups() if g))
        return None

    return first(*_ASKED), first(_LIMIT)


def refuses_format(exc: BaseException) -> bool:
    """A request carrying ``response_format`` failed because of it: a 400/422, or a 5xx whose message names it
    (llama-cpp-python answers a ``response_format`` its request type refuses with a 500 validation error)."""
    status = status_of(exc)
    if status in (400, 422):
        return True
    return status is not None and status >= 500 and "response_format" in str(exc)


def connection_failure(exc: BaseException) -> str | None:
    """Why a request could not reach the server at all (``connection refused``, ``host name not resolved``,
    ``cannot connect``), or None when it did (a reply, a timeout, a connection the server dropped or reset:
    a server that is there and may answer the next one)."""
    import httpx
    import openai

    if not isinstance(exc, openai.APIConnectionError) or isinstance(exc, openai.APITimeoutError):
        return None
    seen: BaseException | None = exc
    chain: list[BaseException] = []
    while seen is not None and len(chain) < 8:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    if not any(isinstance(e, (httpx.ConnectError, ConnectionRefusedError)) for e in chain):
        return None
    text = " ".join(str(e) for e in chain).lower()
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or "connection refused" in text:
        return "connection refused"
    if "name or service not known" in text or "nodename nor servname" in text or "name resolution" in text:
        return "host name not resolved"
    return "cannot connect"


def window_in(text: str) -> int | None:
    """The context window a server's refusal states ("context window of 2048", "maximum context length is
    4096", "n_ctx: 2048"), or None."""
    m = _LIMIT.search(text or "")
    return int(next(g for g in m.groups() if g)) if m else None
