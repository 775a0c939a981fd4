"""Benchmark: is a generated test set a valid proxy for human questions? Ranking agreement on LegalBench-RAG.

Per subset, the 216-configuration grid of the search benchmark (``legalbench_spec.search_grid_spec``) is swept
twice over the same corpus: on the human questions (LegalBench-RAG's, the first ``--limit``) and on as many
questions written by ``ragsweep generate`` with the **offline** generator (its default mix: definitions, duties and
Inverse Cloze Task sentences as simple questions, plus situational, double, comparative, distracting, vague and
out-of-scope ones). For each metric, the configurations' means on the two sets are compared by Spearman's rho
with a 95 % bootstrap CI over questions (``ragsweep.evaluation.rank_agreement``; the questions of each set
resampled independently), Kendall's tau, and whether the best configuration is the same.

Two references put rho in context: the **split-half** agreement of the human questions with themselves (two
random halves, the median of 20 splits: what another human set of half the size would agree), and the
synthetic questions by method (ICT only; definition and duty templates only).

Usage: python bench/proxy_bench.py [--data ../shared/datasets/legalbench-rag] [--subsets privacy_qa,contractnli]
       [--limit contractnli=300] [--work DIR] [--json FILE] [--boot 1000]
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

from legalbench_args import DEFAULT_DATA
from legalbench_spec import search_grid_spec

ROOT = Path(__file__).resolve().parents[1]
RAGSWEEP = str(ROOT / ".venv" / "bin" / "ragsweep")
METRICS = ["mrr", "ndcg", "hit", "span_recall", "bertscore_f1_rescaled"]
SPLITS = 20


def _run(cmd: list[str], what: str) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{what} failed: {proc.stderr[-1500:]}")
    return time.perf_counter() - t0


def sweeps(data: str, subset: str, limit: int | None, work: Path, seed: int) -> tuple[Path, Path, Path, dict]:
    """The human grid run, the generated questions, the synthetic grid run (complete ones reused)."""
    d = work / subset
    d.mkdir(parents=True, exist_ok=True)
    human = d / "human.yaml"
    human.write_text(search_grid_spec(data, subset, d / "runs"), encoding="utf-8")
    cache = ["--cache", str(d / "cache"), "--no-progress"]
    seconds = {
        "human_sweep": _run(
            [RAGSWEEP, "run", str(human), *cache] + (["--limit", str(limit)] if limit else []), f"{subset}: human sweep"
        )
    }
    n = len(_qids(human.parent / "runs" / f"search-{subset}"))
    questions = d / "synthetic.jsonl"
    seconds["generate"] = _run(
        [RAGSWEEP, "generate", str(human), "--out", str(questions), "--questions", str(n), "--seed", str(seed)],
        f"{subset}: generate",
    )
    text = search_grid_spec(data, subset, d / "runs").replace(f"name: search-{subset}", f"name: synthetic-{subset}")
    text = text.replace(
        f"questions: {{format: legalbench, path: {Path(data).resolve()}, subset: {subset}}}",
        f"questions: {{format: jsonl, path: {questions}}}",
    )
    synthetic = d / "synthetic.yaml"
    synthetic.write_text(text, encoding="utf-8")
    seconds["synthetic_sweep"] = _run([RAGSWEEP, "run", str(synthetic), *cache], f"{subset}: synthetic sweep")
    return d / "runs" / f"search-{subset}", d / "runs" / f"synthetic-{subset}", questions, seconds


def _qids(run_dir: Path) -> list[str]:
    import pandas as pd

    return sorted(set(pd.read_parquet(run_dir / "records.parquet", columns=["qid"])["qid"]))


def matrices(run_dir: Path, metric: str, configs: list[str], qids: list[str] | None = None):
    """(configurations x questions) of ``metric`` from a run's records (NaN where unmeasured)."""
    import pandas as pd

    rec = pd.read_parquet(run_dir / "records.parquet", columns=["config_id", "qid", metric])
    table = rec.pivot_table(index="config_id", columns="qid", values=metric, aggfunc="first", dropna=False)
    table = table.reindex(index=configs)
    if qids is not None:
        table = table.reindex(columns=qids)
    return table.to_numpy(dtype=float)


