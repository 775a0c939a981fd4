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
SELECTABLE_METRICS = BERTSCORE_METRICS + RETRIEVAL_METRICS
TABLE_METRICS = ["bertscore_f1_rescaled", "hit", "mrr", "ndcg", "span_recall", "span_precision"]
# stage 2: per question, correctness is the 1-5 score, the others 1/0 (YES/NO); NaN when unmeasured
JUDGE_METRICS = ["correctness", "correctness_pass", "faithfulness", "relevancy"]
JUDGE_OF = {"correctness": "correctness", "correctness_pass": "correctness", "faithfulness": "faithfulness",
            "relevancy": "relevancy"}
SPLITS = ["test", "validation", "all"]
FORMAT_VERSION = 3  # 3: questions.parquet, status 'running' at start-up, configuration labels

_PACKAGES = ["ragsweep", "llama-index-core", "llama-index-retrievers-bm25", "llama-index-vector-stores-chroma",
             "chromadb", "langchain-text-splitters", "langchain-experimental", "bert-score", "sentence-transformers",
             "transformers", "torch", "onnxruntime", "bm25s", "pandas", "pyarrow", "numpy", "pydantic"]


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for p in _PACKAGES:
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = "not installed"
    return out


def question_rows(questions, split: dict | None = None) -> list[dict]:
    """The questions as plain rows (written to ``questions.parquet``): what records need of them,
    plus the gold evidence spans the report shows."""
    return [{"qid": q.qid, "question": q.question, "qtype": q.qtype, "reference_answer": q.reference_answer,
             "split": (split or {}).get(q.qid, "all"),
             "evidence": [{"doc_id": e.doc_id, "start": e.start, "end": e.end} for e in q.evidence]}
            for q in questions]


def build_records(questions: list[dict], configs: list[dict], journal, scorer_key: str | None = None,
                  judge_keys: dict | None = None):
    """One row per (configuration, question) present in the journal, with scores joined in
    (only scores made with the current BERTScore settings, ``scorer_key``, when given) and, with
    ``judge_keys``, the stage-2 judgements made with the current judge settings.

    ``questions`` are ``question_rows``, ``configs`` ``Configuration.labels()``: plain rows, so a
    killed run's records can be rebuilt from its directory alone (``ragsweep.load_run``)."""
    import pandas as pd

    by_hash = {c["config_hash"]: c for c in configs}
    qs = {q["qid"]: q for q in questions}
    scores = {k: v for k, v in journal.scores().items() if scorer_key is None or v.get("scorer") == scorer_key}
    judged = journal.judgements(judge_keys) if judge_keys else {}
    rows = []
    for h, qid, config_id, payload in journal.answers(set(by_hash)):
        q = qs.get(qid)
        if q is None:
            continue
        row = {
            **by_hash[h],
            "qid": qid, "question": q["question"], "qtype": q["qtype"], "reference_answer": q["reference_answer"],
            "n_gold_spans": len(q["evidence"]),
            "answer": payload.get("answer"), "answer_empty": payload.get("answer_empty"),
            "generator": payload.get("generator"), "sources": payload.get("sources") or [],
            **{m: payload.get(m) for m in RETRIEVAL_METRICS + LATENCY_METRICS},
            "error": payload.get("error"),
        }
        llm = payload.get("llm") or {}
        row.update({"split": q["split"],
                    "llm_calls": llm.get("llm_calls"), "llm_cached": llm.get("llm_cached"),
                    "prompt_tokens": llm.get("prompt_tokens"), "completion_tokens": llm.get("completion_tokens"),
                    "cost_usd": llm.get("cost_usd")})
        s = scores.get((h, qid), {})
        row.update({m: s.get(m) for m in BERTSCORE_METRICS})
        if judge_keys:
            for j in judge_keys:
                jv = judged.get((h, qid, j))
                row[f"{j}_status"] = jv.get("status") if jv else None
                row[f"{j}_reason"] = jv.get("reason") if jv else None
                row[f"{j}_raw"] = jv.get("raw") if jv else None
                row[j] = jv.get("score") if jv and jv.get("status") == "ok" else None
                if j == "correctness":
                    row["correctness_reasoning"] = jv.get("reasoning") if jv else None
                    row["correctness_pass"] = (float(jv["passing"]) if jv and jv.get("status") == "ok" else None)
                row[f"{j}_cost_usd"] = (jv.get("llm") or {}).get("cost_usd") if jv else None
        rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    for m in SUMMARY_METRICS + [m for m in JUDGE_METRICS if m in df.columns]:
        df[m] = pd.to_numeric(df[m], errors="coerce").astype("float64")
    order = {c["config_hash"]: i for i, c in enumerate(configs)}
    qorder = {q["qid"]: i for i, q in enumerate(questions)}
    df = df.sort_values(by=["config_hash", "qid"], key=lambda s: s.map(order if s.name == "config_hash" else qorder))
    return df.reset_index(drop=True)


