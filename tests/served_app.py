"""``ragsweep serve``'s tests' helpers: an ASGI app served by uvicorn on a loopback port, in a thread of the test's
process, and malformed requests mutated from valid ones."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator


@contextlib.contextmanager
def running(app) -> Iterator[str]:
    """Serve ``app`` until the block ends (uvicorn's shutdown, the app's lifespan included); yields its URL."""
    import uvicorn

    sock = socket.create_server(("127.0.0.1", 0))  # bound here and kept: no other process can take the port
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def mutations(cid: str, count: int) -> list[tuple[str, bytes]]:
    """``count`` malformed requests, each mutated from a valid body so that it cannot be valid: truncated JSON,
    bytes that are not UTF-8, a body that is not an object, a required field removed, a value of a wrong type or
    with no text, an unknown content part."""
    import json
    import random

    rng = random.Random(41)
    valid = {
        "/query": {"question": "Who may terminate the lease?", "answer": True},
        "/v1/chat/completions": {
            "model": cid,
            "messages": [{"role": "user", "content": "Who may terminate the lease?"}],
            "stream": False,
        },
        "/v1/completions": {"model": cid, "prompt": "Who may terminate the lease?"},
    }
    required = {"/query": "question", "/v1/chat/completions": "messages", "/v1/completions": "prompt"}
    wrong = {
        "question": [5, None, [], {}, True, "", " \t\x00", "\u200b\u2028"],
        "answer": ["yes", 1, None, "false", 0.5],
        "messages": [
            "hello",
            [],
            [1],
            [None],
            [{"role": "robot", "content": "x"}],
            [{"role": "user", "content": 5}],
            [{"role": "user", "content": [{"type": "text", "text": 5}]}],
            [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}],
            [{"role": "user", "content": [{"text": "no type"}]}],
            [{"role": "user", "content": "\x07\x08"}],
            [{"role": "system", "content": "only a system message"}],
            [{"content": "no role"}],
        ],
        "stream": ["yes", 1, None, "true"],
        "prompt": [5, None, [], ["a", "b"], [5], "\x00\x01", {"text": "x"}],
        "model": [5, [], {"id": "x"}],
    }
    out = []
    for _ in range(count):
        path = rng.choice(sorted(valid))
        body = dict(valid[path])
        kind = rng.randrange(5)
        if kind == 0:  # truncated JSON: a proper prefix of an object is never an object
            text = json.dumps(body)
            out.append((path, text[: rng.randrange(1, len(text))].encode()))
            continue
        if kind == 1:
            out.append((path, rng.choice([b"\xff\xfe{", b"[]", b'"text"', b"5", b"null", b"{,}"])))
            continue
        if kind == 2:
            del body[required[path]]
        else:
            field = rng.choice([f for f in sorted(wrong) if f in body])
            body[field] = rng.choice(wrong[field])
        out.append((path, json.dumps(body).encode()))
    return out
