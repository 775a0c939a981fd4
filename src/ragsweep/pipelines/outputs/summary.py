"""``summary.csv`` (means with bootstrap CIs per configuration and split) and ``comparisons.csv`` (the best
configuration against each other one on the test questions)."""

from __future__ import annotations

from ragsweep.pipelines.outputs.columns import DEGENERATE_FLAGS, JUDGE_METRICS, JUDGE_OF, SPLITS, SUMMARY_METRICS
from ragsweep.run_records import Stage2Record


def build_summary(records, configs: list[dict], scoring: dict, seed: int, selection: Stage2Record | None = None):
    """Per configuration and split (test, validation, all): mean and bootstrap CI of every metric,
    counts of errors, empty answers and degenerate LLM answers (``n_echoed_prompt``, ``n_copied_context``;
    their rates are the flags' means), and for stage-2 judges the unmeasured count next to the
    mean (which excludes them). ``configs`` are ``Configuration.labels()``; ``scoring`` the spec's
    ``scoring`` section as a dict (``bootstrap_samples``, ``confidence``)."""
    import pandas as pd

    if records.empty:
        return pd.DataFrame()
    judge_metrics = [m for m in JUDGE_METRICS if m in records.columns]
    parts = []
    for split in SPLITS:
        recs = records if split == "all" else records[records["split"] == split]
        if recs.empty:
            continue
        part = _split_summary(recs, judge_metrics, scoring, seed)
        part.insert(1, "split", split)
        parts.append(part)
    meta = pd.DataFrame(configs)
    if selection and selection.get("ranking"):
        rank = pd.DataFrame(selection["ranking"])[["config_id", "rank", "selected", "reason"]].rename(
            columns={"rank": "selection_rank", "selected": "stage2_selected", "reason": "selection_reason"}
        )
        meta = meta.merge(rank, on="config_id", how="left")
    out = meta.merge(pd.concat(parts, ignore_index=True), on="config_id", how="inner")
    cols = [c for c in out.columns if not c.endswith(("_unmeasured", "_failed"))]
    for m in judge_metrics:  # the unmeasured and failed counts right after the judge's mean columns
        at = cols.index(f"{m}_n") + 1
        cols[at:at] = [f"{m}_unmeasured", f"{m}_failed"]
    return out[cols]


def _split_summary(recs, judge_metrics: list[str], scoring: dict, seed: int):
    """One split's rows: counts (questions, errors, empty, degenerate, truncated; judges' unmeasured and failed),
    LLM cost and tokens, latency medians and p95, then every metric's mean and bootstrap CI (answered rows)."""
    from ragsweep.evaluation.bootstrap import summarise

    ok = recs[recs["error"].isna()]
    summ = summarise(
        ok,
        ["config_id"],
        SUMMARY_METRICS + judge_metrics,
        n_resamples=scoring["bootstrap_samples"],
        confidence=scoring["confidence"],
        seed=seed,
    )
    aggs = dict(
        n_questions=("qid", "size"),
        n_errors=("error", lambda s: int(s.notna().sum())),
        n_empty_answers=("answer_empty", lambda s: int(s.eq(True).sum())),
        **{f"n_{f}": (f, lambda s: int(s.eq(1).sum())) for f in DEGENERATE_FLAGS if f in recs.columns},
        # LLM answers cut at max_tokens, and how many invocations their timed figures come from
        **({"n_truncated": ("truncated", lambda s: int(s.eq(True).sum()))} if "truncated" in recs.columns else {}),
        **(
            {"latency_invocations": ("invocation", lambda s: int(s.dropna().nunique()))}
            if "invocation" in recs.columns
            else {}
        ),
    )
    counts = recs.groupby("config_id").agg(**aggs).reset_index()
    for m in judge_metrics:
        status = recs[f"{JUDGE_OF[m]}_status"]
        extra = (
            recs.assign(_u=status.eq("unmeasured"), _f=status.eq("failed"))
            .groupby("config_id")
            .agg(**{f"{m}_unmeasured": ("_u", "sum"), f"{m}_failed": ("_f", "sum")})
            .reset_index()
        )
        counts = counts.merge(extra, on="config_id", how="left")
    cost = (
        recs.groupby("config_id")
        .agg(
            generation_cost_usd=("cost_usd", lambda s: float(s.sum()) if s.notna().any() else None),
            generation_prompt_tokens=("prompt_tokens", "sum"),
            generation_completion_tokens=("completion_tokens", "sum"),
        )
        .reset_index()
    )
    lat = (
        ok.groupby("config_id")
        .agg(
            retrieval_ms_median=("retrieval_ms", "median"),
            retrieval_ms_p95=("retrieval_ms", lambda s: s.quantile(0.95)),
            generation_ms_median=("generation_ms", "median"),
        )
        .reset_index()
    )
    part = counts.merge(lat, on="config_id", how="left").merge(cost, on="config_id", how="left")
    part = part.merge(summ, on="config_id", how="left")
    return _with_repeats(part, ok, judge_metrics, scoring, seed)


