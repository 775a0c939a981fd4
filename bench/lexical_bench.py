"""Benchmark: the two lexical retrievers on LegalBench-RAG, BM25 (bm25s, LlamaIndex) against TF-IDF cosine
(scikit-learn, unigrams + bigrams, sublinear tf: ``retrievers/tfidf.py``), over the same chunks.

Per subset, one ``ragsweep run`` (its own cache) of the sentence splitter at 512/64 x {bm25, tfidf} x ``--top-k``,
the extractive generator. Prints per configuration the test MRR, hit and span recall with the run's 95% CIs
(``summary.csv``) and the median retrieval milliseconds; then TF-IDF's paired test difference against BM25 per
metric (paired bootstrap CI, ``paired_test`` p-value, Holm over the three metrics), and the seconds each
part took to build (``indexing_bm25``, ``indexing_tfidf``).

Usage: python bench/lexical_bench.py [--data ../shared/datasets/legalbench-rag] [--subsets privacy_qa,contractnli]
       [--top-k 5] [--limit [SUBSET=]N] [--work DIR] [--json FILE]
"""

from __future__ import annotations

import sys
from pathlib import Path

from components_bench import paired_family
from legalbench_args import run_subsets
from measure import bench_env, measured

METRICS = ("mrr", "hit", "span_recall")
_SPEC = """\
name: lexical-{subset}
seed: 0
dataset:
  corpus: {{format: legalbench, path: {data}, subset: {subset}}}
  questions: {{format: legalbench, path: {data}, subset: {subset}}}
splitters:
  - {{kind: sentence, chunk_size: 512, chunk_overlap: 64}}
retrievers:
  - {{kind: bm25}}
  - {{kind: tfidf}}
top_k: {top_k}
output_dir: {out}
"""


def run_subset(data: str, subset: str, top_k: list[int], limit: int | None, work: Path) -> dict:
    """One sweep of ``subset``; its configurations' figures and TF-IDF's paired differences against BM25."""
    from ragsweep.results.run import load_run

    spec = work / f"lexical-{subset}.yaml"
    spec.write_text(_SPEC.format(data=Path(data).resolve(), subset=subset, top_k=top_k, out=work / "runs"), "utf-8")
    cmd = [sys.executable, "-m", "ragsweep.cli", "run", str(spec), "--no-progress", "--fresh"]
    cmd += ["--cache", str(work / f"cache-{subset}")] + (["--limit", str(limit)] if limit else [])
    wall, peak = measured(cmd, bench_env())
    run = load_run(work / "runs" / f"lexical-{subset}")
    summary = run.summary[run.summary["split"] == "test"].set_index("config_id")
    rows = []
    for cid, r in summary.iterrows():
        rec = run.records[run.records["config_id"] == cid]
        rows.append(
            {
                "config": cid,
                **{f"{m}{s}": float(r[f"{m}{s}"]) for m in METRICS for s in ("", "_lo", "_hi")},
                "retrieval_ms": float(rec["retrieval_ms"].median()),
            }
        )
    pairs = [(c, c.replace("tfidf", "bm25"), "bm25") for c in summary.index if "-tfidf-" in c]
    diffs = [d for m in METRICS for d in paired_family(run.records, pairs, m)]
    from ragsweep.evaluation.significance import holm

    for d, p in zip(diffs, holm([d["p_value"] for d in diffs])):  # one family: the metrics of every top_k
        d["p_holm"], d["significant"] = p, bool(p < 0.05)
    timings = (run.meta.get("invocations") or [{}])[-1].get("timings_s", {})
    return {
        "subset": subset,
        "questions": int(run.records["qid"].nunique()),
        "test_questions": int((run.records.drop_duplicates("qid")["split"] == "test").sum()),
        "wall_s": wall,
        "peak_rss_mib": peak / 2**20,
        "configs": rows,
        "tfidf_vs_bm25": diffs,
        "build_s": {k: timings.get(f"indexing_{k}") for k in ("bm25", "tfidf")},
        "command": " ".join(cmd),
    }


def print_subset(f: dict) -> None:
    print(f"\n## {f['subset']}: {f['questions']} questions ({f['test_questions']} test); wall {f['wall_s']:.1f} s")
    print("| configuration | test MRR | hit | span recall | retrieval ms (median) |")
    print("|---|---|---|---|---|")
    for r in f["configs"]:
        cis = [f"{r[m]:.3f} [{r[m + '_lo']:.3f}, {r[m + '_hi']:.3f}]" for m in METRICS]
        print(f"| {r['config']} | " + " | ".join(cis) + f" | {r['retrieval_ms']:.2f} |")
    print("\n| TF-IDF - BM25 | metric | diff [95% CI] | p | p (Holm) |")
    print("|---|---|---|---|---|")
    for d in f["tfidf_vs_bm25"]:
        print(
            f"| {d['config']} | {d['metric']} | {d['diff']:+.3f} [{d['diff_lo']:+.3f}, {d['diff_hi']:+.3f}] "
            f"| {d['p_value']:.3g} | {d['p_holm']:.3g} |"
        )
    b = f["build_s"]
    print(f"\nparts built in (s): bm25 {b['bm25']}, tfidf {b['tfidf']}")


def main() -> None:
    run_subsets(__doc__.splitlines()[0], "lexical-bench-", run_subset, print_subset)


if __name__ == "__main__":
    main()
