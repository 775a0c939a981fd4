"""Benchmark: BERTScore backends (torch, onnx, onnx-int8) on a finished sweep's answers.

Takes a run directory (default: a fresh LegalBench-RAG privacy_qa sweep, 27 configurations x 194
questions), scores its distinct (answer, reference) pairs and the corpus baseline's pairs with each
backend from an empty pair cache (warm encoder, export done beforehand), and prints per backend:
seconds (median of ``--repeat``), pairs per second, the largest absolute difference from torch of
raw and rescaled F1 per record, the Spearman correlation of the configurations' ranking by mean
rescaled F1 with torch's, and whether the top configuration is the same.

Usage: python bench/bertscore_bench.py [--run RUN_DIR] [--data ../shared/datasets/legalbench-rag] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))

BACKENDS = ("torch", "onnx", "onnx-int8")


def _fresh_run(data: str, work: Path) -> Path:
    from legalbench_spec import sweep_spec

    spec = work / "spec.yaml"
    spec.write_text(sweep_spec(data, "privacy_qa", [3, 5, 10], work / "runs", "torch"), encoding="utf-8")
    subprocess.run(
        [sys.executable, "-m", "ragsweep.cli", "run", str(spec), "--no-progress", "--cache", str(work / "cache")],
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    return work / "runs" / "bench-privacy_qa"


def main() -> None:
    import numpy as np
    import pandas as pd
    from scipy.stats import spearmanr

    from ragsweep.config import parse_spec
    from ragsweep.datasets.load import load_dataset
    from ragsweep.evaluation.bertscore import BERTScoreRunner, rescale
    from ragsweep.pipelines.extractive import sentences

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets" / "legalbench-rag"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ragsweep-bsbench-"))
    run = Path(args.run) if args.run else _fresh_run(args.data, work)
    manifest = json.loads((run / "manifest.json").read_text())
    spec = parse_spec(manifest["spec"])
    dataset = load_dataset(spec.dataset)
    rec = pd.read_parquet(run / "records.parquet")
    ok = rec[rec["answer"].fillna("").str.strip().ne("") & rec["reference_answer"].fillna("").str.strip().ne("")]
    pairs = sorted(set(zip(ok["answer"], ok["reference_answer"])))
    corpus = [s for d in dataset.documents for s in sentences(d.text)]
    out: dict = {"pairs": len(pairs), "records": len(ok), "backends": {}}
    raw: dict[str, dict] = {}
    for backend in BACKENDS:
        bs = spec.scoring.bertscore.model_copy(update={"backend": backend})
        times = []
        for i in range(args.repeat):
            runner = BERTScoreRunner(bs, work / f"{backend}-{i}" / "bertscore.sqlite", export_root=work / "exports")
            runner.score([("warm up", "warm up")])
            t0 = time.perf_counter()
            scores = runner.score(pairs)
            base = runner.baseline(corpus, dataset.corpus_fingerprint(), seed=spec.seed)
            times.append(time.perf_counter() - t0)
            runner.close()
        by_pair = dict(zip(pairs, scores))
        f1 = np.array([by_pair[(a, r)][2] for a, r in zip(ok["answer"], ok["reference_answer"])])
        raw[backend] = {"f1": f1, "rescaled": np.array([rescale(x, base.f) for x in f1])}
        out["backends"][backend] = {
            "seconds": statistics.median(times),
            "runs": times,
            "pairs_per_s": (len(pairs) + spec.scoring.bertscore.baseline_pairs) / statistics.median(times),
            "baseline_f": base.f,
        }
    ref = raw["torch"]
    means = {b: pd.Series(raw[b]["rescaled"], index=ok.index).groupby(ok["config_id"]).mean() for b in BACKENDS}
    for b in BACKENDS:
        row = out["backends"][b]
        row["max_abs_diff_f1"] = float(np.abs(raw[b]["f1"] - ref["f1"]).max())
        row["max_abs_diff_f1_rescaled"] = float(np.abs(raw[b]["rescaled"] - ref["rescaled"]).max())
        row["spearman_config_ranking"] = float(spearmanr(means[b], means["torch"].loc[means[b].index]).statistic)
        row["same_top_configuration"] = bool(means[b].idxmax() == means["torch"].idxmax())
        row["speedup_vs_torch"] = out["backends"]["torch"]["seconds"] / row["seconds"]
    print(
        f"BERTScore backends on {run.name}: {len(pairs)} distinct pairs + {spec.scoring.bertscore.baseline_pairs} "
        f"baseline pairs, {len(ok)} records, {len(means['torch'])} configurations (median of {args.repeat})"
    )
    for b, row in out["backends"].items():
        print(
            f"  {b:10s} {row['seconds']:7.1f} s  {row['speedup_vs_torch']:5.2f}x"
            f"  max|dF1| {row['max_abs_diff_f1']:.2e}"
            f"  max|dF1 resc.| {row['max_abs_diff_f1_rescaled']:.2e}  Spearman {row['spearman_config_ranking']:.4f}"
            f"  same top {row['same_top_configuration']}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
