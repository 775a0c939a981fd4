"""Benchmark: a LegalBench-RAG contractnli sweep with the local executor and with Ray on this machine.

Sweep: 3 splitters x {bm25, vector, fusion} x top_k {5, 10} = 18 configurations over the 977
contractnli questions (95 documents), bundled MiniLM embeddings. For each executor, as whole
`ragsweep run` processes:
  - cold: empty cache and run directory (chunk, embed, index, answer, score);
  - warm: the cache the cold run left, a fresh run directory (answer and score only; the
    BERTScore pairs are cached too, so this is mostly retrieval, answering and Ray's overhead);
each with its wall time and peak memory: the largest sum of resident set sizes over the process
tree (for Ray: the driver, the Ray processes it starts and the workers), sampled every 0.2 s.
The executors alternate (local, ray, local, ray, ...) so drifting machine load hits both.

Usage: python bench/ray_bench.py [--data ../shared/datasets/legalbench-rag] [--repeat 1] [--json FILE]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from legalbench_args import parse_args
from legalbench_spec import sweep_spec
from measure import measured

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], "contractnli")
    work = Path(tempfile.mkdtemp(prefix="ragsweep-raybench-"))
    spec = work / "spec.yaml"
    spec.write_text(sweep_spec(args.data, "contractnli", [5, 10], work / "runs"), encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "RAY_USAGE_STATS_ENABLED": "0"}
    results: dict[str, dict[str, list]] = {
        e: {"cold_s": [], "cold_peak_mb": [], "warm_s": [], "warm_peak_mb": [], "stages": []} for e in ("local", "ray")
    }
    try:
        for i in range(args.repeat):
            for executor in ("local", "ray"):
                cache = work / f"cache-{executor}-{i}"
                cmd = [
                    sys.executable,
                    "-m",
                    "ragsweep.cli",
                    "run",
                    str(spec),
                    "--no-progress",
                    "--cache",
                    str(cache),
                    "--executor",
                    executor,
                    "--fresh",
                ]
                r = results[executor]
                wall, peak = measured(cmd, env)
                r["cold_s"].append(wall)
                r["cold_peak_mb"].append(peak / 2**20)
                manifest = json.loads((work / "runs" / "bench-contractnli" / "manifest.json").read_text())
                r["stages"].append(manifest["invocations"][-1]["timings_s"])
                r["chunks"] = manifest["invocations"][-1]["chunks"]
                r["records"] = manifest["records"]
                wall, peak = measured(cmd, env)
                r["warm_s"].append(wall)
                r["warm_peak_mb"].append(peak / 2**20)
                shutil.rmtree(cache)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = statistics.median
    fig = {
        e: {k: med(v) for k, v in r.items() if k in ("cold_s", "cold_peak_mb", "warm_s", "warm_peak_mb")}
        | {"runs": {k: v for k, v in r.items() if k != "stages"}, "stages_s": r["stages"][0]}
        for e, r in results.items()
    }
    loc, ray = fig["local"], fig["ray"]
    print(
        f"contractnli sweep: 18 configurations x 977 questions = {results['local']['records']} records; "
        f"chunks {results['local']['chunks']} (median of {args.repeat}; nproc {os.cpu_count()})"
    )
    print(f"{'':8}{'cold s':>10}{'peak MB':>10}{'warm s':>10}{'peak MB':>10}")
    for name, f in fig.items():
        print(f"{name:8}{f['cold_s']:10.1f}{f['cold_peak_mb']:10.0f}{f['warm_s']:10.1f}{f['warm_peak_mb']:10.0f}")
    print(
        f"ray / local: cold {ray['cold_s'] / loc['cold_s']:.2f}x, warm {ray['warm_s'] / loc['warm_s']:.2f}x, "
        f"peak memory cold {ray['cold_peak_mb'] / loc['cold_peak_mb']:.2f}x"
    )
    print(f"local cold stages (s): {json.dumps(loc['stages_s'])}")
    print(f"ray cold stages (worker s): {json.dumps(ray['stages_s'])}")
    if args.json:
        Path(args.json).write_text(json.dumps(fig, indent=2))


if __name__ == "__main__":
    main()
