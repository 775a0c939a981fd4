"""Benchmark: the reference baselines (issue 30) beside real sweeps: how good is the pick?

Three sweeps, each with ``baselines: [no_retrieval, oracle, full_document]`` and one ``ragsweep run`` (whole
process, the default cache):

- ``demo``: the shipped demo corpus, all 107 questions, 4 splitters x {bm25, vector (MiniLM), fusion (RRF)} x
  top_k 5, the extractive generator, the verdict by MRR (as ``specs/demo.yaml``);
- ``privacy_qa``: LegalBench-RAG's privacy_qa (194 questions), sentence 512/64 x {bm25, vector, fusion} x top_k 5,
  extractive, by MRR;
- ``llm``: the demo's first ``--llm-questions`` questions with LLM answers from the local llama.cpp server
  (``scripts/llm-server.sh``: SmolLM2-135M-Instruct, far too small to answer well: this shows the closed-book,
  oracle and long-context answers of a real server, not a model's quality), sentence 256 x bm25 x top_k 3, by
  BERTScore F1. Skipped when ``RAGSWEEP_LLM_BASE_URL`` is not set.

Prints per sweep and metric: the pick (chosen on validation), its test mean with CI, each baseline's test mean
with CI, the paired difference pick - baseline with its CI and the pick's share of the baseline
(``results.verdict_view.run_verdict``, the verdict's own computation), and the run's wall time.

Usage: python bench/baselines_bench.py [--data ../shared/datasets/legalbench-rag] [--work DIR]
       [--only demo,privacy_qa,llm] [--llm-questions 24] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets" / "legalbench-rag"
BASELINES = "baselines: [no_retrieval, oracle, full_document]"
RETRIEVERS = """retrievers:
  - {kind: bm25}
  - {kind: vector}
  - {kind: fusion, mode: reciprocal_rerank}"""

SPECS = {
    "demo": f"""name: bench-baselines-demo
seed: 0
scoring: {{metric: mrr}}
dataset:
  corpus: {{format: demo}}
  questions: {{format: demo}}
  fuzzy_evidence: 0.9
splitters:
  - {{kind: token, chunk_size: 128, chunk_overlap: 16}}
  - {{kind: sentence, chunk_size: 256, chunk_overlap: 32}}
  - {{kind: recursive, chunk_size: 800, chunk_overlap: 80}}
  - {{kind: pattern, pattern: '\\n(?=§)', max_chunk_chars: 1500}}
embeddings:
  - {{kind: sentence_transformers, model: minilm}}
{RETRIEVERS}
top_k: [5]
{BASELINES}
""",
    "privacy_qa": f"""name: bench-baselines-privacy_qa
seed: 0
scoring: {{metric: mrr}}
dataset:
  corpus: {{format: legalbench, path: {{data}}, subset: privacy_qa}}
  questions: {{format: legalbench, path: {{data}}, subset: privacy_qa}}
splitters:
  - {{kind: sentence, chunk_size: 512, chunk_overlap: 64}}
embeddings:
  - {{kind: sentence_transformers, model: minilm}}
{RETRIEVERS}
top_k: [5]
{BASELINES}
""",
    "llm": f"""name: bench-baselines-llm
seed: 0
scoring: {{{{metric: bertscore_f1_rescaled}}}}
dataset:
  corpus: {{{{format: demo}}}}
  questions: {{{{format: demo}}}}
splitters:
  - {{{{kind: sentence, chunk_size: 256, chunk_overlap: 32}}}}
retrievers:
  - {{{{kind: bm25}}}}
top_k: [3]
{BASELINES}
generator: {{{{kind: llm, response_mode: compact}}}}
llm:
  model: {{model}}
  base_url: {{base_url}}
  api_key_env: null
  temperature: 0
  max_tokens: 96
  context_window: {{n_ctx}}
  concurrency: 8
  timeout: 120
prices:
  {{model}}: {{{{input: 0.0, output: 0.0}}}}
""",
}
METRICS = {
    "demo": ["mrr", "bertscore_f1_rescaled", "token_f1"],
    "privacy_qa": ["mrr", "span_recall", "bertscore_f1_rescaled"],
    "llm": ["bertscore_f1_rescaled", "answer_contains", "token_f1"],
}


def run_one(name: str, work: Path, data: str, limit: int | None) -> dict:
    """One sweep: its spec written under ``work``, run whole, and the pick against each baseline per metric."""
    from ragsweep.results import load_run
    from ragsweep.results.verdict_view import run_verdict

    text = SPECS[name]
    if name == "privacy_qa":
        text = text.replace("{data}", data)
    if name == "llm":
        text = text.format(
            model=os.environ.get("RAGSWEEP_LLM_MODEL", "smollm2-135m-instruct"),
            base_url=os.environ["RAGSWEEP_LLM_BASE_URL"],
            n_ctx=os.environ.get("RAGSWEEP_LLM_N_CTX", "2048"),
        )
    spec = work / f"{name}.yaml"
    spec.write_text(text + f"output_dir: {work / 'runs'}\n", encoding="utf-8")
    cmd = [str(ROOT / ".venv" / "bin" / "ragsweep"), "run", str(spec), "--no-progress"]
    if limit:
        cmd += ["--limit", str(limit)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{name}: ragsweep run exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    run = load_run(work / "runs" / f"bench-baselines-{name}")
    out = {"name": name, "seconds": round(seconds, 1), "questions": int(run.records["qid"].nunique()), "metrics": {}}
    for metric in METRICS[name]:
        v = run_verdict(run, metric)
        out["metrics"][metric] = {
            "chosen": v.chosen,
            "test_mean": v.test_mean,
            "test_lo": v.test_lo,
            "test_hi": v.test_hi,
            "n_test": v.n_test,
            "baselines": v.baselines,
        }
    return out


def _f(x) -> str:
    return "-" if x is None or x != x else f"{x:.3f}"


def print_one(r: dict) -> None:
    print(f"\n## {r['name']}: {r['questions']} questions, one run {r['seconds']} s")
    for metric, m in r["metrics"].items():
        print(
            f"\n{metric}: pick {m['chosen']} {_f(m['test_mean'])} [{_f(m['test_lo'])}, {_f(m['test_hi'])}] "
            f"on {m['n_test']} test questions"
        )
        print("| baseline | mean [95% CI] | pick - baseline [95% CI] | pick / baseline |")
        print("|---|---|---|---|")
        for b in m["baselines"]:
            share = "-" if b.get("share") is None else f"{100 * b['share']:.0f} %"
            print(
                f"| {b['baseline']} | {_f(b['mean'])} [{_f(b['lo'])}, {_f(b['hi'])}] | "
                f"{b['diff']:+.3f} [{b['diff_lo']:+.3f}, {b['diff_hi']:+.3f}] | {share} |"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--work", help="keep the specs and runs here (default: a temporary folder)")
    ap.add_argument("--only", default="demo,privacy_qa,llm")
    ap.add_argument("--llm-questions", type=int, default=24)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-baselines-"))
    work.mkdir(parents=True, exist_ok=True)
    out = []
    for name in [n for n in args.only.split(",") if n]:
        if name == "privacy_qa" and not Path(args.data, "benchmarks", "privacy_qa.json").is_file():
            print(f"privacy_qa: skipped ({args.data} has no LegalBench-RAG; pass --data)")
            continue
        if name == "llm" and not os.environ.get("RAGSWEEP_LLM_BASE_URL"):
            print('llm: skipped (start the local server: scripts/llm-server.sh start; eval "$(... env)")')
            continue
        out.append(run_one(name, work, args.data, args.llm_questions if name == "llm" else None))
        print_one(out[-1])
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