def build_summary(records, configs: list[dict], scoring: dict, seed: int, selection: dict | None = None):
    """Per configuration and split (test, validation, all): mean and bootstrap CI of every metric,
    counts of errors and empty answers, and for stage-2 judges the unmeasured count next to the
    mean (which excludes them). ``configs`` are ``Configuration.labels()``; ``scoring`` the spec's
    ``scoring`` section as a dict (``bootstrap_samples``, ``confidence``)."""
    import pandas as pd

    from ragsweep.evaluation.bootstrap import summarise

    if records.empty:
        return pd.DataFrame()
    judge_metrics = [m for m in JUDGE_METRICS if m in records.columns]
    parts = []
    for split in SPLITS:
        recs = records if split == "all" else records[records["split"] == split]
        if recs.empty:
            continue
        ok = recs[recs["error"].isna()]
        summ = summarise(ok, ["config_id"], SUMMARY_METRICS + judge_metrics,
                         n_resamples=scoring["bootstrap_samples"], confidence=scoring["confidence"], seed=seed)
        aggs = dict(
            n_questions=("qid", "size"),
            n_errors=("error", lambda s: int(s.notna().sum())),
            n_empty_answers=("answer_empty", lambda s: int(s.eq(True).sum())),
        )
        counts = recs.groupby("config_id").agg(**aggs).reset_index()
        for m in judge_metrics:
            status = recs[f"{JUDGE_OF[m]}_status"]
            extra = recs.assign(_u=status.eq("unmeasured"), _f=status.eq("failed")).groupby("config_id").agg(
                **{f"{m}_unmeasured": ("_u", "sum"), f"{m}_failed": ("_f", "sum")}).reset_index()
            counts = counts.merge(extra, on="config_id", how="left")
        cost = recs.groupby("config_id").agg(
            generation_cost_usd=("cost_usd", lambda s: float(s.sum()) if s.notna().any() else None),
            generation_prompt_tokens=("prompt_tokens", "sum"),
            generation_completion_tokens=("completion_tokens", "sum"),
        ).reset_index()
        lat = ok.groupby("config_id").agg(
            retrieval_ms_median=("retrieval_ms", "median"),
            retrieval_ms_p95=("retrieval_ms", lambda s: s.quantile(0.95)),
            generation_ms_median=("generation_ms", "median"),
        ).reset_index()
        part = counts.merge(lat, on="config_id", how="left").merge(cost, on="config_id", how="left")
        part = part.merge(summ, on="config_id", how="left")
        part.insert(1, "split", split)
        parts.append(part)
    meta = pd.DataFrame(configs)
    if selection and selection.get("ranking"):
        rank = pd.DataFrame(selection["ranking"])[["config_id", "rank", "selected", "reason"]].rename(
            columns={"rank": "selection_rank", "selected": "stage2_selected", "reason": "selection_reason"})
        meta = meta.merge(rank, on="config_id", how="left")
    out = meta.merge(pd.concat(parts, ignore_index=True), on="config_id", how="inner")
    cols = [c for c in out.columns if not c.endswith(("_unmeasured", "_failed"))]
    for m in judge_metrics:  # the unmeasured and failed counts right after the judge's mean columns
        at = cols.index(f"{m}_n") + 1
        cols[at:at] = [f"{m}_unmeasured", f"{m}_failed"]
    return out[cols]


