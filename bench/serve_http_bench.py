"""Benchmark: the HTTP layer of ``ragsweep serve`` alone, per request.

A pipeline double that answers at once behind ``make_app``, served by uvicorn in this process on loopback; 1,200
sequential requests per route on one keep-alive connection, the median of the last 1,000. What the server adds to
each question, without the pipeline's own time (which ``serve_bench.py`` measures with it, noisily at 3-5 ms).
Run it with ``PYTHONPATH=<another checkout>/src`` to measure another version of the code.

Usage: python bench/serve_http_bench.py [--label NAME]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import threading
import time

import httpx
import uvicorn

from ragsweep.serve import make_app

QUESTION = "Who may terminate the lease?"


class _Instant:
    config_id = "instant"

    def ask(self, question: str, answer: bool = True, stream=None) -> dict:
        return {"answer": "a", "sources": [{"rank": 1, "doc_id": "d", "start": 0, "end": 3, "score": 0.5}]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--label", default="this checkout")
    label = ap.parse_args().label
    sock = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(make_app(_Instant()), log_level="warning"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    routes = (
        ("/query", {"question": QUESTION}),
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": QUESTION}]}),
    )
    with httpx.Client(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}") as client:
        for path, body in routes:
            took = []
            for _ in range(1200):
                t0 = time.perf_counter()
                reply = client.post(path, json=body)
                took.append(time.perf_counter() - t0)
                if reply.status_code != 200:
                    raise SystemExit(f"{path}: {reply.status_code} {reply.text[:200]}")
            print(f"{label}  {path}: median {statistics.median(took[200:]) * 1e3:.2f} ms per request")
    server.should_exit = True


if __name__ == "__main__":
    main()
