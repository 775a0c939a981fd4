"""Benchmark: does answering a question cost more when the corpus is larger? The same questions, interleaved.

``scale_bench.py`` grows the questions with the corpus, and its sizes run one after another over half an hour,
so a per-answer figure there mixes the corpus's size with the machine's drift. Here contractnli x1 and xF
(``scale_corpus.py``: xF's first copy is x1, documents and questions alike) answer the same questions, x1's
977, with the contractnli grid of "Cost against corpus size" (18 configurations), in alternating runs: one
cache, made warm first (every chunk and question embedded), then ``--rounds`` rounds of ``ragsweep run --fresh``
on x1 and on xF with ``--limit`` x1's questions. Each run's answering seconds per (configuration, question) and
its BM25 index seconds come from its manifest. Printed: per size the median and every round, and the ratio of
the medians. Answering is retrieval (BM25 over every chunk of a splitter, Chroma's HNSW), the extractive answer
and the per-answer metrics; only retrieval sees the corpus.

Usage: python bench/answer_scale_bench.py [--factor 8] [--rounds 3] [--data ../shared/datasets/legalbench-rag]
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
from measure import bench_env
from scale_corpus import build

ROOT = Path(__file__).resolve().parents[1]


def _run(spec: Path, cache: Path, limit: int | None) -> dict:
    """One ``ragsweep run --fresh``; its invocation record (counters and ``timings_s``)."""
    cmd = [sys.executable, "-m", "ragsweep.cli", "run", str(spec), "--no-progress", "--fresh", "--cache", str(cache)]
    if limit is not None:
        cmd += ["--limit", str(limit)]
    proc = subprocess.run(cmd, env=bench_env(), cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    run_dir = spec.parent / "runs" / "bench-contractnli"
    return json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))["invocations"][-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "datasets" / "legalbench-rag")
    ap.add_argument("--factor", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ragsweep-answer-scale-"))
    try:
        sizes: dict[int, Path] = {}
        for factor in (1, args.factor):
            corpus = work / f"x{factor}"
            info = build(args.data, factor, corpus)
            (corpus / "spec.yaml").write_text(
                sweep_spec(corpus, "contractnli", [5, 10], corpus / "runs"), encoding="utf-8"
            )
            sizes[factor] = corpus / "spec.yaml"
            print(f"x{factor}: {info['documents']} documents, {info['questions']} questions", flush=True)
        n = len(json.loads((work / "x1" / "benchmarks" / "contractnli.json").read_text())["tests"])
        cache = work / "cache"
        for factor, spec in sizes.items():  # warm: every chunk and question embedded, every pair scored once
            _run(spec, cache, n if factor != 1 else None)
        per: dict[int, list[float]] = {f: [] for f in sizes}
        for r in range(args.rounds):
            for factor, spec in sizes.items():
                inv = _run(spec, cache, n if factor != 1 else None)
                t = inv["timings_s"]
                ms = 1000 * t.get("answering", 0.0) / inv["answered"]
                per[factor].append(ms)
                print(
                    f"round {r + 1} x{factor}: {inv['answered']} answers, answering {t.get('answering', 0):.1f} s "
                    f"({ms:.3f} ms per answer), BM25 index {t.get('indexing_bm25', 0):.1f} s, embedding and indexing "
                    f"{t.get('embedding_and_indexing', 0):.1f} s",
                    flush=True,
                )
        medians = {f: statistics.median(v) for f, v in per.items()}
        for f, v in per.items():
            print(f"x{f}: median {medians[f]:.3f} ms per answer ({', '.join(f'{x:.3f}' for x in v)})")
        print(f"x{args.factor} / x1: {medians[args.factor] / medians[1]:.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
