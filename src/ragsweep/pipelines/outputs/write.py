"""Write every output of a run from its journal, and print the summary table."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import cast

from ragsweep.llm.endpoint_text import endpoint_lines
from ragsweep.pipelines.outputs.abstention import abstain_thresholds
from ragsweep.pipelines.outputs.answer_notes import failure_lines, failures, invocation_lines, truncation_lines
from ragsweep.pipelines.outputs.columns import JUDGE_METRICS, TABLE_METRICS
from ragsweep.pipelines.outputs.manifest import (
    atomic,
    build_manifest,
    forget_outputs,
    read_previous,
    run_context,
    write_manifest,
)
from ragsweep.pipelines.outputs.records import Judgements, build_records, question_rows
from ragsweep.pipelines.outputs.records_file import RecordsFile
from ragsweep.pipelines.outputs.summary import build_comparisons, build_summary
from ragsweep.pipelines.outputs.table import print_summary, read_summary, summary_rows, usage_line
from ragsweep.pipelines.run_state import RunState
from ragsweep.pipelines.stages.chunk import count_cached
from ragsweep.pipelines.stages.judge import judged_ids
from ragsweep.run_dir import RunDir
from ragsweep.run_records import Manifest, Outputs, SearchRecord, Stage2Record


def outputs_key(st: RunState) -> str:
    """What the outputs of the run ``st`` are a function of: the journal (its revision and identity), the
    configurations, the questions and their split, the scoring settings, stage 2's selection, how the invocation
    stopped and a search's finalists; equal keys mean equal files."""
    import hashlib
    import json

    from ragsweep import __version__
    from ragsweep.run_records import FORMAT_VERSION

    spec, journal, split, search = st.spec, st.journal, st.split, st.search_info

    ident = [
        FORMAT_VERSION,
        __version__,
        journal.revision(),
        journal.meta("run_id"),
        [c.labels() for c in st.configs],
        [(q.qid, (split or {}).get(q.qid)) for q in st.questions],
        st.scorer_key,
        spec.scoring.model_dump(mode="json"),
        spec.seed,
        spec.stage2.model_dump(mode="json") if spec.stage2 else None,
        st.stage2_info,
        st.stats.stopped,
    ]
    if search is not None:  # which configurations the verdict compares (absent for a grid: its key is unchanged)
        ident.append([search.get("finalists"), search.get("used")])
    return hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:24]


def _unchanged(run_dir: Path, key: str) -> Outputs | None:
    """The previous invocation's outputs record when its key is ``key`` and its files are all there."""
    previous = read_previous(run_dir).get("outputs")
    if previous and previous.get("key") == key and all(f.is_file() for f in RunDir(run_dir).outputs):
        return previous
    return None


def write_outputs(st: RunState) -> Manifest:
    """Records, summary and comparisons from the journal, and the manifest, for the run ``st``. When nothing
    they depend on changed since the last invocation (``outputs_key``), the files are kept as they are: a
    no-op re-run does not bootstrap again. ``st.search_info``: a search's record (``search.summary.
    search_record``); its configurations are those it evaluated, and the verdict compares its finalists."""
    spec, dataset, questions, configs, journal, run_dir = (
        st.spec,
        st.dataset,
        st.questions,
        st.configs,
        st.journal,
        st.run_dir,
    )
    stats, console, cache_dir, scorer_key = st.stats, st.console, st.cache.root, st.scorer_key
    split, stage2, search = st.split, st.stage2_info, st.search_info
    key = outputs_key(st)
    kept = _unchanged(run_dir, key)
    if kept is not None:
        status, n_records, summary = kept["status"], kept["records"], None
    else:
        forget_outputs(run_dir)  # the files change now: a kill half-way must not leave them under the old key
        count_cached(stats, st.cache, dataset, configs)  # the splitters this invocation did not chunk
        status, n_records, summary = _rebuild(st)
    manifest = build_manifest(st, status, n_records)
    manifest.update(run_context(spec, questions, cache_dir, scorer_key, split))
    manifest["stage2"] = stage2
    manifest["verdict_metric"] = _verdict_metric(run_dir, spec.scoring.metric, st.metric_why)
    if search is not None:
        manifest["search"] = search
        refs = sum(c.baseline is not None for c in configs)  # reference baselines answer every question
        manifest["expected_records"] = _searched(questions, split, search) + refs * len(questions)
    manifest["outputs"] = {"key": key, "status": status, "records": n_records, "reused": kept is not None}
    manifest["questions_key"] = read_previous(run_dir).get("questions_key")
    manifest["run_id"] = journal.meta("run_id")
    tuned = tuned_weights(configs, journal)
    if tuned:
        manifest["tuned_weights"] = tuned
    thresholds = abstain_thresholds(configs, journal)
    if thresholds:
        manifest["abstain_thresholds"] = thresholds
    if spec.adaptive:  # the complexity classifiers' agreement with the labels (kept while unchanged)
        from ragsweep.pipelines.stages.adaptive import adaptive_record

        manifest["adaptive"] = adaptive_record(spec, dataset, read_previous(run_dir).get("adaptive"))
    write_manifest(run_dir, manifest)
    if console is not None:
        rows = summary_rows(summary) if summary is not None else read_summary(RunDir(run_dir).summary)
        _print(st, rows, manifest)
    return manifest


