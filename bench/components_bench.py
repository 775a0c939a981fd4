"""Benchmark: the issue-17 components on LegalBench-RAG, each against its own base and the best plain
configuration: offline late-interaction reranking (``maxsim``), RM3 query expansion of BM25, and
fusion weights tuned on the validation questions.

Per subset, one cold ``ragsweep run`` (fresh cache and run directory, whole process) of: the
sentence splitter at 512/64 (the strongest splitter of the legalbench sweeps in BENCHMARKS.md:
best MRR on privacy_qa, best configuration on contractnli) x bundled MiniLM x retrievers {bm25,
vector, fusion (RRF), fusion RRF with weights tuned on validation, fusion relative-score with
weights tuned on validation} x query transforms {none, rm3 (on bm25 and fusion)} x rerankers
{none, late_interaction with 20 candidates (on bm25, vector, fusion)} x ``--top-k``. Prints, per subset:
  - per configuration: test MRR, hit and span recall with the run's own 95% CIs (``summary.csv``),
    validation MRR, median ``rerank_ms`` and ``retrieval_ms`` per question;
  - per component configuration, its test-MRR difference against its own base (the same retriever
    without the component; plain RRF fusion for the tuned fusions) and against the best plain
    configuration chosen on validation: paired bootstrap CI, ``paired_test`` p-value and Holm over
    that family of comparisons;
  - the sweep's wall time and peak memory, and what the components added: the sweep's answering
    stage less that of the plain configurations alone, re-run warm on the sweep's cache
    (``rerank_ms`` summed over configurations counts a score shared by two base retrievers twice, as
    if each ran alone, so it overstates a sweep's cost), and each tuning's milliseconds;
  - sanity figures: errors in records, reranked top-k identical across base retrievers, and how
    often a reranked top-k holds a chunk the base retriever ranked below k.

Usage: python bench/components_bench.py [--data ../shared/datasets/legalbench-rag]
       [--subsets privacy_qa,contractnli] [--top-k 5] [--limit [SUBSET=]N] [--work DIR] [--json FILE]
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from legalbench_args import run_subsets
from measure import bench_env, measured

from ragsweep.evaluation.test_options import TestOptions

if TYPE_CHECKING:
    import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
# a tuned fusion's own base: plain RRF fusion (what a user runs without tuning)
BASE_OF = {"fusion-wtune": "fusion", "fusion-rel-wtune": "fusion"}

_SPEC = """\
name: {name}
seed: 0
dataset:
  corpus: {{format: legalbench, path: {data}, subset: {subset}}}
  questions: {{format: legalbench, path: {data}, subset: {subset}}}
splitters:
  - {{kind: sentence, chunk_size: 512, chunk_overlap: 64}}
embeddings:
  - {{kind: sentence_transformers, model: minilm, batch_size: 32}}
