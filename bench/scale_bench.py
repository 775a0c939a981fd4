"""Benchmark: how a sweep's cost grows with its corpus (the default path, cold, on this machine).

The contractnli grid of "Stage 1 at the floor" (3 splitters x {bm25, vector, fusion} x top_k {5, 10}: 18
configurations) over contractnli made 1, 2, 4 and 8 times larger (``scale_corpus.py``: copies with every word
replaced by another of the same length, so every chunk, question and pair is new work and every gold span keeps
its offsets). Each size is one whole ``ragsweep run`` from an empty cache and run directory, with the backend left
unset; printed per size: wall time and peak resident memory (the process tree), and per stage the seconds per
unit of work: per chunk text embedded, per question embedded, per (configuration, question) answered, per
distinct pair BERTScored (the manifest's counters and ``timings_s``). Then, at the largest size, one document is
edited (a sentence in its middle rewritten) and the command run again with ``--fresh`` (the run directory refuses
a changed corpus; the cache is kept): what it embeds, answers and scores, and its time, against the cold run.

With ``--keep DIR`` the corpora and runs stay in DIR: the largest size's cold run directory is copied to
``runs/cold`` before the edited run, and the edited document is put back after it, so ``ray_scale_bench.py
--reuse DIR/xF`` can run the same corpus on Ray and compare with that run instead of running it locally again.

Usage: python bench/scale_bench.py [--factors 1,2,4,8] [--data ../shared/datasets/legalbench-rag] [--json FILE]
       [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from legalbench_spec import sweep_spec
from measure import bench_env, measured_peaks
from scale_corpus import build

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict:
    return bench_env()


def _per_unit(inv: dict) -> dict:
    t = inv["timings_s"]

    def per(seconds: float, n: int) -> float | None:
        return seconds / n if n else None

    return {
        "chunk_embedded_ms": 1000 * (per(t.get("embedding_and_indexing", 0.0), inv["embeddings_computed"]) or 0),
        "question_embedded_ms": 1000 * (per(t.get("embedding_queries", 0.0), inv["query_embeddings_computed"]) or 0),
        "answer_ms": 1000 * (per(t.get("answering", 0.0), inv["answered"]) or 0),
        "pair_scored_ms": 1000 * (per(t.get("scoring", 0.0), inv["bertscore_pairs_computed"]) or 0),
    }


def _run(spec: Path, cache: Path, fresh: bool) -> tuple[float, float]:
    """(wall seconds, peak resident MB of the process tree) of one ``ragsweep run``."""
    cmd = [sys.executable, "-m", "ragsweep.cli", "run", str(spec), "--no-progress", "--cache", str(cache)]
    wall, peak, _own = measured_peaks(cmd + (["--fresh"] if fresh else []), _env())
    return wall, peak / 2**20


def _edit(corpus: Path) -> tuple[str, str]:
    """Rewrite (reverse) one sentence of the first document, one that no gold span touches: its length is kept, so
    every gold span stays where and what it was."""
    doc = sorted((corpus / "corpus" / "contractnli").glob("*.txt"))[0]
    tests = json.loads((corpus / "benchmarks" / "contractnli.json").read_text(encoding="utf-8"))["tests"]
    spans = [s["span"] for t in tests for s in t["snippets"] if Path(s["file_path"]).name == doc.name]
    text = doc.read_text(encoding="utf-8")
    start = len(text) // 2
    while True:
        start = text.find(". ", start) + 2
        end = text.find(".", start)
        if start < 2 or end < 0:
            raise SystemExit(f"{doc}: no sentence free of gold spans to edit")
        if all(e <= start or b >= end for b, e in spans):
            break
    doc.write_text(text[:start] + text[start:end][::-1] + text[end:], encoding="utf-8")
    return doc.name, text


def _medians(sizes: list[dict]) -> None:
    """Per size, the median of each per-unit cost over its runs; then the largest size's against the smallest's."""
    import statistics

    by: dict[int, list[dict]] = {}
    for row in sizes:
        by.setdefault(row["factor"], []).append(row["per_unit"])
    med = {f: {k: statistics.median(r[k] for r in rows) for k in rows[0]} for f, rows in sorted(by.items())}
    for f, m in med.items():
        print(f"x{f} (median of {len(by[f])}): {json.dumps({k: round(v, 3) for k, v in m.items()})}", flush=True)
    lo, hi = min(med), max(med)
    if lo != hi:
        ratio = {k: round(med[hi][k] / med[lo][k], 3) for k in med[lo] if med[lo][k]}
        print(f"x{hi} / x{lo} per unit: {json.dumps(ratio)}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "datasets" / "legalbench-rag")
    ap.add_argument("--factors", default="1,2,4,8")
    ap.add_argument("--json")
    ap.add_argument("--keep", type=Path, help="keep the corpora and runs in this folder (for ray_scale_bench --reuse)")
    args = ap.parse_args()
    if args.keep and args.keep.exists() and not args.keep.is_dir():
        ap.error(f"--keep {args.keep}: not a folder; name a folder to keep the corpora and runs in")
    work = args.keep or Path(tempfile.mkdtemp(prefix="ragsweep-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    out: dict = {"sizes": []}
    try:
        factors = [int(f) for f in args.factors.split(",")]
        largest, edited_once = max(factors), False
        for factor in factors:  # a size may repeat (e.g. 1,8,1: the machine's drift over the sitting, bracketed)
            corpus = work / f"x{factor}"
            info = build(args.data, factor, corpus)
            spec = corpus / "spec.yaml"
            spec.write_text(sweep_spec(corpus, "contractnli", [5, 10], corpus / "runs"), encoding="utf-8")
            cache = corpus / "cache"
            shutil.rmtree(cache, ignore_errors=True)  # cold, also for a size run again
            wall, peak = _run(spec, cache, fresh=True)
            run_dir = corpus / "runs" / "bench-contractnli"
            inv = json.loads((run_dir / "manifest.json").read_text())["invocations"][-1]
            row = {**info, "wall_s": wall, "peak_mb": peak, "invocation": inv, "per_unit": _per_unit(inv)}
            if factor == largest and not edited_once:
                edited_once = True
                if args.keep:
                    shutil.copytree(run_dir, corpus / "runs" / "cold", dirs_exist_ok=True)
                edited, original = _edit(corpus)
                # another corpus: the run directory starts over (its journal refuses a changed dataset), the cache stays
                again, peak2 = _run(spec, cache, fresh=True)
                inv2 = json.loads((run_dir / "manifest.json").read_text())["invocations"][-1]
                row["edited"] = {"document": edited, "wall_s": again, "peak_mb": peak2, "invocation": inv2}
                if args.keep:  # the corpus as the cold run had it, for ray_scale_bench --reuse
                    (corpus / "corpus" / "contractnli" / edited).write_text(original, encoding="utf-8")
            out["sizes"].append(row)
            print(
                f"x{factor}: {info['documents']} documents, {info['questions']} questions (copies' tokens against the "
                f"original's {max(info['tokens_vs_original']):.4f} at most): {wall:.1f} s, peak "
                f"{peak:.0f} MB; per unit (ms) {json.dumps({k: round(v, 3) for k, v in row['per_unit'].items()})}; "
                f"chunks embedded {inv['embeddings_computed']}, answered {inv['answered']}, pairs "
                f"{inv['bertscore_pairs_computed']}, stages {json.dumps(inv['timings_s'])}",
                flush=True,
            )
            if "edited" in row:
                e = row["edited"]["invocation"]
                print(
                    f"  one document edited ({edited}): {again:.1f} s ({again / wall:.1%} of cold); documents split "
                    f"{e.get('documents_split')}, chunks embedded {e['embeddings_computed']}, answered "
                    f"{e['answered']}, pairs {e['bertscore_pairs_computed']}, "
                    f"stages {json.dumps(e['timings_s'])}",
                    flush=True,
                )
            if not args.keep:
                shutil.rmtree(cache, ignore_errors=True)
        _medians(out["sizes"])
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    sys.exit(main())
