"""Write a run directory: manifest.json, records.parquet, summary.csv; print the summary table.

Everything here is derived from the journal, so it is rewritten in full by every invocation
(cheap) and is always consistent with what was computed.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

RETRIEVAL_METRICS = ["hit", "mrr", "ndcg", "span_recall", "span_precision", "doc_mrr"]
BERTSCORE_METRICS = ["bertscore_p", "bertscore_r", "bertscore_f1",
                     "bertscore_p_rescaled", "bertscore_r_rescaled", "bertscore_f1_rescaled"]
LATENCY_METRICS = ["retrieval_ms", "query_embedding_ms", "generation_ms"]
SUMMARY_METRICS = BERTSCORE_METRICS + RETRIEVAL_METRICS + LATENCY_METRICS
TABLE_METRICS = ["bertscore_f1_rescaled", "hit", "mrr", "ndcg", "span_recall", "span_precision"]
FORMAT_VERSION = 1

_PACKAGES = ["ragsweep", "llama-index-core", "llama-index-retrievers-bm25", "llama-index-vector-stores-chroma",
             "chromadb", "langchain-text-splitters", "langchain-experimental", "bert-score", "sentence-transformers",
             "transformers", "torch", "bm25s", "pandas", "pyarrow", "numpy", "pydantic"]


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for p in _PACKAGES:
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = "not installed"
    return out


def build_records(questions, configs, journal, scorer_key: str | None = None):
    """One row per (configuration, question) present in the journal, with scores joined in
    (only scores made with the current BERTScore settings, ``scorer_key``, when given)."""
    import pandas as pd

    by_hash = {c.config_hash: c for c in configs}
    qs = {q.qid: q for q in questions}
    scores = {k: v for k, v in journal.scores().items() if scorer_key is None or v.get("scorer") == scorer_key}
    rows = []
    for h, qid, config_id, payload in journal.answers(set(by_hash)):
        q = qs.get(qid)
        if q is None:
            continue
        c = by_hash[h]
        row = {
            "config_id": c.config_id, "config_hash": h, "splitter": c.chunk_key,
            "embedding": c.embedding.label() if c.embedding is not None else None,
            "retriever": c.retriever.label(), "top_k": c.top_k,
            "qid": qid, "question": q.question, "qtype": q.qtype, "reference_answer": q.reference_answer,
            "n_gold_spans": len(q.evidence),
            "answer": payload.get("answer"), "answer_empty": payload.get("answer_empty"),
            "generator": payload.get("generator"), "sources": payload.get("sources") or [],
            **{m: payload.get(m) for m in RETRIEVAL_METRICS + LATENCY_METRICS},
            "error": payload.get("error"),
        }
        s = scores.get((h, qid), {})
        row.update({m: s.get(m) for m in BERTSCORE_METRICS})
        rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    for m in SUMMARY_METRICS:
        df[m] = pd.to_numeric(df[m], errors="coerce").astype("float64")
    order = {c.config_hash: i for i, c in enumerate(configs)}
    qorder = {q.qid: i for i, q in enumerate(questions)}
    df = df.sort_values(by=["config_hash", "qid"], key=lambda s: s.map(order if s.name == "config_hash" else qorder))
    return df.reset_index(drop=True)


def build_summary(records, configs, spec):
    """Per configuration: mean and bootstrap CI of every metric, plus counts of errors and empties."""
    import pandas as pd

    from ragsweep.evaluation.bootstrap import summarise

    if records.empty:
        return pd.DataFrame()
    ok = records[records["error"].isna()]
    summ = summarise(ok, ["config_id"], SUMMARY_METRICS, n_resamples=spec.scoring.bootstrap_samples,
                     confidence=spec.scoring.confidence, seed=spec.seed)
    counts = records.groupby("config_id").agg(
        n_questions=("qid", "size"),
        n_errors=("error", lambda s: int(s.notna().sum())),
        n_empty_answers=("answer_empty", lambda s: int(s.eq(True).sum())),
    ).reset_index()
    lat = ok.groupby("config_id").agg(
        retrieval_ms_median=("retrieval_ms", "median"),
        retrieval_ms_p95=("retrieval_ms", lambda s: s.quantile(0.95)),
        generation_ms_median=("generation_ms", "median"),
    ).reset_index()
    counts = counts.merge(lat, on="config_id", how="left")
    meta = pd.DataFrame([{
        "config_id": c.config_id, "config_hash": c.config_hash, "splitter": c.chunk_key,
        "embedding": c.embedding.label() if c.embedding is not None else None,
        "retriever": c.retriever.label(), "top_k": c.top_k,
    } for c in configs])
    out = meta.merge(counts, on="config_id", how="inner").merge(summ, on="config_id", how="left")
    return out


def write_outputs(spec, dataset, questions, configs, journal, run_dir: Path, stats, limit, console,
                  cache_dir: Path | None = None, scorer_key: str | None = None) -> dict:
    records = build_records(questions, configs, journal, scorer_key)
    summary = build_summary(records, configs, spec)
    run_dir.mkdir(parents=True, exist_ok=True)
    _atomic(run_dir / "records.parquet", lambda p: records.to_parquet(p, index=False))
    _atomic(run_dir / "summary.csv", lambda p: summary.to_csv(p, index=False))
    expected = len(configs) * len(questions)
    # complete: every (configuration, question) answered without error, and scored wherever a reference exists
    complete = (not records.empty and len(records) == expected and int(records["error"].notna().sum()) == 0
                and bool((records["bertscore_f1"].notna()
                          | records["reference_answer"].fillna("").str.strip().eq("")).all()))
    manifest = _manifest(spec, dataset, questions, configs, stats, limit, complete, len(records), expected, run_dir)
    manifest["cache_dir"] = str(Path(cache_dir).resolve()) if cache_dir is not None else None
    _atomic(run_dir / "manifest.json",
            lambda p: Path(p).write_text(json.dumps(manifest, indent=2, ensure_ascii=False), encoding="utf-8"))
    if console is not None:
        print_summary(summary, console, title=f"{spec.name}: {len(questions)} questions, {len(configs)} configurations")
    return manifest


def _manifest(spec, dataset, questions, configs, stats, limit, complete, n_records, expected, run_dir) -> dict:
    from ragsweep import __version__

    previous = []
    old = run_dir / "manifest.json"
    if old.is_file():
        try:
            previous = json.loads(old.read_text(encoding="utf-8")).get("invocations", [])
        except ValueError:
            previous = []
    invocation = {
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "argv": [os.path.basename(sys.argv[0])] + sys.argv[1:],
        "timings_s": {k: round(v, 3) for k, v in stats.timings.items()},
        "answered": stats.answered, "failed": stats.failed, "skipped_already_done": stats.skipped_done,
        "embeddings_computed": stats.embeddings_computed,
        "query_embeddings_computed": stats.query_embeddings_computed,
        "embeddings_from_cache": stats.embeddings_from_cache,
        "indexes_built": stats.indexes_built, "indexes_reused": stats.indexes_reused,
        "bertscore_pairs_computed": stats.bertscore_pairs_computed,
        "bertscore_pairs_unique": stats.bertscore_pairs_total,
        "chunks": stats.chunks, "unique_chunk_texts": stats.unique_chunk_texts,
    }
    from ragsweep.evaluation.bertscore import MINILM_ID

    bs = spec.scoring.bertscore
    return {
        "format_version": FORMAT_VERSION,
        "ragsweep_version": __version__,
        "status": "complete" if complete else "incomplete",
        "records": n_records, "expected_records": expected,
        "spec": spec.model_dump(mode="json"),
        "seed": spec.seed,
        "question_limit": limit,
        "dataset": {
            "name": dataset.name, "fingerprint": dataset.fingerprint(),
            "corpus_fingerprint": dataset.corpus_fingerprint(),
            "documents": len(dataset.documents), "questions": len(dataset.questions),
            "questions_used": len(questions), "notes": list(dataset.notes),
        },
        "generator": {"label": "extractive-baseline", "llm": None,
                      "note": "offline baseline: answers are retrieved sentences, not generated text"},
        "bertscore": {"backbone": MINILM_ID if bs.model == "minilm" else bs.model, "num_layers": bs.num_layers or
                      (6 if bs.model == "minilm" else None), "baseline": bs.baseline},
        "configurations": [{"config_id": c.config_id, "config_hash": c.config_hash, **c.resolved()} for c in configs],
        "versions": package_versions(),
        "platform": {"machine": platform.machine(), "system": platform.system(), "cpus": os.cpu_count()},
        "invocations": previous + [invocation],
        "written_at": time.time(),
    }


def _atomic(path: Path, write) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    write(tmp)
    os.replace(tmp, path)


_SHORT = {"bertscore_f1_rescaled": "BS-F1 resc.", "bertscore_f1": "BS-F1", "hit": "hit", "mrr": "MRR",
          "ndcg": "nDCG", "span_recall": "spanR", "span_precision": "spanP", "doc_mrr": "docMRR"}


def print_summary(summary, console, title: str = "summary", metrics: list[str] | None = None) -> None:
    """A rich table, best first by the first metric (shown with its 95% CI); summary.csv has every CI.

    Configuration ids are never cut: when the console is narrow, trailing metric columns are
    left out instead (and named in the caption).
    """
    from rich.table import Table

    metrics = metrics or TABLE_METRICS
    if summary.empty:
        console.print("[yellow]no results yet[/yellow]")
        return
    key = metrics[0]
    ordered = summary.sort_values(key, ascending=False, na_position="last")
    id_w = max(len("configuration"), int(summary["config_id"].astype(str).str.len().max()))
    n_w = max(len(f"{int(n)} ({int(e)} err)" if e else str(int(n)))
              for n, e in zip(summary["n_questions"], summary["n_errors"]))
    # each column takes its content + 2 padding + 1 rule: id, n, headline with CI, ms, then 5-wide metrics
    width = 1 + (id_w + 3) + (n_w + 3) + (22 + 3) + (5 + 3)
    shown = [key]
    for m in metrics[1:]:
        if width + 8 > console.width:
            break
        shown.append(m)
        width += 8
    left_out = [m for m in metrics if m not in shown]
    caption = (f"sorted by {key} [95% bootstrap CI]; retrieval metrics at the configuration's top_k; "
               "BS = BERTScore; ms = median retrieval latency")
    if left_out:
        caption += f"; not shown (narrow terminal): {', '.join(left_out)} (see summary.csv)"
    table = Table(title=title, caption=caption, pad_edge=False)
    table.add_column("configuration", style="bold", no_wrap=True, min_width=id_w)
    table.add_column("n", justify="right", no_wrap=True)
    for m in shown:
        table.add_column(_SHORT.get(m, m), justify="right", no_wrap=True)
    table.add_column("ms", justify="right", no_wrap=True)
    for _, row in ordered.iterrows():
        n = f"{int(row['n_questions'])}" + (f" ({int(row['n_errors'])} err)" if row["n_errors"] else "")
        cells = [str(row["config_id"]), n]
        for i, m in enumerate(shown):
            v = row.get(m)
            if v is None or v != v:
                cells.append("-")
            elif i == 0:
                cells.append(f"{v:.3f} [{row.get(f'{m}_lo'):.3f}, {row.get(f'{m}_hi'):.3f}]")
            else:
                cells.append(f"{v:.3f}")
        r = row.get("retrieval_ms_median")
        cells.append("-" if r is None or r != r else f"{r:.1f}")
        table.add_row(*cells)
    console.print(table)