def _verdict_metric(run_dir: Path, metric: str | None, why: str) -> dict:
    """The metric the verdict decided by, and why (``verdict.json``'s, which a judge that could not decide
    changes), else the run's."""
    try:
        data = json.loads(RunDir(run_dir).verdict.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    return {"metric": data.get("metric") or metric, "why": data.get("metric_why") or why}


def tuned_weights(configs, journal) -> dict:
    """Per configuration with ``weights: tune``: the weights chosen on validation and what the tuning
    saw (metric, questions, each candidate's mean), from its answers in the journal."""
    tuned = {c.config_hash: c.config_id for c in configs if getattr(c.retriever, "tuned", False)}
    out: dict[str, dict] = {}
    if tuned:
        for h, _, _, payload in journal.answers(set(tuned)):
            if tuned[h] not in out and payload.get("tuning"):
                out[tuned[h]] = payload["tuning"]
    return {c: out[c] for c in sorted(out)}


def _rebuild(st: RunState):
    """Records, summary, comparisons and verdict of ``st`` from its journal: (status, records, summary)."""
    spec, questions, configs, journal, run_dir = st.spec, st.questions, st.configs, st.journal, st.run_dir
    stats, scorer_key, split, stage2, search, why = (
        st.stats,
        st.scorer_key,
        st.split,
        st.stage2_info,
        st.search_info,
        st.metric_why,
    )
    keys = stage2.get("judge_keys") if stage2 else None
    labels = [c.labels() for c in configs]
    repeats = int((stage2 or {}).get("repeats") or 1)
    run_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".records-", dir=run_dir) as scratch:
        # each configuration's whole rows go to a part file as they are made; the frame kept is what the rest reads
        parts = RecordsFile(Path(scratch))
        records = build_records(
            question_rows(questions, split),
            labels,
            journal,
            scorer_key,
            Judgements(keys, repeats) if keys else None,
            parts,
        )
        summary = build_summary(records, labels, spec.scoring.model_dump(), spec.seed, stage2)
        comparisons = build_comparisons(records, spec, stage2)
        from ragsweep.baselines.rows import among

        finalists = search["finalists"] if search is not None else None
        verdict = build_verdict(records if finalists is None else among(records, finalists), spec, stats, why, stage2)
        verdict["failed"] = failures(records)  # never compared, never dropped: printed with their reason
        atomic(
            RunDir(run_dir).verdict,
            lambda p: p.write_text(json.dumps(verdict, indent=1, default=str), encoding="utf-8"),
        )
        atomic(RunDir(run_dir).records, lambda p: parts.write(p, records))
    atomic(RunDir(run_dir).summary, lambda p: summary.to_csv(p, index=False))
    atomic(RunDir(run_dir).comparisons, lambda p: comparisons.to_csv(p, index=False))
    expected = len(configs) * len(questions) if search is None else _searched(questions, split, search)
    # complete: every (configuration, question) answered without error, scored wherever a reference
    # exists, and (stage 2) every selected configuration judged on every test question
    # a search's race may have answered more of a trial's questions before a kill than its final look counts
    complete = (
        not records.empty
        and (len(records) == expected or (search is not None and len(records) >= expected))
        and int(records["error"].notna().sum()) == 0
        and bool((records["bertscore_f1"].notna() | records["reference_answer"].fillna("").str.strip().eq("")).all())
    )
    if spec.stage2 is not None:
        complete = complete and stage2_complete(records, stage2, spec)
    status = "complete" if complete else "incomplete"
    if stats.stopped:
        status = "stopped_budget" if stats.stopped == "budget" else "incomplete"
    return status, len(records), summary


def _searched(questions, split, search: SearchRecord) -> int:
    """The (configuration, question) pairs a search answers: each trial's validation questions (all of them,
    or those a race let it see), and the test questions of the finalists."""
    n_test = sum((split or {}).get(q.qid) == "test" for q in questions)
    seen = {t["config_id"]: t["questions"] for t in search["trials"] if t["state"] in ("complete", "failed", "pruned")}
    return sum(seen.values()) + len(search["finalists"]) * n_test


def build_verdict(records, spec, stats, why: str | None = None, stage2: Stage2Record | None = None) -> dict:
    """The verdict by ``scoring.metric`` (``evaluation.verdict.decide``) as a dict for ``verdict.json``, with
    ``flagged_note`` worded as printed (most of the chosen one's answers echo the prompt or copy the context). A
    judge's figure that cannot decide (no figures; no better than chance) gives way to the stage-1 metric
    (``default_metric.settle``), and ``metric_why`` says so."""
    from ragsweep.evaluation.config_costs import chunks_by_config
    from ragsweep.evaluation.default_metric import agreement_flags, constant_flags, settle, spans_in
    from ragsweep.evaluation.test_options import TestOptions
    from ragsweep.evaluation.verdict import decide
    from ragsweep.metrics.catalogue import label

    metric = spec.scoring.metric
    if records.empty or metric not in records.columns:
        return {}
    configs = records[["config_id", "splitter"]].drop_duplicates().to_dict("records")
    chunks = chunks_by_config(configs, stats.chunks)

    def verdict_for(m: str):
        return decide(
            records, m, tests=TestOptions.of(spec), chunks=chunks or None, max_missing=spec.scoring.max_missing
        )

    flags = {**constant_flags(records, metric), **agreement_flags(stage2)}
    verdict, why = settle(metric, why or "scoring.metric", verdict_for, flags, spec.generator.kind, spans_in(records))
    verdict.metric_why = why
    return {**verdict.to_dict(), "flagged_note": verdict.flagged_note(label(verdict.metric))}


