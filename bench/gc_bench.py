"""What a full garbage collection costs a sweep, and what ``heap.run_scope`` (``gc.freeze`` for the run) saves.

A sweep collects twice (``heap.give_back``, after embedding and after BERTScore) to hand freed model memory
back. Each full collection walks every object the process tracks; after PyTorch, transformers and LlamaIndex
are imported that is millions. This script, in one process:

1. imports the sweep's stack and times ``gc.collect()`` plain and inside ``run_scope`` (median of 5);
2. runs a small sweep (2 configurations x 12 demo questions) once to warm its cache, then N more times on
   the warm cache, alternating with ``run_scope`` switched off and on, and prints the median wall per run
   and the ratio. A warm run is all fixed costs, so the collections are a visible part of it.

    python bench/gc_bench.py [--runs 5]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import tempfile
import time
from pathlib import Path

SPEC = {
    "name": "gc-bench",
    "seed": 7,
    "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
    "splitters": [{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
    "embeddings": [{"kind": "sentence_transformers", "model": "minilm"}],
    "retrievers": [{"kind": "bm25"}, {"kind": "vector"}],
    "top_k": [3],
    "scoring": {"bootstrap_samples": 200, "bertscore": {"baseline_pairs": 50}},
}


def _collect_ms(scope) -> float:
    times = []
    for _ in range(5):
        with scope():
            t = time.perf_counter()
            gc.collect()
            times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="warm runs per setting (default 5)")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error(f"--runs must be at least 1, got {args.runs}")

    import llama_index.core  # noqa: F401  - the stack a sweep imports
    import sentence_transformers  # noqa: F401
    import torch  # noqa: F401

    import ragsweep.driver as sweep
    from ragsweep.config import SweepSpec
    from ragsweep.driver import SweepRequest, run_sweep
    from ragsweep.heap import run_scope

    print(f"objects tracked after the imports: {len(gc.get_objects()):,}")
    plain, scoped = _collect_ms(contextlib.nullcontext), _collect_ms(run_scope)
    print(f"gc.collect(): {plain:.0f} ms plain, {scoped:.1f} ms inside run_scope (median of 5)")

    spec = SweepSpec.model_validate(SPEC)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)

        def one(n: int) -> float:
            t = time.perf_counter()
            run_sweep(SweepRequest(spec, run_dir=root / f"run{n}", cache_dir=root / "cache", limit=12, progress=False))
            return time.perf_counter() - t

        print(f"cold run (fills the cache): {one(0):.1f} s")
        walls: dict[str, list[float]] = {"off": [], "on": []}
        for i in range(args.runs):
            for setting in ("off", "on"):
                sweep.run_scope = contextlib.nullcontext if setting == "off" else run_scope
                walls[setting].append(one(len(walls["off"]) + len(walls["on"]) + 1))
        off, on = statistics.median(walls["off"]), statistics.median(walls["on"])
        print(
            f"warm run, median of {args.runs}: {off:.2f} s without run_scope, {on:.2f} s with it "
            f"(ratio {off / on:.2f}); objects tracked now: {len(gc.get_objects()):,}"
        )


if __name__ == "__main__":
    main()
