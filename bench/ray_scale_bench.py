"""Benchmark: one size of the scaling grid (``scale_bench.py``) on a two-node Ray cluster against the local executor.

A head node and a second node are started on this machine (``ray start --head`` and ``ray start --address``, both
on loopback, 1 CPU each; the machine has 2 cores), and the same contractnli grid (18 configurations) over the
corpus made ``--factor`` times larger is run twice, cold (empty cache and run directory each): with the local
executor, then with ``--ray-address`` on that cluster. Printed: both wall times and peaks, Ray's overhead, the hosts
its tasks ran on (the manifest), and whether records, summary and verdict are the same value for value
(``same_results.differences``: latencies left out). No speed-up is expected on 2 cores.

``--reuse DIR/xF`` (a size ``scale_bench.py --keep DIR`` kept): the Ray run is made on that corpus and compared
with its cold local run (``runs/cold``), instead of running the local executor again.

Usage: python bench/ray_scale_bench.py [--factor 1] [--data ../shared/datasets/legalbench-rag] [--json FILE]
       [--reuse DIR/xF]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from legalbench_spec import sweep_spec
from measure import measured
from same_results import differences
from scale_corpus import build

ROOT = Path(__file__).resolve().parents[1]
RAY = Path(sys.executable).with_name("ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ray(*args: str, env: dict) -> None:
    subprocess.run([str(RAY), *args], env=env, check=True, capture_output=True, timeout=180)


def _described(corpus: Path) -> dict:
    """Documents and questions of a kept corpus (what ``scale_corpus.build`` reports of one it makes)."""
    tests = json.loads((corpus / "benchmarks" / "contractnli.json").read_text(encoding="utf-8"))["tests"]
    return {"documents": len(list((corpus / "corpus" / "contractnli").glob("*.txt"))), "questions": len(tests)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "datasets" / "legalbench-rag")
    ap.add_argument("--factor", type=int, default=1)
    ap.add_argument("--json")
    ap.add_argument("--reuse", type=Path, help="a size scale_bench.py --keep kept: its corpus and cold local run")
    args = ap.parse_args()
    if args.reuse and not (args.reuse / "runs" / "cold" / "manifest.json").is_file():
        ap.error(
            f"--reuse {args.reuse}: no kept cold run (runs/cold/manifest.json); make one with scale_bench.py --keep"
        )
    work = Path(tempfile.mkdtemp(prefix="rs-rayscale-", dir="/tmp"))  # Ray's socket paths must stay short
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAGSWEEP_DEFAULT_BACKEND", None)
    port = _free_port()
    common = ["--num-cpus", "1", "--object-store-memory", str(400 * 2**20), "--disable-usage-stats"]
    out: dict = {}
    try:
        corpus = args.reuse if args.reuse else work / "corpus"
        info = _described(corpus) if args.reuse else build(args.data, args.factor, corpus)
        runs = {}
        if args.reuse:
            run_dir = args.reuse / "runs" / "cold"
            manifest = json.loads((run_dir / "manifest.json").read_text())
            runs["local"] = {"wall_s": None, "peak_mb": None, "dir": run_dir, "invocation": manifest["invocations"][-1]}
        for executor in ("ray",) if args.reuse else ("local", "ray"):
            spec = work / f"spec-{executor}.yaml"
            spec.write_text(sweep_spec(corpus, "contractnli", [5, 10], work / f"runs-{executor}"))
            cmd = [sys.executable, "-m", "ragsweep.cli", "run", str(spec), "--no-progress"]
            cmd += ["--cache", str(work / f"cache-{executor}"), "--fresh"]
            if executor == "ray":
                _ray(
                    "start",
                    "--head",
                    "--node-ip-address",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--include-dashboard=false",
                    "--temp-dir",
                    str(work / "ray"),
                    *common,
                    env=env,
                )
                _ray("start", "--address", f"127.0.0.1:{port}", "--node-ip-address", "127.0.0.1", *common, env=env)
                cmd += ["--ray-address", f"127.0.0.1:{port}"]
            wall, peak = measured(cmd, env)
            run_dir = work / f"runs-{executor}" / "bench-contractnli"
            inv = json.loads((run_dir / "manifest.json").read_text())["invocations"][-1]
            runs[executor] = {"wall_s": wall, "peak_mb": peak / 2**20, "dir": run_dir, "invocation": inv}
            print(
                f"{executor}: {wall:.1f} s, peak {peak / 2**20:.0f} MB; executor {json.dumps(inv.get('executor'))}; "
                f"stages {json.dumps(inv['timings_s'])}",
                flush=True,
            )
        diff = differences(runs["local"]["dir"], runs["ray"]["dir"])
        # the kept run's process time is not known here: both runs' own totals (the manifests'); a kept run answered
        # again since (``--fresh`` on its run directory, its cache warm) has that warm run's total
        if args.reuse:
            ray_s, local_s = (runs[e]["invocation"]["timings_s"]["total"] for e in ("ray", "local"))
        else:
            ray_s, local_s = runs["ray"]["wall_s"], runs["local"]["wall_s"]
        overhead = ray_s / local_s - 1
        print(
            f"x{args.factor} ({info['documents']} documents, {info['questions']} questions): Ray on two nodes "
            f"{ray_s:.1f} s against local {local_s:.1f} s (overhead {overhead:+.0%}); "
            f"records, summary and verdict {'the same' if not diff else 'DIFFER: ' + ', '.join(diff)}",
            flush=True,
        )
        out = {
            **info,
            "same": not diff,
            "differences": diff,
            "overhead": overhead,
            **{e: {k: v for k, v in r.items() if k != "dir"} for e, r in runs.items()},
        }
    finally:
        subprocess.run([str(RAY), "stop", "--force"], env=env, capture_output=True, timeout=120)
        if out.get("same", True):
            shutil.rmtree(work, ignore_errors=True)
        else:  # the runs stay, to see what differs
            print(f"kept for inspection: {work}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, default=str))
    return 0 if out.get("same") else 1


if __name__ == "__main__":
    sys.exit(main())