retrievers:
  - {{kind: bm25}}
  - {{kind: vector}}
  - {{kind: fusion, mode: reciprocal_rerank}}
{tuned}
query_transforms:
{transforms}
rerankers:
{rerankers}
top_k: {top_k}
scoring: {{metric: mrr}}
output_dir: {out}
"""


COMPONENTS = {
    "tuned": """\
  - {kind: fusion, mode: reciprocal_rerank, weights: tune}
  - {kind: fusion, mode: relative_score, weights: tune}""",
    "transforms": """\
  - {kind: none}
  - {kind: rm3, apply_to: [bm25, fusion]}""",
    "rerankers": """\
  - {kind: none}
  - {kind: late_interaction, candidates: 20, apply_to: [bm25, vector, fusion]}""",
}
PLAIN = {"tuned": "", "transforms": "  - {kind: none}", "rerankers": "  - {kind: none}"}


def _env() -> dict:
    return bench_env(default_backend=False)


def _sweep(
    data: str,
    subset: str,
    top_k: list[int],
    limit: int | None,
    work: Path,
    name: str,
    parts: dict,
    fresh: bool,
    template: str = _SPEC,
) -> tuple[float, int, list[str]]:
    """One ``ragsweep run`` of spec ``name`` (``template`` filled with ``parts``) with the subset's cache:
    wall seconds, peak RSS, command."""
    spec = work / f"{name}.yaml"
    spec.write_text(
        template.format(name=name, data=Path(data).resolve(), subset=subset, top_k=top_k, out=work / "runs", **parts),
        encoding="utf-8",
    )
    cmd = [
        sys.executable,
        "-m",
        "ragsweep.cli",
        "run",
        str(spec),
        "--no-progress",
        "--fresh",
        "--cache",
        str(work / f"cache-{subset}"),
    ]
    if fresh:
        shutil.rmtree(work / f"cache-{subset}", ignore_errors=True)
    if limit:
        cmd += ["--limit", str(limit)]
    wall, peak = measured(cmd, _env())
    return wall, peak, cmd


def run_subset(data: str, subset: str, top_k: list[int], limit: int | None, work: Path) -> dict:
    """One cold sweep of ``subset`` (its own empty cache, so timings include every model load and
    encoding), then the plain configurations alone on the cache it left (their answering stage is the
    sweep's without reranking), then the figures."""
    digest = source_digest()
    load_before = os.getloadavg()[0]  # a shared machine: say how busy it was
    wall, peak, cmd = _sweep(data, subset, top_k, limit, work, f"components-{subset}", COMPONENTS, fresh=True)
    load_after = os.getloadavg()[1]
    plain_wall, _, _ = _sweep(data, subset, top_k, limit, work, f"components-{subset}-plain", PLAIN, fresh=False)
    fig = figures(work / "runs" / f"components-{subset}")
    plain = _manifest(work / "runs" / f"components-{subset}-plain")["invocations"][-1]["timings_s"]
    # every component runs inside the answering stage; the plain run's answering stage is the rest of it
    # (it searches at depth top_k, not at the candidates' depth: index search is a small part of either)
    added = fig["stages_s"]["answering"] - plain["answering"]
    fig.update(
        subset=subset,
        wall_s=wall,
        peak_rss_mb=peak / 2**20,
        limit=limit,
        command=" ".join(cmd[1:]),
        loadavg_1min_before=load_before,
        loadavg_5min_after=load_after,
        plain_warm_wall_s=plain_wall,
        plain_answering_s=plain["answering"],
        rerank_added_s=added,
        rerank_added_s_per_question=added / fig["questions"],
        source_digest=digest,
    )
    return fig


def _manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def source_digest() -> str:
    """A digest of the installed ragsweep sources: which code state the figures come from (uncommitted work)."""
    import hashlib

    h = hashlib.sha256()
    for p in sorted((ROOT / "src" / "ragsweep").rglob("*.py")):
        h.update(p.read_bytes())
    return h.hexdigest()[:12]


def _config_rows(run: Any) -> list[dict]:
    """Per configuration: the test summary with CIs, validation MRR and median latencies over all questions."""
    rec = run.records
    test, val = run.split("test").set_index("config_id"), run.split("validation").set_index("config_id")
    rows = []
    for cid, r in test.iterrows():
        per_q = rec[rec["config_id"] == cid]
        retriever = str(r["retriever"]).split("+")[0]
        rows.append(
            {
                "config_id": cid,
                "retriever": retriever,
                "top_k": int(r["top_k"]),
                "reranker": None if _missing(r["reranker"]) else str(r["reranker"]),
                "transform": None if _missing(r.get("query_transform")) else str(r["query_transform"]),
                "tuned": retriever in BASE_OF,
                **{
                    f"test_{m}{s}": float(r[f"{m}{s}"])
                    for m in ("mrr", "hit", "span_recall")
                    for s in ("", "_lo", "_hi")
                },
                "test_n": int(r["mrr_n"]),
                "validation_mrr": float(val.loc[cid, "mrr"]),
                "rerank_ms_median": _median(per_q["rerank_ms"]),
                "retrieval_ms_median": _median(per_q["retrieval_ms"]),
                "errors": int(per_q["error"].notna().sum()),
            }
        )
    return rows


def _is_plain(r: dict) -> bool:
    return r["reranker"] is None and r["transform"] is None and not r["tuned"]


def _comparisons(run: Any, rows: list[dict]) -> tuple[str, list[dict]]:
    """Test-MRR differences of each component configuration against its base and against the best plain
    configuration chosen on validation; one Holm family (a pair asked twice counts once)."""
    plain = [r for r in rows if _is_plain(r)]
    best = min(plain, key=lambda r: (-r["validation_mrr"], r["config_id"]))["config_id"]
    base = {(r["retriever"], r["top_k"]): r["config_id"] for r in plain}
    pairs: list[tuple[str, str, str]] = []
    for r in rows:
        if not _is_plain(r):
            own = base[(BASE_OF.get(r["retriever"], r["retriever"]), r["top_k"])]
            pairs.append((r["config_id"], own, "own base"))
            if own != best:
                pairs.append((r["config_id"], best, "best plain"))
    out = paired_family(run.records, pairs, "mrr")
    for c in out:
        c["mrr_a"], c["mrr_b"] = c.pop("a"), c.pop("b")
    return best, out


def difference_fields(d, t) -> dict:
    """The figures of one paired comparison: ``d`` a ``significance.paired_difference``, ``t`` a ``paired_test``."""
    return {
        "n": d.n,
        "a": d.mean_a,
        "b": d.mean_b,
        "diff": d.diff,
        "diff_lo": d.diff_lo,
        "diff_hi": d.diff_hi,
        "p_value": t.p_value,
        "test": t.method,
    }


def paired_family(rec: "pd.DataFrame", pairs: list[tuple[str, str, str]], metric: str) -> list[dict]:
    """Test differences in ``metric`` for (configuration, against, kind) ``pairs``: paired bootstrap CI,
    ``paired_test`` p-value, Holm over the pairs, and the validation difference."""
    from ragsweep.evaluation.paired_tests import paired_test
    from ragsweep.evaluation.significance import holm, paired_difference

    matrix = rec[rec["split"] == "test"].pivot(index="qid", columns="config_id", values=metric).sort_index()
    val = rec[rec["split"] == "validation"].pivot(index="qid", columns="config_id", values=metric)
    out = []
    for a, b, against in pairs:
        d = paired_difference(matrix[a].to_numpy(), matrix[b].to_numpy(), seed=0)
        t = paired_test(
            matrix[a].to_numpy(), matrix[b].to_numpy(), family_size=len(pairs), tests=TestOptions(alpha=0.05)
        )
        out.append(
            {
                "metric": metric,
                "config": a,
                "against": b,
                "kind": against,
                **difference_fields(d, t),
                "validation_diff": float((val[a] - val[b]).mean()),
            }
        )
    for c, p in zip(out, holm([c["p_value"] for c in out])):
        c["p_holm"], c["significant"] = p, bool(p < 0.05)
    return out


def _diagnostics(run: Any, rows: list[dict]) -> dict:
    """Reranked top-k identical across base retrievers, and chunks promoted from below the base top k."""
    rec = run.records
    ids = {
        cid: {q: tuple(s["node_id"] for s in src) for q, src in zip(g["qid"], g["sources"])}
        for cid, g in rec.groupby("config_id")
    }
    out: dict[str, dict] = {}
    for r in rows:
        if r["reranker"] is None:
            continue
        g = rec[rec["config_id"] == r["config_id"]]
        srcs = [s for src in g["sources"] for s in src]
        promoted = sum(1 for s in srcs if s.get("rank_base") is not None and s["rank_base"] > r["top_k"])
        out[r["config_id"]] = {
            "sources": len(srcs),
            "promoted_from_below_k": promoted,
            "promoted_share": promoted / len(srcs) if srcs else float("nan"),
        }
    for rr, k in sorted({(r["reranker"], r["top_k"]) for r in rows if r["reranker"] is not None}):
        same = [r["config_id"] for r in rows if r["reranker"] == rr and r["top_k"] == k]
        qs = set.intersection(*(set(ids[c]) for c in same))
        equal = sum(len({ids[c][q] for c in same}) == 1 for q in qs)
        out[f"{rr}-k{k} identical top-k across {len(same)} retrievers"] = {"questions": len(qs), "identical": equal}
    return out


def figures(run_dir: Path) -> dict:
    """Everything the tables show, from the run directory (``load_run``)."""
    import ragsweep

    run = ragsweep.load_run(run_dir)
    rows = _config_rows(run)
    best, comps = _comparisons(run, rows)
    rec = run.records
    n_q = rec["qid"].nunique()
    k0 = min(r["top_k"] for r in rows)  # one top_k: rerank_ms is the same for every k of a pair (memoised)
    cost = {}
    for rr in sorted({r["reranker"] for r in rows if r["reranker"] is not None}):
        per = rec[(rec["reranker"] == rr) & (rec["top_k"] == k0)]
        cost[rr] = {
            "total_s": float(per["rerank_ms"].sum()) / 1000,
            "s_per_question_all_retrievers": float(per["rerank_ms"].sum()) / 1000 / n_q,
            "ms_mean_per_retriever_question": float(per["rerank_ms"].mean()),
        }
    inv = run.meta["invocations"][-1]
    tuned = {
        c: {"weights": t["weights"], "tuning_ms": t.get("tuning_ms"), "n_validation": t["n_validation"]}
        for c, t in (run.meta.get("tuned_weights") or {}).items()
    }
    return {
        "configs": rows,
        "tuned_weights": tuned,
        "best_plain_on_validation": best,
        "comparisons": comps,
        "verdict": json.loads((run_dir / "verdict.json").read_text()).get("chosen"),
        "questions": n_q,
        "test_questions": int(rec.loc[rec["split"] == "test", "qid"].nunique()),
        "records": len(rec),
        "errors": int(rec["error"].notna().sum()),
        "rerank_cost": cost,
        "stages_s": inv["timings_s"],
        "chunks": inv["chunks"],
        "diagnostics": _diagnostics(run, rows),
    }


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and x != x)


