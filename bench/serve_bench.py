"""Benchmark: ``ragsweep serve`` under load, over real HTTP on loopback.

Serves an exported configuration (default: the demo run's pick, exported here) in a process of its own, then asks
the demo questions at 1, 4 and 16 requests in flight (each client thread keeps one connection), and again at 16
while other clients send oversized chat requests (2 MB bodies, refused with 413). Prints requests/s and the
p50/p95 latency of the normal questions per load, and the target ratio: p95 at 16 in flight over p50 alone (issue
42 asks for at most 3x).

Usage: python bench/serve_bench.py [--folder EXPORTED] [--requests 96] [--json out.json]
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from measure import bench_env

ROOT = Path(__file__).resolve().parents[1]


def _exported(work: Path) -> Path:
    """The demo run's pick, exported (the demo sweep run first, into ``work``)."""
    env = bench_env()
    run = subprocess.run(
        [sys.executable, "-m", "ragsweep.cli", "run", str(ROOT / "specs" / "demo.yaml"), "--no-progress"]
        + ["--out", str(work / "run"), "--cache", str(work / "cache")],
        env=env,
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        raise SystemExit(f"the demo run failed: {run.stderr.strip()[-500:]}")
    out = work / "chosen"
    cmd = [sys.executable, "-m", "ragsweep.cli", "export", str(work / "run"), "--out", str(out)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the export failed: {done.stderr.strip()[-500:]}")
    return out


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _load(url: str, questions: list[str], in_flight: int, total: int, oversized: int = 0) -> dict:
    """``total`` questions at ``in_flight`` at once; with ``oversized``, that many more clients send 2 MB chat
    bodies meanwhile."""
    import httpx

    local = threading.local()

    def client() -> httpx.Client:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=url, timeout=120)
        return local.client

    def ask(i: int) -> float:
        t0 = time.perf_counter()
        reply = client().post("/query", json={"question": questions[i % len(questions)]})
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folder", type=Path, help="an exported configuration (default: the demo's pick, made here)")
    ap.add_argument("--requests", type=int, default=96, help="questions asked per load")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    from ragsweep.datasets.demo import load_demo_corpus, load_demo_questions

    questions = [q.question for q in load_demo_questions(load_demo_corpus())[0]]
    with tempfile.TemporaryDirectory(prefix="serve-bench-") as tmp:
        folder = args.folder or _exported(Path(tmp))
        cmd = [sys.executable, "-m", "ragsweep.cli", "serve", str(folder), "--port", "0"]
        log = open(Path(tmp) / "serve.stderr", "w+")  # a file, not a pipe nobody reads: the server never stalls
        server = subprocess.Popen(cmd, env=bench_env(), stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            match = re.search(r"at (http://127\.0\.0\.1:\d+) ", server.stdout.readline())
            if not match:
                server.wait(timeout=60)
                log.seek(0)
                raise SystemExit(f"serve did not start: {log.read()[-500:]}")
            url = match.group(1)
            _load(url, questions, 1, 8)  # warm: the first questions load the models
            rows = [_load(url, questions, n, args.requests) for n in (1, 4, 16)]
            rows.append(_load(url, questions, 16, args.requests, oversized=4))
        finally:
            server.terminate()
            server.wait(timeout=60)
            log.close()
    print("| in flight | oversized clients | requests/s | p50 (s) | p95 (s) | 413s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['in_flight']} | {r['oversized_clients']} | {r['requests_per_s']:.1f} | {r['p50_s']:.3f} | "
            f"{r['p95_s']:.3f} | {r['oversized_refused']} |"
        )
    alone = rows[0]["p50_s"]
    ratios = {
        f"p95 at 16 / p50 alone{' (oversized)' if r['oversized_clients'] else ''}": r["p95_s"] / alone for r in rows[2:]
    }
    for name, ratio in ratios.items():
        print(f"{name}: {ratio:.1f}x (target <= 3x)")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "ratios": ratios}, indent=1))


if __name__ == "__main__":
    main()
