"""Benchmark: stage 1 of a sweep against its targets, measured side by side in one session.

For LegalBench-RAG privacy_qa (3 splitters x {bm25, vector, fusion} x top_k {3, 5, 10} = 27
configurations x 194 questions) and contractnli (top_k {5, 10}: 18 configurations x 977 questions):
  - ``ragsweep run`` cold (empty cache and run directory), per backend (``default``: left unset, which
    resolves to onnx-int8 on a machine without a GPU; ``torch``: PyTorch for the embeddings and the
    BERTScore encoder; ``onnx``, ``onnx-int8``: ONNX Runtime for both), as whole processes: wall time and
    peak resident memory of the process tree (with the one-time ONNX export's child process, as an empty
    cache has it) and of the sweep's own process;
  - a no-op re-run of each cold run (the same command again), ``--noop`` times;
  - privacy_qa only: the naive LlamaIndex loop (``naive_bench.py``: every configuration rebuilt,
    embedded and BERTScored on its own), once.
Prints a table of the four targets: cold >= 10x faster than the naive loop, no-op re-run < 2 % of
cold, peak RSS <= 1.5 GB, contractnli cold <= 150 s.

After each backend's first cold run, its model-compute floor (``floor.py``: the distinct chunk texts embedded
and the distinct pairs BERTScored, models loaded and warm) in the same sitting, and the verdict it gave.

Usage: python bench/stage1_bench.py [--data ../shared/datasets/legalbench-rag] [--repeat 1] [--noop 3]
       [--backends default,torch] [--no-floor] [--skip-naive] [--skip-contractnli] [--json FILE]
       (default: the backend left unset, as the machine resolves it)
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from legalbench_spec import sweep_spec
from measure import bench_env, measured, measured_peaks

ROOT = Path(__file__).resolve().parents[1]
SUBSETS = {"privacy_qa": [3, 5, 10], "contractnli": [5, 10]}


def _env() -> dict:
    return bench_env()


def _sweep(data: str, subset: str, backend: str, repeat: int, noop: int, work: Path, with_floor: bool) -> dict:
    spec = work / f"{subset}-{backend}.yaml"
    spec.write_text(sweep_spec(data, subset, SUBSETS[subset], work / "runs" / backend, backend), encoding="utf-8")
    cold, peaks, own_peaks, reruns, stages, floor = [], [], [], [], None, None
    for i in range(repeat):
        cache = work / f"cache-{subset}-{backend}-{i}"
        cmd = [sys.executable, "-m", "ragsweep.cli", "run", str(spec), "--no-progress", "--cache", str(cache)]
        wall, peak, own = measured_peaks(cmd + ["--fresh"], _env())
        cold.append(wall)
        peaks.append(peak)
        own_peaks.append(own)
        run_dir = work / "runs" / backend / f"bench-{subset}"
        manifest = json.loads((run_dir / "manifest.json").read_text())
        stages = stages or manifest["invocations"][-1]["timings_s"]
        for _ in range(noop):
            reruns.append(measured(cmd, _env())[0])
        if i == 0 and with_floor:  # the floor of the same sweep, models warm, right after its cold run
            out_json = work / f"floor-{subset}-{backend}.json"
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "bench" / "floor.py"),
                    str(run_dir),
                    "--cache",
                    str(cache),
                    "--json",
                    str(out_json),
                ],
                env=_env(),
                check=True,
                capture_output=True,
            )
            floor = json.loads(out_json.read_text())
        verdict = json.loads((run_dir / "verdict.json").read_text())
        shutil.rmtree(cache, ignore_errors=True)
    return {
        "cold_s": statistics.median(cold),
        "cold_runs": cold,
        "peak_rss_mb": max(peaks) / 2**20,
        "peak_rss_runs_mb": [p / 2**20 for p in peaks],
        "sweep_process_peak_mb": max(own_peaks) / 2**20,
        "noop_s": statistics.median(reruns) if reruns else None,
        "noop_runs": reruns,
        "stages_s": stages,
        "records": manifest["records"],
        "backends": manifest.get("backends"),
        "floor": floor,
        "verdict": {k: verdict.get(k) for k in ("metric", "chosen", "tied")},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets" / "legalbench-rag"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--noop", type=int, default=3)
    ap.add_argument("--backends", default="default,torch", help="default: left unset (the machine's choice)")
    ap.add_argument("--no-floor", action="store_true", help="skip the model-compute floor (bench/floor.py)")
    ap.add_argument("--skip-naive", action="store_true")
    ap.add_argument("--skip-contractnli", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ragsweep-stage1-"))
    out: dict = {"sweeps": {}}
    try:
        if not args.skip_naive:
            naive = work / "naive.json"
            wall, peak = measured(
                [sys.executable, str(ROOT / "bench" / "naive_bench.py"), "--data", args.data, "--json", str(naive)],
                _env(),
            )
            out["naive"] = {"wall_s": wall, "peak_rss_mb": peak / 2**20, **json.loads(naive.read_text())}
            print(f"naive LlamaIndex loop, privacy_qa: {wall:.1f} s, peak {peak / 2**20:.0f} MB", flush=True)
        subsets = ["privacy_qa"] + ([] if args.skip_contractnli else ["contractnli"])
        for subset in subsets:
            for backend in args.backends.split(","):
                r = _sweep(args.data, subset, backend, args.repeat, args.noop, work, not args.no_floor)
                out["sweeps"][f"{subset}/{backend}"] = r
                noop = f"{r['noop_s']:.2f} s ({r['noop_s'] / r['cold_s']:.1%})" if r["noop_s"] else "-"
                print(
                    f"{subset:12s} {backend:10s} cold {r['cold_s']:7.1f} s "
                    f"(runs {', '.join(f'{x:.1f}' for x in r['cold_runs'])}) "
                    f"peak {r['peak_rss_mb']:6.0f} MB (sweep process {r['sweep_process_peak_mb']:.0f})  no-op {noop}"
                    f"  stages {json.dumps(r['stages_s'])}",
                    flush=True,
                )
                if r["floor"]:
                    f = r["floor"]
                    emb = sum(e["chunks_s"] for e in f["embeddings"].values())
                    bs = f["bertscore"]
                    qs = sum(e["questions_s"] for e in f["embeddings"].values())
                    print(
                        f"  floor {f['floor_s']:.1f} s (chunks {emb:.1f} s, {bs['pairs']} pairs {bs['pairs_s']:.1f} s, "
                        f"baseline {bs['baseline_s']:.1f} s; questions apart {qs:.1f} s)"
                        f"  cold / floor = {r['cold_s'] / f['floor_s']:.2f}x  backends {json.dumps(r['backends'])}",
                        flush=True,
                    )
                print(f"  verdict by {r['verdict']['metric']}: {r['verdict']['chosen']}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if "naive" in out:
        for backend in args.backends.split(","):
            r = out["sweeps"][f"privacy_qa/{backend}"]
            print(f"privacy_qa {backend}: naive / cold = {out['naive']['wall_s'] / r['cold_s']:.1f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    sys.exit(main())
