"""Benchmark: a LegalBench-RAG privacy_qa sweep against the embedding floor.

Sweep: 3 splitters x {bm25, vector, fusion} x top_k {3, 5, 10} = 27 configurations over 194
questions, bundled MiniLM embeddings. Prints, each as the median of ``--repeat`` runs:
  - first-run wall time (empty cache, fresh run directory), as a whole `ragsweep run` process;
  - re-run wall time (the same command again: everything journaled);
  - embeddings computed vs unique chunk texts;
  - the floor: time to embed the unique chunk texts alone (model already loaded, same batch size);
and the ratios first-run/floor and re-run/first-run.

Usage: python bench/sweep_bench.py [--data ../shared/datasets/legalbench-rag] [--repeat 3]
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from legalbench_args import parse_args
from legalbench_spec import sweep_spec
from measure import bench_env

ROOT = Path(__file__).resolve().parents[1]


FLOOR = r"""
import json, sys, time
from ragsweep.config import load_spec
from ragsweep.datasets.load import load_dataset
from ragsweep.embeddings.factory import load_model
from ragsweep.splitters.build import make_parser, split_corpus
spec = load_spec(sys.argv[1])
ds = load_dataset(spec.dataset)
texts = set()
for s in spec.splitters:
    texts |= {c.text for c in split_corpus(ds.documents, make_parser(s), s.label())}
texts = sorted(texts)
model = load_model(spec.embeddings[0])
model.get_text_embedding_batch(texts[:32])  # warm-up: first batch pays one-off costs
t0 = time.perf_counter()
model.get_text_embedding_batch(texts)
floor = time.perf_counter() - t0

# BERTScore floor: the distinct (answer, reference) pairs of the run plus the baseline's random
# sentence pairs, scored once by a warm scorer with the sweep's settings.
import pandas as pd
from ragsweep.evaluation.bertscore import BERTScoreRunner, sample_unrelated_pairs
from ragsweep.pipelines.extractive import sentences
rec = pd.read_parquet(sys.argv[2])
ok = rec[(rec["answer"].fillna("").str.strip() != "") & (rec["reference_answer"].fillna("").str.strip() != "")]
pairs = sorted(set(zip(ok["answer"], ok["reference_answer"])))
base = sample_unrelated_pairs([x for d in ds.documents for x in sentences(d.text)],
                              spec.scoring.bertscore.baseline_pairs, spec.seed)
import tempfile, pathlib
runner = BERTScoreRunner(spec.scoring.bertscore, pathlib.Path(tempfile.mkdtemp()) / "b.sqlite")
runner._raw(["warm up"], ["warm up"])
t0 = time.perf_counter()
runner._raw([a for a, _ in pairs], [b for _, b in pairs])
runner._raw([a for a, _ in base], [b for _, b in base])
bs_floor = time.perf_counter() - t0
print(json.dumps({"unique_chunks": len(texts), "floor_s": floor, "bertscore_pairs": len(pairs),
                  "bertscore_floor_s": bs_floor}))
"""


def _env() -> dict:
    return bench_env(default_backend=False)


def _timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=_env(), cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    return wall


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], "privacy_qa")
    work = Path(tempfile.mkdtemp(prefix="ragsweep-bench-"))
    spec = work / "spec.yaml"
    spec.write_text(sweep_spec(args.data, "privacy_qa", [3, 5, 10], work / "runs"), encoding="utf-8")
    ragsweep = [sys.executable, "-m", "ragsweep.cli", "run", str(spec), "--no-progress"]
    first, rerun, floors, manifests = [], [], [], []
    try:
        for i in range(args.repeat):
            cache = work / f"cache{i}"
            cmd = ragsweep + ["--cache", str(cache)]
            first.append(_timed(cmd + ["--fresh"]))
            manifests.append(json.loads((work / "runs" / "bench-privacy_qa" / "manifest.json").read_text()))
            rerun.append(_timed(cmd))
            records = work / "runs" / "bench-privacy_qa" / "records.parquet"
            out = subprocess.run(
                [sys.executable, "-c", FLOOR, str(spec), str(records)],
                env=_env(),
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            )
            floors.append(json.loads(out.stdout.strip().splitlines()[-1]))
            shutil.rmtree(cache)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    inv = manifests[0]["invocations"][0]
    med = statistics.median
    fig = {
        "configurations": len(manifests[0]["configurations"]),
        "questions": manifests[0]["dataset"]["questions_used"],
        "first_run_s": med(first),
        "rerun_s": med(rerun),
        "floor_s": med(f["floor_s"] for f in floors),
        "bertscore_floor_s": med(f["bertscore_floor_s"] for f in floors),
        "bertscore_pairs": floors[0]["bertscore_pairs"],
        "unique_chunks": floors[0]["unique_chunks"],
        "chunks_per_splitter": inv["chunks"],
        "embeddings_computed": inv["embeddings_computed"] - inv["query_embeddings_computed"],
        "query_embeddings_computed": inv["query_embeddings_computed"],
        "first_run_stage_timings_s": inv["timings_s"],
        "runs": {
            "first_s": first,
            "rerun_s": rerun,
            "floor_s": [f["floor_s"] for f in floors],
            "bertscore_floor_s": [f["bertscore_floor_s"] for f in floors],
        },
    }
    fig["first_over_floor"] = fig["first_run_s"] / fig["floor_s"]
    fig["first_over_both_floors"] = fig["first_run_s"] / (fig["floor_s"] + fig["bertscore_floor_s"])
    fig["rerun_over_first"] = fig["rerun_s"] / fig["first_run_s"]
    print(
        f"privacy_qa sweep: {fig['configurations']} configurations x {fig['questions']} questions "
        f"(median of {args.repeat})"
    )
    print(f"  first run            {fig['first_run_s']:8.1f} s   runs: {', '.join(f'{x:.1f}' for x in first)}")
    print(f"  re-run               {fig['rerun_s']:8.1f} s   runs: {', '.join(f'{x:.1f}' for x in rerun)}")
    print(f"  embedding floor      {fig['floor_s']:8.1f} s   ({fig['unique_chunks']} unique chunks)")
    print(
        f"  BERTScore floor      {fig['bertscore_floor_s']:8.1f} s   ({fig['bertscore_pairs']} distinct pairs + "
        f"baseline pairs)"
    )
    print(f"  first run / embedding floor              {fig['first_over_floor']:8.2f} x")
    print(f"  first run / (embedding + BERTScore floor) {fig['first_over_both_floors']:7.2f} x")
    print(f"  re-run / first run   {fig['rerun_over_first']:8.1%}")
    print(
        f"  chunk embeddings computed {fig['embeddings_computed']} for {fig['unique_chunks']} unique chunks "
        f"(+ {fig['query_embeddings_computed']} distinct question embeddings)"
    )
    print(f"  first-run stages (s): {json.dumps(inv['timings_s'])}")
    if args.json:
        Path(args.json).write_text(json.dumps(fig, indent=2))


if __name__ == "__main__":
    main()
