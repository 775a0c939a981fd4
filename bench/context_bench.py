"""Benchmark: issue 17's offline context shaping and abstention on LegalBench-RAG, each against its own
base and the best plain configuration.

Per subset, one cold ``ragsweep run`` (fresh cache and run directory, whole process) of: splitters
{sentence 512/64 (the plain baseline), sentence_window (one sentence per node, window 3),
hierarchical [2048, 512, 128]} x bundled MiniLM x retrievers {bm25, vector, fusion (RRF)} x
postprocessors {none, relative similarity cutoff 0.5, absolute cutoff 0.3 on vector, sentence window
(sentence_window splitter only), auto-merging ratio 0.5 (hierarchical splitter only)} x ``--top-k``.
Then one warm run of the plain sentence-512 configurations with the extractive generator's
``abstain_below: tune`` and the project's 30 negative questions (``bench/data/negative_questions.jsonl``:
irrelevant, jailbreak, unsafe) appended to the subset's questions, over all questions (``--limit``
would cut the negatives, which come last).

Prints, per subset:
  - per configuration: test MRR, hit, span recall and span precision with the run's 95 % CIs, the
    characters handed to the generator per question (mean), validation MRR, median
    ``postprocess_ms`` and ``retrieval_ms``;
  - per postprocessed configuration, its test difference in MRR and in span recall against its own
    base (same splitter and retriever, no postprocessor) and against the best plain sentence-512
    configuration chosen on validation: paired bootstrap CI, ``paired_test`` p-value, Holm per metric
    over that family;
  - abstention: per configuration the tuned threshold, the abstention rate on the negative test
    questions and the false-abstention rate on answerable test questions, with CIs.

Then a warm run of sentence 512/64 chunks plain, with ``context: title`` and with ``context:
title_headings`` (contextual chunks) x {bm25, vector, fusion}, each against the same retriever on plain
chunks.

Usage: python bench/context_bench.py [--data ../shared/datasets/legalbench-rag]
       [--subsets privacy_qa,contractnli] [--top-k 5] [--limit [SUBSET=]N] [--work DIR] [--json FILE]
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import components_bench
from components_bench import _ci, _median, _missing, _ms, paired_family, print_heading, source_digest
from legalbench_args import run_subsets

ROOT = Path(__file__).resolve().parents[1]
NEGATIVES = ROOT / "bench" / "data" / "negative_questions.jsonl"
PLAIN_SPLITTER = "sentence512"

_SPEC = """\
name: {name}
seed: 0
dataset:
  corpus: {{format: legalbench, path: {data}, subset: {subset}}}
  questions: {{format: legalbench, path: {data}, subset: {subset}}}
{negatives}
splitters:
{splitters}
embeddings:
  - {{kind: sentence_transformers, model: minilm, batch_size: 32}}
retrievers:
  - {{kind: bm25}}
  - {{kind: vector}}
  - {{kind: fusion, mode: reciprocal_rerank}}
