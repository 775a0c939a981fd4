"""What a request may cost before it is read: a body cap checked on the declared length and while the body
arrives, and a bearer token; and what a failure the app did not handle becomes (a 500 line).

A 30 MB body was read whole before it was refused; an ASGI wrapper now answers 413 from the ``Content-Length``
header alone, and for a body sent without one (chunked) as soon as its bytes pass the cap. The token is compared
in constant time (``hmac.compare_digest``) and never echoed.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from ragsweep.errors import short_reason

MAX_BODY_BYTES = 1 << 20  # 1 MiB: four maximal chat messages of 4-byte characters fit with room to spare
OPEN_PATHS = ("/health",)  # a load balancer's probe needs no token


def _send_error(status: int, message: str, kind: str, headers: list | None = None):
    body = json.dumps({"error": {"message": message, "type": kind}}).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]

    async def send_to(send) -> None:
        await send({"type": "http.response.start", "status": status, "headers": head + (headers or [])})
        await send({"type": "http.response.body", "body": body})

    return send_to


class Guard:
    """ASGI middleware: the token first (401), then the body cap (413), then the app, whose unhandled exceptions
    become one 500 line here: Starlette's outermost handler answers them too but then raises again, so uvicorn
    printed a traceback (a pure ASGI wrapper, not an ``@app.middleware``, whose task group added about 0.4 ms to
    each request's 1.0: ``bench/serve_http_bench.py``)."""

    def __init__(self, app: Any, api_key: str | None = None, max_body: int = MAX_BODY_BYTES) -> None:
        self.app, self.api_key, self.max_body = app, api_key, max_body

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        if self.api_key is not None and scope.get("path") not in OPEN_PATHS and not self._authorised(headers):
            return await _send_error(
                401,
                "missing or wrong API key; send the header Authorization: Bearer <key> (the openai clients' api_key)",
                "authentication_error",
                [(b"www-authenticate", b"Bearer")],
            )(send)
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            return await _send_error(413, self._too_large(int(declared)), "invalid_request_error")(send)
        received, over, answered, started = 0, False, False, False

        async def counted():
            """The body's messages; past the cap, a disconnect, so the app stops reading (and its reply is
            replaced by the 413 below)."""
            nonlocal received, over
            if over:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    over = True
                    return {"type": "http.disconnect"}
            return message

        async def replaced(message) -> None:
            nonlocal answered, started
            started = started or message["type"] == "http.response.start"
            if not over:
                await send(message)
            elif not answered:
                answered = True
                await _send_error(413, self._too_large(received), "invalid_request_error")(send)

        try:
            await self.app(scope, counted, replaced)
        except Exception as exc:  # noqa: BLE001 - anything the app's handlers left: one JSON line, no traceback
            if started and not over:  # a reply already under way: nothing better can be sent
                raise
            if not over:
                return await _send_error(500, f"answering failed: {short_reason(exc)}", "server_error")(send)
        if over and not answered:
            await _send_error(413, self._too_large(received), "invalid_request_error")(send)

    def _authorised(self, headers: dict) -> bool:
        scheme, _, token = headers.get(b"authorization", b"").strip().partition(b" ")
        expected = (self.api_key or "").encode()
        return scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), expected)

    def _too_large(self, size: int) -> str:
        return f"the body has {size} bytes or more, more than {self.max_body}; send a shorter request"


MAX_QUEUE = 64  # questions answered or waiting at once; more are told to come back (503)


class Busy(Exception):
    """More questions wait than the queue holds (503), with the seconds after which to retry."""

    def __init__(self, waiting: int, retry_after: int) -> None:
        super().__init__(
            f"{waiting} questions are being answered or wait, the most this server queues; retry after {retry_after} s"
        )
        self.retry_after = retry_after


class AnswerQueue:
    """Counts the questions in the workers' hands (answered or waiting) and refuses one more than ``limit``, rather
    than letting every client wait without end; ``Retry-After`` is the queue's length times the mean answering
    time of the last questions, divided across the ``workers`` answering at once, at least a second."""

    def __init__(self, limit: int = MAX_QUEUE, workers: int = 1) -> None:
        self.limit, self.workers, self.waiting, self._mean_s = limit, workers, 0, 0.0

    def admit(self) -> None:
        if self.waiting >= self.limit:
            raise Busy(self.waiting, max(1, round(self.waiting * self._mean_s / self.workers)))
        self.waiting += 1

    def done(self, seconds: float) -> None:
        self.waiting -= 1
        self._mean_s = seconds if self._mean_s == 0.0 else 0.9 * self._mean_s + 0.1 * seconds