def _with_repeats(part, ok, judge_metrics: list[str], scoring: dict, seed: int):
    """A judged metric whose judgements were repeated: its CI from the two-stage bootstrap (questions, then each
    question's repeats), not the per-question means alone (``bootstrap.nested_bootstrap_ci``)."""
    from ragsweep.evaluation.bootstrap import nested_bootstrap_ci

    for m in judge_metrics:
        col = f"{m}_repeats"
        if col not in ok.columns:
            continue
        for cid, group in ok[ok[m].notna()].groupby("config_id"):  # the rows the mean and its n count
            runs = [list(r) for r in group[col] if isinstance(r, (list, tuple)) or hasattr(r, "__len__")]
            runs = [[v if v is not None else float("nan") for v in r] for r in runs]
            if not runs:
                continue
            mean, lo, hi = nested_bootstrap_ci(runs, scoring["bootstrap_samples"], scoring["confidence"], seed)
            at = part["config_id"] == cid
            part.loc[at, [m, f"{m}_lo", f"{m}_hi"]] = [mean, lo, hi]
    return part


def validation_best(records, metric: str) -> str | None:
    """The configuration with the best mean ``metric`` on the validation questions (ties: smaller id),
    the choice the verdict makes; None without validation values."""
    from ragsweep.baselines.rows import configurations
    from ragsweep.evaluation.verdict import best_configuration

    records = configurations(records)
    val = records[(records["split"] == "validation") & records["error"].isna()]
    val = val[val[metric].notna()] if metric in val.columns else val.iloc[0:0]
    return None if val.empty else best_configuration(val, metric)


def build_comparisons(records, spec, selection: Stage2Record | None):
    """On the test questions: the best configuration against each other one, paired test with Holm
    correction over the n - 1 comparisons and effect size; stage 1 by ``scoring.metric`` (or stage
    2's ``select_metric``) over all configurations, stage 2 by each judge metric over the judged ones.

    "Best" is always chosen on the *validation* questions (stage 2's first selected configuration,
    else the best validation mean), so the test questions that give the p-values did not also pick
    the winner: picking the test-set maximum and testing it on the same data biases the p-values
    downwards (the winner's curse). Only when there are no validation values is it the test-set
    best, and then ``chosen_on`` says so."""
    import pandas as pd

    from ragsweep.baselines.rows import configurations
    from ragsweep.evaluation.significance import COMPARE_COLUMNS
    from ragsweep.evaluation.verdict import LOWER_IS_BETTER

    columns = ["stage"] + COMPARE_COLUMNS + ["chosen_on"]
    if records.empty:
        return pd.DataFrame(columns=columns)
    test = configurations(records[(records["split"] == "test") & records["error"].isna()])
    metric = spec.stage2.select_metric if spec.stage2 is not None else spec.scoring.metric
    frames = []
    best = _best_on_validation(records, test, metric, selection)
    chosen_on = "validation" if best is not None else "test"
    if metric in test.columns and test[metric].notna().any():
        higher = metric not in LOWER_IS_BETTER
        frames.append(_compare(test, metric, best, spec, higher_is_better=higher).assign(stage="stage1"))
    if selection and selection.get("selected"):
        judged = test[test["config_id"].isin(selection["selected"])]
        for m in [m for m in JUDGE_METRICS if m in judged.columns]:
            if judged[m].notna().any():
                frames.append(_compare(judged, m, best, spec).assign(stage="stage2"))
    if not frames:
        return pd.DataFrame(columns=columns)
    out = pd.concat(frames, ignore_index=True).assign(chosen_on=chosen_on)
    return out[["stage"] + [c for c in out.columns if c != "stage"]]


def _best_on_validation(records, test, metric: str, selection: Stage2Record | None) -> str | None:
    """Stage 2's first selected configuration, else the best validation mean of ``metric``; None when
    neither is among the test rows (the comparisons then pick the test-set best)."""
    best = (selection or {}).get("selected", [None])[0] if (selection or {}).get("selected") else None
    if best is None and metric in records.columns:
        best = validation_best(records, metric)
    if best is not None and not test["config_id"].eq(best).any():
        best = None
    return best


def _compare(frame, metric: str, best: str | None, spec, higher_is_better: bool = True):
    """``compare_to_best`` of ``metric`` over ``frame``'s rows with the spec's seed, alpha and bootstrap."""
    from ragsweep.evaluation.significance import compare_to_best
    from ragsweep.evaluation.test_options import TestOptions

    values = frame[["config_id", "qid", metric]]
    return compare_to_best(values, metric, best=best, higher_is_better=higher_is_better, tests=TestOptions.of(spec))