postprocessors:
{postprocessors}
{generator}
top_k: {top_k}
scoring: {{metric: mrr}}
output_dir: {out}
"""

CONTEXT = {
    "negatives": "",
    "splitters": """\
  - {kind: sentence, chunk_size: 512, chunk_overlap: 64}
  - {kind: sentence_window, window_size: 3}
  - {kind: hierarchical, chunk_sizes: [2048, 512, 128]}""",
    "postprocessors": """\
  - {kind: none}
  - {kind: similarity_cutoff, mode: relative, cutoff: 0.5}
  - {kind: similarity_cutoff, cutoff: 0.3}
  - {kind: sentence_window}
  - {kind: auto_merging, ratio: 0.5}""",
    "generator": "",
}
ABSTAIN = {
    "negatives": f"  negatives: {NEGATIVES}",
    "splitters": "  - {kind: sentence, chunk_size: 512, chunk_overlap: 64}",
    "postprocessors": "  - {kind: none}",
    "generator": "generator: {kind: extractive, abstain_below: tune}",
}
CONTEXTUAL = {
    "negatives": "",
    "splitters": """\
  - {kind: sentence, chunk_size: 512, chunk_overlap: 64}
  - {kind: sentence, chunk_size: 512, chunk_overlap: 64, context: title}
  - {kind: sentence, chunk_size: 512, chunk_overlap: 64, context: title_headings}""",
    "postprocessors": "  - {kind: none}",
    "generator": "",
}


def _sweep(
    data: str, subset: str, top_k: list[int], limit: int | None, work: Path, name: str, parts: dict, fresh: bool
) -> tuple[float, int, list[str]]:
    return components_bench._sweep(data, subset, top_k, limit, work, name, parts, fresh, template=_SPEC)


def _config_rows(run: Any) -> list[dict]:
    """Per configuration: the test summary with CIs, validation MRR, context size and latencies."""
    rec = run.records
    test, val = run.split("test").set_index("config_id"), run.split("validation").set_index("config_id")
    rows = []
    for cid, r in test.iterrows():
        per_q = rec[rec["config_id"] == cid]
        chars = [sum((s["end"] or 0) - (s["start"] or 0) for s in src) for src in per_q["sources"]]
        rows.append(
            {
                "config_id": cid,
                "splitter": str(r["splitter"]),
                "retriever": str(r["retriever"]).split("+")[0],
                "top_k": int(r["top_k"]),
                "postprocessor": None if _missing(r.get("postprocessor")) else str(r["postprocessor"]),
                **{
                    f"test_{m}{s}": float(r[f"{m}{s}"])
                    for m in ("mrr", "hit", "span_recall", "span_precision")
                    for s in ("", "_lo", "_hi")
                },
                "test_n": int(r["mrr_n"]),
                "validation_mrr": float(val.loc[cid, "mrr"]),
                "context_chars_mean": sum(chars) / len(chars) if chars else float("nan"),
                "postprocess_ms_median": _median(per_q["postprocess_ms"]) if "postprocess_ms" in per_q else None,
                "retrieval_ms_median": _median(per_q["retrieval_ms"]),
                "errors": int(per_q["error"].notna().sum()),
            }
        )
    return rows


def _comparisons(run: Any, rows: list[dict]) -> tuple[str, list[dict]]:
    """Per metric (MRR, span recall): each postprocessed configuration against its own base and the best
    plain sentence-512 configuration chosen on validation; Holm per metric over those pairs."""
    plain = [r for r in rows if r["postprocessor"] is None and r["splitter"] == PLAIN_SPLITTER]
    best = min(plain, key=lambda r: (-r["validation_mrr"], r["config_id"]))["config_id"]
    base = {(r["splitter"], r["retriever"], r["top_k"]): r["config_id"] for r in rows if r["postprocessor"] is None}
    pairs: list[tuple[str, str, str]] = []
    for r in rows:
        if r["postprocessor"] is not None:
            pairs.append((r["config_id"], base[(r["splitter"], r["retriever"], r["top_k"])], "own base"))
            pairs.append((r["config_id"], best, "best plain"))
    for r in rows:  # the other splitters without a postprocessor, against the plain baseline
        if r["postprocessor"] is None and r["splitter"] != PLAIN_SPLITTER:
            pairs.append((r["config_id"], best, "best plain"))
    out = []
    for metric in ("mrr", "span_recall"):
        out += paired_family(run.records, pairs, metric)
    return best, out


def _contextual_comparisons(run: Any, rows: list[dict]) -> list[dict]:
    """Per metric: each contextual splitter's configuration against the same retriever on plain chunks."""
    plain = {r["retriever"]: r["config_id"] for r in rows if r["splitter"] == PLAIN_SPLITTER}
    pairs = [(r["config_id"], plain[r["retriever"]], "plain chunks") for r in rows if r["splitter"] != PLAIN_SPLITTER]
    return [c for metric in ("mrr", "span_recall") for c in paired_family(run.records, pairs, metric)]


def _abstention(run: Any) -> list[dict]:
    """Per configuration: the tuned threshold, and the two rates on test with their CIs."""
    test = run.split("test").set_index("config_id")
    thresholds = run.meta.get("abstain_thresholds") or {}
    rows = []
    for cid, r in test.iterrows():
        t = thresholds.get(cid)
        rows.append(
            {
                "config_id": cid,
                "threshold": t.get("threshold") if isinstance(t, dict) else t,
                **{
                    f"{m}{s}": float(r[f"{m}{s}"])
                    for m in ("abstention_rate", "false_abstention_rate")
                    for s in ("", "_lo", "_hi")
                },
                "negatives_n": int(r["abstention_rate_n"]),
                "answerable_n": int(r["false_abstention_rate_n"]),
                "test_mrr": float(r["mrr"]),
            }
        )
    return rows


def run_subset(data: str, subset: str, top_k: list[int], limit: int | None, work: Path) -> dict:
    import ragsweep

    digest = source_digest()
    load_before = os.getloadavg()[0]
    wall, peak, cmd = _sweep(data, subset, top_k, limit, work, f"context-{subset}", CONTEXT, fresh=True)
    load_after = os.getloadavg()[1]
    run = ragsweep.load_run(work / "runs" / f"context-{subset}")
    rows = _config_rows(run)
    best, comps = _comparisons(run, rows)
    inv = run.meta["invocations"][-1]
    # every question: the negatives come after the subset's questions, so --limit would leave them out
    a_wall, _, _ = _sweep(data, subset, top_k, None, work, f"context-{subset}-abstain", ABSTAIN, fresh=False)
    abst = _abstention(ragsweep.load_run(work / "runs" / f"context-{subset}-abstain"))
    c_wall, _, _ = _sweep(data, subset, top_k, limit, work, f"context-{subset}-contextual", CONTEXTUAL, fresh=False)
    ctx_run = ragsweep.load_run(work / "runs" / f"context-{subset}-contextual")
    ctx_rows = _config_rows(ctx_run)
    ctx_comps = _contextual_comparisons(ctx_run, ctx_rows)
    return {
        "subset": subset,
        "limit": limit,
        "configs": rows,
        "best_plain_on_validation": best,
        "comparisons": comps,
        "abstention": abst,
        "wall_s": wall,
        "abstain_warm_wall_s": a_wall,
        "contextual": ctx_rows,
        "contextual_comparisons": ctx_comps,
        "contextual_warm_wall_s": c_wall,
        "peak_rss_mb": peak / 2**20,
        "stages_s": inv["timings_s"],
        "chunks": inv["chunks"],
        "questions": int(run.records["qid"].nunique()),
        "test_questions": int(run.records.loc[run.records["split"] == "test", "qid"].nunique()),
        "errors": int(run.records["error"].notna().sum()),
        "command": " ".join(cmd[1:]),
        "loadavg_1min_before": load_before,
        "loadavg_5min_after": load_after,
        "source_digest": digest,
    }