def analyse(human_run: Path, synthetic_run: Path, questions: Path, boot: int) -> dict:
    import numpy as np
    import pandas as pd

    from ragsweep.evaluation.rank_agreement import rank_agreement

    configs = sorted(
        set(pd.read_parquet(human_run / "records.parquet", columns=["config_id"])["config_id"])
        & set(pd.read_parquet(synthetic_run / "records.parquet", columns=["config_id"])["config_id"])
    )
    generated = [json.loads(line) for line in questions.read_text(encoding="utf-8").splitlines()]
    by_method = {
        "all synthetic": None,
        "ICT only": [q["id"] for q in generated if q["method"] == "ict"],
        "definition/duty templates": [
            q["id"] for q in generated if q["type"] != "out_of_scope" and q["method"] != "ict"
        ],
    }
    human_qids = _qids(human_run)
    out = {
        "configurations": len(configs),
        "human_questions": len(human_qids),
        "synthetic_questions": len(generated),
        "types": dict(pd.Series([q["type"] for q in generated]).value_counts()),
        "metrics": {},
    }
    for metric in METRICS:
        h = matrices(human_run, metric, configs, human_qids)
        rows = {}
        for label, qids in by_method.items():
            s = matrices(synthetic_run, metric, configs, qids)
            if np.isnan(s).all() or np.nanstd(np.nanmean(s, axis=1)) == 0:
                continue
            a = rank_agreement(h, s, n_boot=boot, seed=0)
            rows[label] = {
                "rho": a.spearman,
                "lo": a.ci_lo,
                "hi": a.ci_hi,
                "tau": a.kendall,
                "top1_same": a.top1_same,
                "top5": a.top_k_overlap,
                "rel_human": a.reliability_a,
                "rel_synthetic": a.reliability_b,
                "corrected": a.disattenuated,
                "questions": int((~np.isnan(s)).any(axis=0).sum()),
            }
        halves = []
        rng = np.random.default_rng(0)
        for _ in range(SPLITS):
            perm = rng.permutation(h.shape[1])
            a = rank_agreement(h[:, perm[: len(perm) // 2]], h[:, perm[len(perm) // 2 :]], n_boot=200, seed=0)
            halves.append((a.spearman, a.ci_lo, a.ci_hi))
        rows["human split-half (median of 20)"] = {
            "rho": statistics.median(x[0] for x in halves),
            "lo": statistics.median(x[1] for x in halves),
            "hi": statistics.median(x[2] for x in halves),
        }
        out["metrics"][metric] = rows
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--subsets", default="privacy_qa,contractnli")
    ap.add_argument("--limit", action="append", default=["contractnli=300"], metavar="SUBSET=N")
    ap.add_argument("--seed", type=int, default=0, help="the generator's seed")
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--work", help="keep the runs here (complete ones are reused)")
    ap.add_argument("--json")
    args = ap.parse_args()
    limits = dict(item.split("=") for item in args.limit)
    work = Path(args.work or tempfile.mkdtemp(prefix="proxy-bench-"))
    results = []
    for subset in [s for s in args.subsets.split(",") if s]:
        if not Path(args.data, "benchmarks", f"{subset}.json").is_file():
            sys.exit(f"{args.data}: LegalBench-RAG subset {subset} not found; pass --data")
        human, synthetic, questions, seconds = sweeps(
            args.data, subset, int(limits[subset]) if subset in limits else None, work, args.seed
        )
        res = {"subset": subset, "seconds": seconds, **analyse(human, synthetic, questions, args.boot)}
        print(
            f"{subset}: {res['configurations']} configurations; {res['human_questions']} human and "
            f"{res['synthetic_questions']} synthetic questions ({res['types']}); seconds {seconds}",
            flush=True,
        )
        for metric, rows in res["metrics"].items():
            for label, r in rows.items():
                extra = (
                    f", tau {r['tau']:.2f}, same best {r['top1_same']}, top-5 {r['top5']:.1f}, reliability "
                    f"{r['rel_human']:.2f}/{r['rel_synthetic']:.2f}, corrected {r['corrected']:.2f}"
                    if "tau" in r
                    else ""
                )
                print(
                    f"  {metric:<22} {label:<32} rho {r['rho']:+.2f} [{r['lo']:+.2f}, {r['hi']:+.2f}]{extra}",
                    flush=True,
                )
        results.append(res)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