def build_comparisons(records, spec, selection: dict | None):
    """On the test questions: the best configuration against each other one, paired permutation
    test with Holm correction and effect size; stage 1 by the selection metric over all
    configurations, stage 2 by each judge metric over the judged ones.

    "Best" is the configuration ranked first on the *validation* questions when stage 2 selected
    one, so the test questions that give the p-values did not also pick the winner (picking the
    test-set maximum and testing it on the same data would bias the p-values downwards);
    without a selection it is the test-set best, and the p-values are post hoc."""
    import pandas as pd

    from ragsweep.evaluation.significance import COMPARE_COLUMNS, compare_to_best

    if records.empty:
        return pd.DataFrame(columns=["stage"] + COMPARE_COLUMNS)
    test = records[(records["split"] == "test") & records["error"].isna()]
    metric = spec.stage2.select_metric if spec.stage2 is not None else TABLE_METRICS[0]
    frames = []
    best = (selection or {}).get("selected", [None])[0] if (selection or {}).get("selected") else None
    if best is not None and not test["config_id"].eq(best).any():
        best = None
    if test[metric].notna().any():
        frames.append(compare_to_best(test[["config_id", "qid", metric]], metric, best=best, seed=spec.seed,
                                      n_boot=spec.scoring.bootstrap_samples,
                                      confidence=spec.scoring.confidence).assign(stage="stage1"))
    if selection and selection.get("selected"):
        judged = test[test["config_id"].isin(selection["selected"])]
        for m in [m for m in JUDGE_METRICS if m in judged.columns]:
            if judged[m].notna().any():
                frames.append(compare_to_best(judged[["config_id", "qid", m]], m, best=best, seed=spec.seed,
                                              n_boot=spec.scoring.bootstrap_samples,
                                              confidence=spec.scoring.confidence).assign(stage="stage2"))
    if not frames:
        return pd.DataFrame(columns=["stage"] + COMPARE_COLUMNS)
    out = pd.concat(frames, ignore_index=True)
    return out[["stage"] + [c for c in out.columns if c != "stage"]]