def print_subset(f: dict) -> None:
    """The subset's tables as Markdown (pasteable into BENCHMARKS.md)."""
    print_heading(f)
    print(
        "| configuration | test MRR [95% CI] | test hit@k | test span recall | test span precision "
        "| context chars | validation MRR | postprocess ms | retrieval ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in f["configs"]:
        print(
            f"| {r['config_id']} | {_ci(r, 'mrr')} | {_ci(r, 'hit')} | {_ci(r, 'span_recall')} "
            f"| {_ci(r, 'span_precision')} | {r['context_chars_mean']:.0f} | {r['validation_mrr']:.3f} "
            f"| {_ms(r['postprocess_ms_median'])} | {_ms(r['retrieval_ms_median'])} |"
        )
    print(
        f"\nTest differences (paired; Holm per metric over {len(f['comparisons']) // 2} comparisons; best plain "
        f"on validation: {f['best_plain_on_validation']}):\n"
    )
    print(
        "| metric | configuration | against | test (configuration vs against) | difference [95% CI] | p Holm "
        "| validation difference |"
    )
    print("|---|---|---|---|---|---|---|")
    for c in f["comparisons"]:
        star = " *" if c["significant"] else ""
        print(
            f"| {c['metric']} | {c['config']} | {c['against']} ({c['kind']}) | {c['a']:.3f} vs {c['b']:.3f} "
            f"| {c['diff']:+.3f} [{c['diff_lo']:+.3f}, {c['diff_hi']:+.3f}]{star} | {c['p_holm']:.2g} "
            f"| {c['validation_diff']:+.3f} |"
        )
    print(f"\nAbstention (extractive, abstain_below: tune on validation; {NEGATIVES.name} appended; all questions):\n")
    print(
        "| configuration | threshold | abstention rate on negatives (test) | false-abstention rate (test) | test MRR |"
    )
    print("|---|---|---|---|---|")
    for r in f["abstention"]:
        thr = "—" if r["threshold"] is None else f"{r['threshold']:.4g}"
        print(
            f"| {r['config_id']} | {thr} | {_ci(r, 'abstention_rate', '')} (n={r['negatives_n']}) "
            f"| {_ci(r, 'false_abstention_rate', '')} (n={r['answerable_n']}) | {r['test_mrr']:.3f} |"
        )
    print(
        "\nContextual chunks (title / title + heading path embedded and BM25-indexed with each chunk), "
        "against the same retriever on plain chunks (Holm per metric):\n"
    )
    print(
        "| configuration | test MRR [95% CI] | test span recall | MRR difference [95% CI] | span recall difference "
        "| validation MRR difference |"
    )
    print("|---|---|---|---|---|---|")
    diffs = {(c["config"], c["metric"]): c for c in f["contextual_comparisons"]}
    for r in f["contextual"]:
        m, s = diffs.get((r["config_id"], "mrr")), diffs.get((r["config_id"], "span_recall"))

        def d(c):
            return (
                "—"
                if c is None
                else f"{c['diff']:+.3f} [{c['diff_lo']:+.3f}, {c['diff_hi']:+.3f}]" + (" *" if c["significant"] else "")
            )

        print(
            f"| {r['config_id']} | {_ci(r, 'mrr')} | {_ci(r, 'span_recall')} | {d(m)} | {d(s)} "
            f"| {'—' if m is None else format(m['validation_diff'], '+.3f')} |"
        )
    print(
        f"\nsweep: cold wall {f['wall_s']:.1f} s (whole process), peak RSS {f['peak_rss_mb']:.0f} MB; stages (s) "
        f"{json.dumps(f['stages_s'])}; abstention run (warm) {f['abstain_warm_wall_s']:.1f} s; "
        f"contextual run (warm cache) {f['contextual_warm_wall_s']:.1f} s; load average "
        f"{f['loadavg_1min_before']:.1f} (1 min, before), {f['loadavg_5min_after']:.1f} (5 min, after); "
        f"errors {f['errors']}"
    )


def main() -> None:
    run_subsets(__doc__.splitlines()[0], "ragsweep-context-", run_subset, print_subset)


if __name__ == "__main__":
    main()
