"""Benchmark: ``ragsweep serve`` under load, over real HTTP on loopback, for each ``--workers``.

Serves an exported configuration (default: the demo run's pick, exported here) in a process of its own, then asks
the demo questions at 1, 4 and 16 requests in flight (each client thread keeps one connection), and again at 16
while other clients send oversized chat requests (2 MB bodies, refused with 413). Prints requests/s and the
p50/p95 latency of the normal questions per load, the server's resident memory (after start, after warm-up, at
its peak), and the target ratio: p95 at 16 in flight over p50 alone (issue 42 asks for at most 3x).

``--llm-delay-ms 200``: the I/O-bound case. A configuration whose answers an LLM writes (BM25 top 3 over the demo
corpus, ``generator: llm``) is swept and exported against tests/fake_openai.py, a local OpenAI-compatible server
that answers requests in parallel, which then takes 200 ms per answer; every request asks a question never asked
before (a suffix), so none is answered from the LLM call cache. ``--fresh`` does the same for any configuration:
each question is then embedded when asked, as a deployed server's questions are (the demo questions' vectors are
otherwise cached after their first asking).

Usage: python bench/serve_bench.py [--folder EXPORTED] [--workers 1 4] [--requests 96] [--llm-delay-ms 0]
                                   [--fresh] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from measure import bench_env, demo_llm_spec

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: object) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ragsweep.cli", *map(str, args)], env=bench_env(), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"ragsweep {args[0]} failed: {done.stderr.strip()[-500:]}")


def _exported(work: Path, spec: Path) -> Path:
    """The pick of the sweep ``spec``, run into ``work`` and exported."""
    _cli("run", spec, "--no-progress", "--out", work / "run", "--cache", work / "cache")
    _cli("export", work / "run", "--out", work / "chosen")
    return work / "chosen"


def _fake_llm(work: Path) -> tuple[subprocess.Popen, str, Path]:
    """tests/fake_openai.py in a process of its own (answering at once for now) and a spec whose answers it
    writes."""
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "fake_openai.py"), "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    line = server.stdout.readline().strip() if server.stdout else ""
    if not line.startswith("listening on "):
        raise SystemExit(f"the fake LLM server did not start: {line!r}")
    base_url = line.removeprefix("listening on ")
    llm = {"model": "fake-model", "base_url": base_url, "api_key_env": None, "concurrency": 16}
    spec = demo_llm_spec("serve-llm", llm)
    path = work / "serve-llm.json"  # JSON is YAML
    path.write_text(json.dumps(spec))
    return server, base_url, path


def _delay(base_url: str, ms: float) -> None:
    """From now on every generation call takes ``ms`` of the fake server's time (calls still run in parallel)."""
    rules = json.dumps([{"kind": "generation", "action": "sleep", "delay_ms": ms}]).encode()
    request = urllib.request.Request(f"{base_url}/_rules", data=rules, headers={"content-type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _load(url: str, questions: list[str], in_flight: int, total: int, oversized: int = 0, tag: str = "") -> dict:
    """``total`` questions at ``in_flight`` at once; with ``oversized``, that many more clients send 2 MB chat
    bodies meanwhile; with ``tag``, each question made new by a suffix naming the request."""
    import httpx

    local = threading.local()

    def client() -> httpx.Client:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=url, timeout=300)
        return local.client

    def ask(i: int) -> float:
        question = questions[i % len(questions)] + (f" (request {tag}-{i})" if tag else "")
        t0 = time.perf_counter()
        reply = client().post("/query", json={"question": question})
        if reply.status_code != 200:
            raise SystemExit(f"a normal question got {reply.status_code}: {reply.text[:200]}")
        return time.perf_counter() - t0

    stop, refused = threading.Event(), []
    body = json.dumps({"messages": [{"role": "user", "content": "x" * 2_000_000}]}).encode()

    def flood() -> None:
        with httpx.Client(base_url=url, timeout=120) as c:
            while not stop.is_set():
                refused.append(c.post("/v1/chat/completions", content=body).status_code)

    floods = [threading.Thread(target=flood) for _ in range(oversized)]
    for t in floods:
        t.start()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=in_flight) as pool:
        latencies = list(pool.map(ask, range(total)))
    wall = time.perf_counter() - t0
    stop.set()
    for t in floods:
        t.join()
    return {
        "in_flight": in_flight,
        "oversized_clients": oversized,
        "requests": total,
        "requests_per_s": total / wall,
        "p50_s": statistics.median(latencies),
        "p95_s": _percentile(latencies, 0.95),
        "oversized_refused": sum(code == 413 for code in refused),
        "oversized_other": sum(code != 413 for code in refused),
    }