def _print_verdict(run_dir: Path, console) -> None:
    from ragsweep.evaluation.verdict import Verdict
    from ragsweep.pipelines.outputs.verdict_text import verdict_lines

    try:
        data = json.loads(RunDir(run_dir).verdict.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    for line in failure_lines(data.get("failed") or []):
        console.print(line, markup=False, soft_wrap=True)
    if data.get("metric"):
        for line in verdict_lines(Verdict.from_dict(data)):
            console.print(line)


def _print(st: RunState, rows: list[dict], manifest: Manifest) -> None:
    """The summary table of the test questions (validation means beside the headline metric), stage 2's
    selection, LLM usage, and the verdict (from ``verdict.json``, so a no-op re-run needs no pandas)."""
    spec, configs, stage2, console, run_dir = st.spec, st.configs, st.stage2_info, st.console, st.run_dir
    assert console is not None, "printed only with a console"
    test = [r for r in rows if r.get("split") == "test"]
    validation = [r for r in rows if r.get("split") == "validation"]
    # None only where no verdict was decided and the spec names no metric: the table leads with none, as before
    metric = cast(str, (manifest.get("verdict_metric") or {}).get("metric") or spec.scoring.metric)
    metrics = [metric] + [m for m in TABLE_METRICS if m != metric]
    if stage2 and stage2.get("selected") and test:  # the judged: its selection and the reference baselines
        judged = judged_ids(stage2)
        test = [r for r in test if r["config_id"] in judged]
        metrics = judged_table_metrics(test, metric)
    print_summary(
        test,
        console,
        title=f"{spec.name}: test questions ({len(test)} shown of {len(configs)})",
        metrics=metrics,
        validation=validation or None,
    )
    every = [r for r in rows if r.get("split") == "all"]
    for line in truncation_lines(every) + invocation_lines(every) + endpoint_lines(manifest):
        console.print(line, markup=False, soft_wrap=True)
    _print_verdict(run_dir, console)
    if manifest.get("search"):
        from ragsweep.pipelines.outputs.search_text import search_lines

        for line in search_lines(manifest["search"]):
            console.print(line)
    if manifest.get("adaptive"):
        from ragsweep.pipelines.stages.adaptive import describe

        for line in describe(manifest["adaptive"]):
            console.print(f"adaptive {line}")
    from ragsweep.pipelines.outputs.judge_text import self_agreement_lines

    for line in self_agreement_lines(stage2):
        console.print(line, markup=False, soft_wrap=True)
    if stage2 and stage2.get("selected"):
        refs = stage2.get("references") or []
        also = f"; and the reference baselines {', '.join(refs)}" if refs else ""
        console.print(f"stage 2 judged: {', '.join(stage2['selected'])} ({stage2['rule']}){also}")
    usage = manifest.get("usage")
    if usage and usage.get("calls"):
        now = (manifest.get("invocations") or [{}])[-1] or {}
        console.print(usage_line(usage, now.get("llm_calls_made")))


def judged_table_metrics(rows: list[dict], metric: str) -> list[str]:
    """The columns of stage 2's table: the judges' figures, sorted by the first that some configuration has (a
    judge unmeasured everywhere sorts nothing), else by the verdict's metric; then the first stage-1 figures."""
    judges = [m for m in JUDGE_METRICS if rows and m in rows[0]]
    measured = [m for m in judges if any(r.get(m) is not None and r.get(m) == r.get(m) for r in rows)]
    lead = measured[:1] or [metric]
    rest = [m for m in judges + TABLE_METRICS[:2] if m not in lead]
    return lead + rest


def stage2_complete(records, stage2: Stage2Record | None, spec) -> bool:
    """Every judge has judged (ok or unmeasured) every judged configuration on the questions stage 2 judges."""
    if not stage2 or not stage2.get("selected"):
        return False
    from ragsweep.evaluation.stage2_questions import judged_qids

    rows = records[["qid", "split"]].drop_duplicates()
    split = dict(zip(rows["qid"].astype(str), rows["split"]))
    s2 = spec.stage2
    judged = judged_qids(list(split), split, {"validation": s2.validation_share, "test": s2.test_share}, spec.seed)
    sel = records[records["config_id"].isin(judged_ids(stage2)) & records["qid"].astype(str).isin(judged)]
    for j in spec.stage2.judges:
        col = f"{j}_status"
        if col not in sel.columns or not sel[col].isin(["ok", "unmeasured"]).all():
            return False
    return True
