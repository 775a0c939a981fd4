"""Benchmark: knowledge-graph build and retrieval beside bm25, vector and fusion.

For the shipped demo corpus and LegalBench-RAG privacy_qa, runs one sweep with an empty cache
(`ragsweep run`, whole process) over 3 splitters x {bm25, vector, fusion, kg, kg-d2, hybrid_kg}
x top_k {5, 10} (plus kg-neo4j and hybrid-kg-neo4j with ``--neo4j``, against the server of
``scripts/neo4j.sh``), and prints:
  - per graph (splitter): build time (offline legal-pattern extraction + PropertyGraphIndex
    insertion + persisting), entities, relations, file size; Neo4j load time;
  - per configuration: retrieval metrics over all questions with 95% bootstrap CIs, BERTScore F1
    (rescaled) of the extractive answers, median retrieval latency;
  - for ``--neo4j``: whether every Neo4j configuration retrieved exactly what its embedded twin did.

Usage: python bench/kg_bench.py [--data ../shared/datasets/legalbench-rag] [--neo4j] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DATASETS = {
    "demo": (
        "{{format: demo}}",
        "{{format: demo}}",
        [
            "{kind: sentence, chunk_size: 256, chunk_overlap: 32}",
            "{kind: recursive, chunk_size: 800, chunk_overlap: 80}",
            "{kind: pattern, pattern: '\\n(?=§)', max_chunk_chars: 1500}",
        ],
    ),
    "privacy_qa": (
        "{{format: legalbench, path: {data}, subset: privacy_qa}}",
        "{{format: legalbench, path: {data}, subset: privacy_qa}}",
        [
            "{kind: token, chunk_size: 256, chunk_overlap: 32}",
            "{kind: sentence, chunk_size: 512, chunk_overlap: 64}",
            "{kind: recursive, chunk_size: 1500, chunk_overlap: 150}",
        ],
    ),
}
RETRIEVERS = [
    "{kind: bm25}",
    "{kind: vector}",
    "{kind: fusion}",
    "{kind: knowledge_graph}",
    "{kind: knowledge_graph, path_depth: 2}",
    "{kind: hybrid_kg}",
]
NEO4J_RETRIEVERS = ["{kind: knowledge_graph, store: neo4j}", "{kind: hybrid_kg, store: neo4j}"]
METRICS = ["hit", "mrr", "ndcg", "span_recall", "span_precision", "bertscore_f1_rescaled"]


def spec_text(name: str, data: Path, out: Path, neo4j: bool) -> str:
    corpus, questions, splitters = DATASETS[name]
    retrievers = RETRIEVERS + (NEO4J_RETRIEVERS if neo4j else [])
    lines = [
        f"name: kg-{name}",
        "seed: 0",
        "dataset:",
        "  corpus: " + corpus.format(data=data),
        "  questions: " + questions.format(data=data),
        "splitters:",
        *[f"  - {s}" for s in splitters],
        "embeddings:",
        "  - {kind: sentence_transformers, model: minilm}",
        "retrievers:",
        *[f"  - {r}" for r in retrievers],
        "top_k: [5, 10]",
        f"output_dir: {out}",
    ]
    if neo4j:
        lines += ["neo4j: {url: " + os.environ.get("NEO4J_URL", "bolt://127.0.0.1:7687") + "}"]
    return "\n".join(lines) + "\n"


def run_one(name: str, data: Path, work: Path, neo4j: bool) -> dict:
    import pandas as pd

    spec = work / f"{name}.yaml"
    spec.write_text(spec_text(name, data, work / "runs", neo4j), encoding="utf-8")
    cache = work / f"cache-{name}"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, "-m", "ragsweep.cli", "run", str(spec), "--no-progress", "--fresh", "--cache", str(cache)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{name}: ragsweep run failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    run = work / "runs" / f"kg-{name}"
    inv = json.loads((run / "manifest.json").read_text())["invocations"][-1]
    graphs = inv["graphs"]
    for g in graphs.values():
        g["file_kb"] = round((cache / "graphs" / f"{g['key']}.json").stat().st_size / 1024, 1)
    summary = pd.read_csv(run / "summary.csv")
    summary = summary[summary["split"] == "all"]
    rows = []
    for _, r in summary.iterrows():
        row = {"config_id": r["config_id"], "n": int(r["n_questions"]), "retrieval_ms": r["retrieval_ms_median"]}
        for m in METRICS:
            row[m] = [r[m], r[f"{m}_lo"], r[f"{m}_hi"]]
        rows.append(row)
    out = {
        "dataset": name,
        "graphs": graphs,
        "configurations": rows,
        "timings_s": inv["timings_s"],
        "chunks": inv["chunks"],
    }
    if neo4j:
        rec = pd.read_parquet(run / "records.parquet")

        def sources(cid):
            sub = rec[rec["config_id"] == cid].sort_values("qid")
            return [[(s["node_id"], round(s["score"], 9)) for s in srcs] for srcs in sub["sources"]]

        out["neo4j_parity"] = {
            cid: sources(cid) == sources(cid.replace("-neo4j", ""))
            for cid in rec["config_id"].unique()
            if "-neo4j" in cid
        }
    return out


def report(res: dict) -> None:
    print(f"\n## {res['dataset']}  (chunks: {res['chunks']})")
    print("| graph | build s | entities | relations | file KB | neo4j load s |")
    print("|---|---|---|---|---|---|")
    for label, g in res["graphs"].items():
        print(
            f"| {label} | {g['seconds']:.2f} | {g['entities']} | {g['relations']} | {g['file_kb']} | "
            f"{g.get('neo4j_seconds', '')} |"
        )
    print("\n| configuration | n | " + " | ".join(METRICS) + " | retrieval ms |")
    print("|---|---|" + "---|" * len(METRICS) + "---|")
    for r in sorted(res["configurations"], key=lambda r: -r["ndcg"][0]):
        cells = [f"{v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]" for v in (r[m] for m in METRICS)]
        print(f"| {r['config_id']} | {r['n']} | " + " | ".join(cells) + f" | {r['retrieval_ms']:.1f} |")
    if "neo4j_parity" in res:
        print("\nNeo4j retrieves exactly what the embedded store does:", res["neo4j_parity"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets" / "legalbench-rag"))
    ap.add_argument("--neo4j", action="store_true", help="also serve the graphs from Neo4j (scripts/neo4j.sh start)")
    ap.add_argument("--only", choices=sorted(DATASETS), help="one dataset only")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    data = Path(args.data).resolve()
    names = [args.only] if args.only else list(DATASETS)
    if "privacy_qa" in names and not (data / "benchmarks" / "privacy_qa.json").is_file():
        sys.exit(f"{data}: LegalBench-RAG not found (expects benchmarks/privacy_qa.json); pass --data")
    work = Path(tempfile.mkdtemp(prefix="ragsweep-kgbench-"))
    try:
        results = [run_one(n, data, work, args.neo4j) for n in names]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for res in results:
        report(res)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
