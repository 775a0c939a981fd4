"""Benchmark: what a follow-up question's history is worth to retrieval: history modes none (the follow-up alone),
concat (the last two user turns, then the follow-up, searched as one query; offline) and, as a smoke test on a real
llama.cpp server, condense (the spec's LLM rewrites the follow-up into a standalone question; LlamaIndex's prompt).

Parts (each one ``ragsweep run`` in its own process, with its own cache under ``--work``; the extractive generator):

1. demo: the demo corpus with its 32 follow-up questions (``questions: {format: demo, conversations: true}``),
   sentence chunks 256/32, retrievers bm25 and vector (bundled all-MiniLM-L6-v2), top_k 5, history none and concat.
2. LegalBench-RAG follow-ups (``--subsets``, default privacy_qa and contractnli), built by ``conversation_data.py``
   at run time into the work folder (the data is only read from ``--data``): per document, its questions shuffled
   (seed 0), and each two consecutive ones (q1, q2) make a follow-up: history = q1 in full (it names the document)
   and q1's gold answer cut to ~200 characters; follow-up = q2 without its document-naming prefix (the text after
   its one ';'), q2's gold spans as evidence. Sentence chunks 512/64, bm25 and vector, top_k 5, none and concat.
   ``--limit [SUBSET=]N``: a seed-0 sample of N follow-ups (default contractnli=150 of its 882; 0: all). A second
   run asks the same questions as the benchmark does (q2 in full, no history) for reference: the figures a history
   mode would reach if it restored the document's name and nothing else (not in the paired tests).
3. condense smoke test, only when ``--llm-url`` answers ``GET /models``: the demo follow-ups, bm25 only, history
   none and condense, ``llm: {model: --llm-model, api_key_env: null, temperature: 0, max_tokens: 64,
   context_window: 2048}``. With scripts/llm-server.sh's SmolLM2-135M-Instruct this proves the path runs against a
   real server; it measures nothing about what a capable model's rewrites are worth.

Figures are over every follow-up question of the run, validation and test splits together: nothing is selected
here, the comparison is fixed in advance (concat - none, condense - none, per retriever). Per configuration: hit and
MRR at k with 95% bootstrap CIs (``ragsweep.evaluation.bootstrap.bootstrap_ci``, 1000 resamples, seed 0); per
comparison: the paired difference with its bootstrap CI (``significance.paired_difference``), ``paired_test``'s
two-sided p-value (exact sign test for hit, exact sign-flip or paired t-test for MRR) and Holm over the comparisons
of the part (retrievers x metrics). As a check, the demo's questions without a history must score the same in every
mode (a mode changes only what a follow-up searches with).

Usage: python bench/conversation_bench.py [--data ../shared/datasets/legalbench-rag] [--subsets privacy_qa,contractnli]
       [--limit [SUBSET=]N] [--parts demo,legalbench,condense] [--llm-url http://127.0.0.1:8089/v1]
       [--llm-model smollm2-135m-instruct] [--work DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import urllib.request
from pathlib import Path

import pandas as pd
from components_bench import difference_fields
from conversation_data import build
from legalbench_args import DEFAULT_DATA, check_subsets, subset_limits
from measure import bench_env, measured

METRICS = ("hit", "mrr")
N_BOOT = 1000
# What makes two configurations the same but for their history mode.
_SAME = ["splitter", "embedding", "retriever", "top_k", "query_transform", "reranker", "postprocessor"]
DEFAULT_LIMITS = {"contractnli": 150}


def sweep(name: str, spec: dict, work: Path) -> tuple[object, dict]:
    """Run ``spec`` (written as JSON, which is YAML) in its own process and cache; its run and how it went."""
    from ragsweep.results.run import load_run

    path = work / f"{name}.json"
    path.write_text(json.dumps({"name": name, "seed": 0, **spec, "output_dir": str(work / "runs")}, indent=2))
    cmd = [sys.executable, "-m", "ragsweep.cli", "run", str(path), "--no-progress", "--fresh"]
    cmd += ["--cache", str(work / f"cache-{name}")]
    wall, peak = measured(cmd, bench_env())
    run = load_run(work / "runs" / name)
    inv = (run.meta.get("invocations") or [{}])[-1]
    return run, {
        "wall_s": wall,
        "peak_rss_mib": peak / 2**20,
        "chunks": inv.get("chunks"),
        "llm_calls_made": inv.get("llm_calls_made"),
        "llm_truncated": inv.get("llm_truncated"),
        "command": " ".join(cmd),
        "spec": str(path),
    }


def mode(value) -> str:
    return "none" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def with_keys(records: pd.DataFrame) -> pd.DataFrame:
    """``records`` with ``mode`` (the history mode's label), ``base_retriever`` (the records' retriever names the
    mode too, ``bm25+concat``) and ``key``: what makes two configurations the same but for their history mode."""
    rec = records.copy()
    rec["mode"] = rec["history"].map(mode)
    rec["base_retriever"] = [
        r.removesuffix(f"+{m}") if m != "none" else r for r, m in zip(rec["retriever"].astype(str), rec["mode"])
    ]
    rec["key"] = rec[[c for c in _SAME if c != "retriever"] + ["base_retriever"]].astype(str).agg("|".join, axis=1)
    return rec


def history_figures(records: pd.DataFrame) -> dict:
    """Per configuration hit and MRR with CIs over the follow-ups; each mode's paired differences against none."""
    from ragsweep.evaluation.bootstrap import bootstrap_ci
    from ragsweep.evaluation.paired_tests import paired_test
    from ragsweep.evaluation.significance import holm, paired_difference
    from ragsweep.evaluation.test_options import TestOptions

    rec = with_keys(records[records["qtype"] == "conversational"])
    configs = rec.drop_duplicates("config_id").set_index("config_id")
    rows = []
    for cid, g in rec.groupby("config_id", sort=False):
        row = {
            "config": cid,
            "retriever": configs.loc[cid, "base_retriever"],
            "mode": configs.loc[cid, "mode"],
            "n": len(g),
        }
        for m in METRICS:
            row[m], row[f"{m}_lo"], row[f"{m}_hi"] = bootstrap_ci(g[m].to_numpy(float), N_BOOT, 0.95, 0)
        rows.append(row)
    key = configs["key"]
    base = {key[c]: c for c in configs.index if configs.loc[c, "mode"] == "none"}
    pairs = [(c, base[key[c]]) for c in configs.index if configs.loc[c, "mode"] != "none" and key[c] in base]
    family = len(pairs) * len(METRICS)
    tests = TestOptions(alpha=0.05)
    diffs = []
    mats = {m: rec.pivot(index="qid", columns="config_id", values=m).sort_index() for m in METRICS}
    for a, b in pairs:
        for m in METRICS:
            mat = mats[m]
            d = paired_difference(mat[a].to_numpy(float), mat[b].to_numpy(float), N_BOOT, 0.95, 0)
            t = paired_test(mat[a].to_numpy(float), mat[b].to_numpy(float), family_size=family, tests=tests)
            wins = int((mat[a] > mat[b]).sum())
            losses = int((mat[a] < mat[b]).sum())
            diffs.append(
                {
                    "config": a,
                    "against": b,
                    "retriever": configs.loc[a, "base_retriever"],
                    "mode": configs.loc[a, "mode"],
                    "metric": m,
                    **difference_fields(d, t),
                    "better": wins,
                    "worse": losses,
                }
            )
    for d, p in zip(diffs, holm([d["p_value"] for d in diffs])):
        d["p_holm"], d["significant"] = p, bool(p < 0.05)
    return {
        "follow_ups": int(rec["qid"].nunique()),
        "splits": {str(k): int(v) for k, v in rec.drop_duplicates("qid")["split"].value_counts().items()},
        "configs": rows,
        "differences": diffs,
    }