def write_started(spec, dataset, questions, configs, run_dir: Path, limit, cache_dir: Path | None,
                  scorer_key: str, split: dict) -> None:
    """Before any work: ``questions.parquet`` and a manifest with status ``running``, so that a
    killed sweep's directory still says what it was and ``load_run`` can rebuild its records
    from the journal."""
    import pandas as pd

    run_dir.mkdir(parents=True, exist_ok=True)
    rows = pd.DataFrame(question_rows(questions, split))
    _atomic(run_dir / "questions.parquet", lambda p: rows.to_parquet(p, index=False))
    manifest = _manifest(spec, dataset, questions, configs, None, limit, "running", None, run_dir)
    manifest.update(_run_context(spec, questions, cache_dir, scorer_key, split))
    if spec.stage2 is not None:
        from ragsweep.pipelines.stage2 import judge_keys

        manifest["stage2"] = {"judge_keys": judge_keys(spec), "selected": [], "skipped": "running"}
    manifest["running"] = {"pid": os.getpid(), "host": platform.node(),
                           "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    _write_manifest(run_dir, manifest)


def write_outputs(spec, dataset, questions, configs, journal, run_dir: Path, stats, limit, console,
                  cache_dir: Path | None = None, scorer_key: str | None = None, split: dict | None = None,
                  stage2: dict | None = None) -> dict:
    keys = stage2.get("judge_keys") if stage2 else None
    labels = [c.labels() for c in configs]
    records = build_records(question_rows(questions, split), labels, journal, scorer_key, keys)
    summary = build_summary(records, labels, spec.scoring.model_dump(), spec.seed, stage2)
    comparisons = build_comparisons(records, spec, stage2)
    run_dir.mkdir(parents=True, exist_ok=True)
    _atomic(run_dir / "records.parquet", lambda p: records.to_parquet(p, index=False))
    _atomic(run_dir / "summary.csv", lambda p: summary.to_csv(p, index=False))
    _atomic(run_dir / "comparisons.csv", lambda p: comparisons.to_csv(p, index=False))
    expected = len(configs) * len(questions)
    # complete: every (configuration, question) answered without error, scored wherever a reference
    # exists, and (stage 2) every selected configuration judged on every test question
    complete = (not records.empty and len(records) == expected and int(records["error"].notna().sum()) == 0
                and bool((records["bertscore_f1"].notna()
                          | records["reference_answer"].fillna("").str.strip().eq("")).all()))
    if spec.stage2 is not None:
        complete = complete and _stage2_complete(records, stage2, spec)
    status = "complete" if complete else "incomplete"
    if stats.stopped:
        status = "stopped_budget" if stats.stopped == "budget" else "incomplete"
    manifest = _manifest(spec, dataset, questions, configs, stats, limit, status, len(records), run_dir)
    manifest.update(_run_context(spec, questions, cache_dir, scorer_key, split))
    manifest["stage2"] = stage2
    _write_manifest(run_dir, manifest)
    if console is not None:
        test = summary[summary["split"] == "test"] if not summary.empty else summary
        metrics = TABLE_METRICS
        if stage2 and stage2.get("selected") and not test.empty:
            test = test[test["config_id"].isin(stage2["selected"])]
            metrics = [m for m in JUDGE_METRICS if m in test.columns] + TABLE_METRICS[:2]
        print_summary(test, console, title=f"{spec.name}: test questions ({len(test)} configurations shown of "
                      f"{len(configs)})", metrics=metrics)
        if stage2 and stage2.get("selected"):
            console.print(f"stage 2 judged: {', '.join(stage2['selected'])} ({stage2['rule']})")
        usage = manifest.get("usage")
        if usage and usage.get("calls"):
            console.print(_usage_line(usage))
    return manifest


def _run_context(spec, questions, cache_dir: Path | None, scorer_key: str | None, split: dict | None) -> dict:
    """Where the run's shared state lives and which scores and split its records use."""
    out = {"cache_dir": str(Path(cache_dir).resolve()) if cache_dir is not None else None,
           "bertscore_key": scorer_key}
    if split is not None:
        from ragsweep.evaluation.split import split_counts

        used = {q.qid for q in questions}
        out["split"] = {"validation_fraction": spec.split.validation_fraction, "seed": spec.seed,
                        "stratify": spec.split.stratify,
                        "counts": split_counts({k: v for k, v in split.items() if k in used}, questions)}
    return out


def _write_manifest(run_dir: Path, manifest: dict) -> None:
    _atomic(run_dir / "manifest.json",
            lambda p: Path(p).write_text(json.dumps(manifest, indent=2, ensure_ascii=False, default=str),
                                         encoding="utf-8"))


def _stage2_complete(records, stage2, spec) -> bool:
    if not stage2 or not stage2.get("selected"):
        return False
    sel = records[records["config_id"].isin(stage2["selected"]) & records["split"].eq("test")]
    for j in spec.stage2.judges:
        col = f"{j}_status"
        if col not in sel.columns or not sel[col].isin(["ok", "unmeasured"]).all():
            return False
    return True


def usage_summary(spending: list[dict]) -> dict:
    """Calls, tokens and dollars this run paid for, in total and by stage, judge and configuration."""
    def add(bucket: dict, row: dict) -> None:
        b = bucket.setdefault("calls", 0)
        bucket["calls"] = b + row["calls"]
        for k in ("prompt_tokens", "completion_tokens"):
            bucket[k] = bucket.get(k, 0) + row[k]
        if row["cost_usd"] is None:
            bucket["unpriced_calls"] = bucket.get("unpriced_calls", 0) + row["calls"]
        else:
            bucket["cost_usd"] = bucket.get("cost_usd", 0.0) + row["cost_usd"]

    total: dict = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
    by_stage: dict = {}
    by_judge: dict = {}
    by_config: dict = {}
    for row in spending:
        add(total, row)
        add(by_stage.setdefault(row["stage"] or "other", {}), row)
        if row.get("judge"):
            add(by_judge.setdefault(row["judge"], {}), row)
        add(by_config.setdefault(row["config_id"] or "(shared)", {}), row)
    if total["calls"] and total.get("unpriced_calls") == total["calls"]:
        total["cost_usd"] = None  # no model had a price: tokens only
    return {**total, "by_stage": by_stage, "by_judge": by_judge, "by_configuration": by_config}


def _usage_line(usage: dict) -> str:
    cost = f"${usage['cost_usd']:.4f}" if usage.get("cost_usd") is not None else "cost unknown (no price)"
    if usage.get("unpriced_calls"):
        cost += f" (+{usage['unpriced_calls']} calls without a price)"
    return (f"LLM: {usage['calls']} calls paid by this run, {usage.get('prompt_tokens', 0)} prompt + "
            f"{usage.get('completion_tokens', 0)} completion tokens, {cost}")


def _manifest(spec, dataset, questions, configs, stats, limit, status: str, n_records: int | None, run_dir) -> dict:
    """The manifest; ``stats`` None (at start-up) adds no invocation."""
    from ragsweep import __version__

    previous = []
    old = run_dir / "manifest.json"
    if old.is_file():
        try:
            previous = json.loads(old.read_text(encoding="utf-8")).get("invocations", [])
        except ValueError:
            previous = []
    invocation = None if stats is None else {
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
        "graphs": stats.graphs,
        "executor": stats.executor,
        "judgements_made": stats.judged, "judgements_failed": stats.judge_failed,
        **{k: v for k, v in stats.llm.items() if k != "spending"},
        "stopped": stats.stopped,
    }
    from ragsweep.evaluation.bertscore import MINILM_ID

    bs = spec.scoring.bertscore
    return {
        "format_version": FORMAT_VERSION,
        "ragsweep_version": __version__,
        "status": status,
        "records": n_records, "expected_records": len(configs) * len(questions),
        "spec": spec.model_dump(mode="json"),
        "seed": spec.seed,
        "question_limit": limit,
        "dataset": {
            "name": dataset.name, "fingerprint": dataset.fingerprint(),
            "corpus_fingerprint": dataset.corpus_fingerprint(),
            "documents": len(dataset.documents), "questions": len(dataset.questions),
            "questions_used": len(questions), "notes": list(dataset.notes),
        },
        "generator": _generator_info(spec),
        "llm": _llm_info(spec),
        "usage": usage_summary(stats.llm.get("spending", [])) if stats is not None and stats.llm else None,
        "bertscore": {"backbone": MINILM_ID if bs.model == "minilm" else bs.model, "num_layers": bs.num_layers or
                      (6 if bs.model == "minilm" else None), "baseline": bs.baseline},
        "configurations": [{"config_id": c.config_id, "config_hash": c.config_hash, **c.resolved(),
                            "labels": c.labels()} for c in configs],
        "versions": package_versions(),
        "platform": {"machine": platform.machine(), "system": platform.system(), "cpus": os.cpu_count()},
        "invocations": previous + ([invocation] if invocation else []),
        "written_at": time.time(),
    }


def _generator_info(spec) -> dict:
    if spec.generator.kind == "llm":
        return {"label": f"llm:{spec.llm.model}", "llm": spec.llm.model,
                "response_mode": spec.generator.response_mode,
                "prompt_file": str(spec.generator.prompt_file) if spec.generator.prompt_file else None}
    return {"label": "extractive-baseline", "llm": None,
            "note": "offline baseline: answers are retrieved sentences, not generated text"}


def _llm_info(spec) -> dict:
    """The LLMs in use: model, endpoint and the *name* of the key's variable (never the key)."""
    from ragsweep.llm.clients import llms_in_use
    from ragsweep.llm.pricing import price_for

    out = {}
    for role, llm in llms_in_use(spec):
        price = price_for(llm.model, spec.prices)
        out[role] = {**llm.model_dump(mode="json"),
                     "price_usd_per_million": price.model_dump() if price else None}
    return out


def _atomic(path: Path, write) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    write(tmp)
    os.replace(tmp, path)


_SHORT = {"bertscore_f1_rescaled": "BS-F1 resc.", "bertscore_f1": "BS-F1", "hit": "hit", "mrr": "MRR",
          "ndcg": "nDCG", "span_recall": "spanR", "span_precision": "spanP", "doc_mrr": "docMRR"}


def _unmeasured(row, metric: str) -> str:
    """" (2 unm.)" after a judge mean that excludes unmeasured judgements."""
    n = row.get(f"{metric}_unmeasured")
    return f" ({int(n)} unm.)" if n is not None and n == n and n > 0 else ""


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
    if any(m in JUDGE_METRICS for m in shown):
        caption += ("; judges: correctness 1-5, others pass rates; (n unm.) = unparseable judge replies, "
                    "excluded from the mean")
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
                cells.append(f"{v:.3f} [{row.get(f'{m}_lo'):.3f}, {row.get(f'{m}_hi'):.3f}]" + _unmeasured(row, m))
            else:
                cells.append(f"{v:.3f}" + _unmeasured(row, m))
        r = row.get("retrieval_ms_median")
        cells.append("-" if r is None or r != r else f"{r:.1f}")
        table.add_row(*cells)
    console.print(table)