class _Peak:
    """The server process's resident memory, sampled every 0.1 s while the loads run."""

    def __init__(self, pid: int) -> None:
        import psutil

        self.process, self.peak, self._stop = psutil.Process(pid), 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def now(self) -> int:
        return self.process.memory_info().rss

    def _sample(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, self.now())

    def __enter__(self) -> _Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _serve_and_load(folder: Path, workers: int, questions: list[str], requests: int, fresh: bool, log: Path) -> dict:
    """One server with ``workers``: its table, and its memory after start, after warm-up and at its peak."""
    cmd = [sys.executable, "-m", "ragsweep.cli", "serve", str(folder), "--port", "0", "--workers", str(workers)]
    err = open(log, "w+")  # a file, not a pipe nobody reads: the server never stalls
    server = subprocess.Popen(cmd, env=bench_env(), stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        match = re.search(r"at (http://127\.0\.0\.1:\d+) ", server.stdout.readline() if server.stdout else "")
        if not match:
            server.wait(timeout=60)
            err.seek(0)
            raise SystemExit(f"serve did not start: {err.read()[-500:]}")
        url = match.group(1)
        with _Peak(server.pid) as memory:
            _load(url, questions, 1, 8, tag="start")  # the HTTP path and the first pipeline warm
            started = memory.now()
            # every worker's first questions, new ones: each twin loads its model (if it needs one) now, not in a row
            _load(url, questions, workers, 4 * workers, tag="warm")
            warm = memory.now()
            loads = [(1, 0), (4, 0), (16, 0), (16, 4)]
            rows = [
                _load(url, questions, n, requests, oversized, tag=f"{n}-{oversized}" if fresh else "")
                for n, oversized in loads
            ]
    finally:
        server.terminate()
        server.wait(timeout=60)
        err.close()
    for row in rows:
        row["workers"] = workers
    mib = 1 << 20
    return {"workers": workers, "rows": rows, "rss_mib": [started / mib, warm / mib, memory.peak / mib]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folder", type=Path, help="an exported configuration (default: made here)")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 4], help="serve --workers values to compare")
    ap.add_argument("--requests", type=int, default=96, help="questions asked per load")
    ap.add_argument("--llm-delay-ms", type=float, default=0.0, help="answers by an LLM taking this long (0: none)")
    ap.add_argument("--fresh", action="store_true", help="every question new (always with --llm-delay-ms)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    from ragsweep.datasets.demo import load_demo_corpus, load_demo_questions

    questions = [q.question for q in load_demo_questions(load_demo_corpus())[0]]
    llm = args.llm_delay_ms > 0
    fake = None
    with tempfile.TemporaryDirectory(prefix="serve-bench-") as tmp:
        work = Path(tmp)
        try:
            if llm:
                fake, base_url, spec = _fake_llm(work)
                folder = _exported(work, spec)
                _delay(base_url, args.llm_delay_ms)
            else:
                folder = args.folder or _exported(work, ROOT / "specs" / "demo.yaml")
            served = [
                _serve_and_load(folder, w, questions, args.requests, llm or args.fresh, work / "serve.stderr")
                for w in args.workers
            ]
        finally:
            if fake is not None:
                fake.terminate()
                fake.wait(timeout=30)
    print("| workers | in flight | oversized clients | requests/s | p50 (s) | p95 (s) | 413s |")
    print("|---|---|---|---|---|---|---|")
    for one in served:
        for r in one["rows"]:
            print(
                f"| {r['workers']} | {r['in_flight']} | {r['oversized_clients']} | {r['requests_per_s']:.1f} | "
                f"{r['p50_s']:.3f} | {r['p95_s']:.3f} | {r['oversized_refused']} |"
            )
    ratios = {}
    for one in served:
        alone = one["rows"][0]["p50_s"]
        for r in one["rows"][2:]:
            ratios[
                f"workers {one['workers']}: p95 at 16{' (oversized)' if r['oversized_clients'] else ''} / p50 alone"
            ] = r["p95_s"] / alone
        start, warm, peak = one["rss_mib"]
        print(f"workers {one['workers']}: RSS {start:.0f} MiB started, {warm:.0f} MiB warm, {peak:.0f} MiB peak")
    for name, ratio in ratios.items():
        print(f"{name}: {ratio:.1f}x (target <= 3x)")
    if args.json:
        args.json.write_text(json.dumps({"served": served, "ratios": ratios}, indent=1))


if __name__ == "__main__":
    main()