def unchanged_without_history(records: pd.DataFrame) -> dict:
    """Questions without a history: how many (question, configuration) pairs score differently from mode none."""
    rec = with_keys(records[records["history_turns"].fillna(0) == 0])
    base = rec[rec["mode"] == "none"].set_index(["key", "qid"])[list(METRICS)]
    other = rec[rec["mode"] != "none"].set_index(["key", "qid"])[list(METRICS)]
    joined = other.join(base, rsuffix="_none", how="inner")
    differ = sum(int((joined[m] - joined[f"{m}_none"]).abs().gt(1e-12).sum()) for m in METRICS)
    return {"questions": int(rec["qid"].nunique()), "pairs": len(joined), "differ": differ}


def demo_spec(retrievers: list[dict], history: list[dict], llm: dict | None = None) -> dict:
    spec = {
        "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo", "conversations": True}},
        "splitters": [{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
        "retrievers": retrievers,
        "top_k": [5],
        "history": history,
    }
    return {**spec, "llm": llm} if llm else spec


NONE_CONCAT = [{"kind": "none"}, {"kind": "concat", "user_turns": 2}]
BOTH = [{"kind": "bm25"}, {"kind": "vector"}]


def run_demo(work: Path) -> dict:
    run, how = sweep("conv-demo", demo_spec(BOTH, NONE_CONCAT), work)
    return {
        "part": "demo",
        **how,
        **history_figures(run.records),
        "without_history": unchanged_without_history(run.records),
    }


def run_legalbench(data: str, subset: str, limit: int | None, work: Path) -> dict:
    stats = build(data, subset, work / f"followups-{subset}.jsonl", limit=limit, seed=0)
    root = str(Path(data).resolve())
    spec = {
        "dataset": {
            "corpus": {"format": "legalbench", "path": root, "subset": subset},
            "questions": {"format": "jsonl", "path": stats["path"]},
        },
        "splitters": [{"kind": "sentence", "chunk_size": 512, "chunk_overlap": 64}],
        "retrievers": BOTH,
        "top_k": [5],
        "history": NONE_CONCAT,
    }
    run, how = sweep(f"conv-{subset}", spec, work)
    figures = history_figures(run.records)
    # The reference: the same questions as the benchmark asks them (q2 in full, no history), mode none.
    spec["dataset"]["questions"]["path"] = stats["standalone_path"]
    spec["history"] = [{"kind": "none"}]
    ref, ref_how = sweep(f"conv-{subset}-standalone", spec, work)
    rec = ref.records.assign(qtype="conversational")
    for row in history_figures(rec)["configs"]:
        figures["configs"].append({**row, "mode": "(q2 asked in full)"})
    return {"part": subset, "construction": stats, **how, **figures, "standalone_wall_s": ref_how["wall_s"]}


def server_up(url: str) -> str | None:
    """The model ids a server lists at GET /models, or None when it does not answer."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/models", timeout=5) as r:
            body = json.loads(r.read())
        return ", ".join(m.get("id", "?") for m in body.get("data", [])) or "(no models listed)"
    except Exception:  # noqa: BLE001 - any failure means: no server to test against
        return None


def run_condense(url: str, model: str, work: Path) -> dict:
    llm = {
        "model": model,
        "base_url": url,
        "api_key_env": None,
        "temperature": 0,
        "max_tokens": 64,
        "context_window": 2048,
    }
    run, how = sweep(
        "conv-condense", demo_spec([{"kind": "bm25"}], [{"kind": "none"}, {"kind": "condense"}], llm), work
    )
    rec = run.records
    fu = rec[(rec["qtype"] == "conversational") & (rec["history"].map(mode) == "condense")]
    pairs = [(" ".join(str(s).split()), " ".join(q.split())) for s, q in zip(fu["standalone_question"], fu["question"])]
    same = sum(s.strip('"') == q for s, q in pairs)
    holds = sum(q in s for s, q in pairs)
    examples = [
        {"qid": r.qid, "follow_up": r.question, "rewrite": r.standalone_question}
        for r in fu.sort_values("qid").head(3).itertuples()
    ]
    return {
        "part": "condense (smoke test)",
        "llm": llm,
        **how,
        **history_figures(rec),
        "rewrites": len(fu),
        "rewrite_is_follow_up": same,
        "rewrite_holds_follow_up": holds,
        "errors": int(fu["error"].notna().sum()),
        "examples": examples,
        "without_history": unchanged_without_history(rec),
    }


def _ci(r: dict, m: str) -> str:
    return f"{r[m]:.3f} [{r[m + '_lo']:.3f}, {r[m + '_hi']:.3f}]"


def print_part(f: dict) -> None:
    splits = ", ".join(f"{k} {v}" for k, v in sorted(f["splits"].items()))
    print(
        f"\n## {f['part']}: {f['follow_ups']} follow-up questions (all splits: {splits}); chunks {f['chunks']}; "
        f"wall {f['wall_s']:.1f} s, peak {f['peak_rss_mib']:.0f} MiB"
    )
    if "construction" in f:
        c = f["construction"]
        print(
            f"built: {c['follow_ups']} follow-ups of {c['follow_ups_possible']} possible "
            f"(limit {c['limit']}, seed {c['seed']}) over {c['documents_in_set']} of {c['documents']} documents "
            f"({c['questions']} questions); prefix removed from all; word for word asked of another document too "
            f"(ambiguous): {c['shared_text']}; still naming their document: {c['names_document']}; "
            f"distinct follow-up texts: {c['distinct_follow_up_texts']}"
        )
    print("| configuration | retriever | history | n | hit@k [95% CI] | MRR@k [95% CI] |")
    print("|---|---|---|---|---|---|")
    for r in f["configs"]:
        print(f"| {r['config']} | {r['retriever']} | {r['mode']} | {r['n']} | {_ci(r, 'hit')} | {_ci(r, 'mrr')} |")
    print("\n| retriever | comparison | metric | diff [95% CI] | better / worse | test | p | p (Holm) |")
    print("|---|---|---|---|---|---|---|---|")
    for d in f["differences"]:
        print(
            f"| {d['retriever']} | {d['mode']} - none | {d['metric']} | {d['diff']:+.3f} [{d['diff_lo']:+.3f}, "
            f"{d['diff_hi']:+.3f}] | {d['better']} / {d['worse']} | {d['test']} | {d['p_value']:.3g} "
            f"| {d['p_holm']:.3g} |"
        )
    if "without_history" in f:
        w = f["without_history"]
        print(
            f"\nquestions without a history ({w['questions']}): {w['differ']} of {w['pairs']} pairs score "
            f"differently from mode none (must be 0)"
        )
    if "rewrites" in f:
        print(
            f"rewrites: {f['rewrites']} ({f['llm_calls_made']} LLM calls made, {f['llm_truncated']} cut at max_tokens, "
            f"{f['errors']} errors), {f['rewrite_is_follow_up']} the follow-up unchanged, "
            f"{f['rewrite_holds_follow_up']} holding it word for word; first examples:"
        )
        for e in f["examples"]:
            print(f"  {e['qid']}: {e['follow_up']!r}\n    -> {e['rewrite']!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--subsets", default="privacy_qa,contractnli")
    ap.add_argument("--parts", default="demo,legalbench,condense")
    ap.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="[SUBSET=]N",
        help="a seed-0 sample of N follow-ups of SUBSET or of every subset (default contractnli=150; 0: all)",
    )
    ap.add_argument("--llm-url", default="http://127.0.0.1:8089/v1")
    ap.add_argument("--llm-model", default="smollm2-135m-instruct")
    ap.add_argument(
        "--work", help="keep the specs, built questions, caches and runs here (default: a temporary folder)"
    )
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    parts = {p for p in args.parts.split(",") if p}
    subsets = [s for s in args.subsets.split(",") if s] if "legalbench" in parts else []
    check_subsets(args.data, subsets)
    # 0: every follow-up
    limits = {s: n or None for s, n in subset_limits(subsets, args.limit, DEFAULT_LIMITS).items()}
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="conversation-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    out: list[dict] = []
    try:
        if "demo" in parts:
            out.append(run_demo(work))
            print_part(out[-1])
        for s in subsets:
            out.append(run_legalbench(args.data, s, limits[s], work))
            print_part(out[-1])
        if "condense" in parts:
            models = server_up(args.llm_url)
            if models is None:
                print(
                    f"\n## condense (smoke test): no server answers GET {args.llm_url}/models; skipped "
                    f"(start one: scripts/llm-server.sh start)"
                )
                out.append({"part": "condense (smoke test)", "skipped": f"no server at {args.llm_url}"})
            else:
                print(f"\n(server at {args.llm_url} lists: {models})")
                out.append(run_condense(args.llm_url, args.llm_model, work))
                print(
                    "\nSMOKE TEST of a 135M model: it proves the condense path runs against a real server; "
                    "the rewrites' quality says nothing about what a capable model's would be worth."
                )
                print_part(out[-1])
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"parts": out}, indent=2, default=str))


if __name__ == "__main__":
    main()