def _median(s: "pd.Series") -> float | None:
    s = s.dropna()
    return float(s.median()) if len(s) else None


def _ci(r: dict, m: str, prefix: str = "test_") -> str:
    return f"{r[f'{prefix}{m}']:.3f} [{r[f'{prefix}{m}_lo']:.2f}, {r[f'{prefix}{m}_hi']:.2f}]"


def _ms(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"


def print_heading(f: dict) -> None:
    lim = f" (first {f['limit']} questions)" if f["limit"] else ""
    print(
        f"\n### {f['subset']}{lim}: {f['questions']} questions ({f['test_questions']} test), "
        f"{len(f['configs'])} configurations, chunks {f['chunks']}\n"
    )


def print_subset(f: dict) -> None:
    """The subset's tables as Markdown (pasteable into BENCHMARKS.md)."""
    print_heading(f)
    print(
        "| configuration | test MRR [95% CI] | test hit@k | test span recall | validation MRR | rerank ms (median) "
        "| retrieval ms (median) |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in f["configs"]:
        print(
            f"| {r['config_id']} | {_ci(r, 'mrr')} | {_ci(r, 'hit')} | {_ci(r, 'span_recall')} "
            f"| {r['validation_mrr']:.3f} | {_ms(r['rerank_ms_median'])} | {_ms(r['retrieval_ms_median'])} |"
        )
    n = len(f["comparisons"])
    print(
        f"\nTest MRR differences (paired; Holm over the {n} comparisons; best plain on validation: "
        f"{f['best_plain_on_validation']}):\n"
    )
    print(
        "| component | against | test MRR (component vs against) | difference [95% CI] | p | p Holm | test "
        "| validation difference |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for c in f["comparisons"]:
        star = " *" if c["significant"] else ""
        print(
            f"| {c['config']} | {c['against']} ({c['kind']}) | {c['mrr_a']:.3f} vs {c['mrr_b']:.3f} "
            f"| {c['diff']:+.3f} [{c['diff_lo']:+.3f}, {c['diff_hi']:+.3f}]{star} | {c['p_value']:.2g} "
            f"| {c['p_holm']:.2g} | {c['test']} | {c['validation_diff']:+.3f} |"
        )
    print(
        f"\nsweep: cold wall {f['wall_s']:.1f} s (whole process), peak RSS {f['peak_rss_mb']:.0f} MB; "
        f"stages (s) {json.dumps(f['stages_s'])}; load average {f['loadavg_1min_before']:.1f} (1 min, before), "
        f"{f['loadavg_5min_after']:.1f} (5 min, after)"
    )
    print(
        f"the components added {f['rerank_added_s']:.1f} s to the answering stage = "
        f"{f['rerank_added_s_per_question']:.3f} s per question (all component configurations; answering "
        f"{f['stages_s']['answering']:.1f} s vs {f['plain_answering_s']:.1f} s for the plain configurations alone)"
    )
    for rr, c in f["rerank_cost"].items():
        print(
            f"  rerank_ms as the run reports it (each pair as if alone), {rr}: sum {c['total_s']:.1f} s = "
            f"{c['s_per_question_all_retrievers']:.3f} s per question over 3 retrievers, "
            f"{c['ms_mean_per_retriever_question']:.1f} ms mean per (retriever, question)"
        )
    for c, t in f["tuned_weights"].items():
        print(
            f"  {c}: weights {t['weights']} chosen on {t['n_validation']} validation questions in {t['tuning_ms']} ms"
        )
    print(f"records {f['records']}, errors {f['errors']}; verdict (by MRR, chosen on validation): {f['verdict']}")
    for k, v in f["diagnostics"].items():
        print(f"  {k}: {v}")


def main() -> None:
    run_subsets(__doc__.splitlines()[0], "ragsweep-components-", run_subset, print_subset)


if __name__ == "__main__":
    main()
