"""``ragsweep compare RUN_A RUN_B``: the configurations present in both runs, metric by metric,
B - A with paired tests on the questions both runs answered.

Runs are paired per question (same qid and same question text), as configurations within a run
are: the question-to-question variance cancels (Smucker, Allan & Carterette 2007, CIKM). Each
(configuration, metric) difference gets a two-sided paired test (``paired_tests.paired_test``: exact
sign-flip, exact sign test or paired t-test, whose p-values can reach Holm's thresholds), a
paired-bootstrap CI and Cohen's d_z; p-values are Holm-adjusted across the configurations of each
metric (Holm 1979). Runs over different questions are compared unpaired (means and their CIs
only), and say so. With 3 or more shared configurations, paired or not, ``ranking`` says per metric
how alike the two runs rank them (``results/ranking.py``: Spearman's rho of the configurations'
means with a bootstrap CI over questions): whether a generated question set ranks configurations
as a human one does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from ragsweep.errors import RagsweepError
from ragsweep.evaluation.test_options import TestOptions
from ragsweep.metrics.catalogue import BY_NAME, names, ordered
from ragsweep.pipelines.outputs.columns import JUDGE_METRICS, JUDGE_OF

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd
    from rich.console import JustifyMethod

    from ragsweep.results.run import RunData

DEFAULT_METRICS = [m for m in ordered("compare") if BY_NAME[m].family != "judge"]
COLUMNS = [
    "config_id",
    "metric",
    "paired",
    "n",
    "mean_a",
    "mean_b",
    "diff",
    "diff_lo",
    "diff_hi",
    "d_z",
    "p_value",
    "p_holm",
    "significant",
    "same_settings",
    "test",
]


@dataclass
class Comparison:
    """``table``: one row per (shared configuration, metric), ``diff = B - A``; ``notes``: what was
    matched and what was not; ``ranking``: one row per metric (``ranking.COLUMNS``), None with fewer
    than 3 shared configurations."""

    a: RunData
    b: RunData
    table: pd.DataFrame
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    questions_paired: int = 0
    notes: list[str] = field(default_factory=list)
    ranking: pd.DataFrame | None = None


class PairedRecords(NamedTuple):
    """The two runs' records of the compared split and the questions both answered (same qid and text): what
    every (configuration, metric) comparison reads, gathered once."""

    a: pd.DataFrame
    b: pd.DataFrame
    common: list[str]


def compare_runs(
    a: RunData, b: RunData, metrics: list[str] | None = None, split: str = "test", alpha: float = 0.05, seed: int = 0
) -> Comparison:
    import pandas as pd

    from ragsweep.evaluation.significance import holm
    from ragsweep.results.ranking import ranking_table

    for run in (a, b):
        if run.records.empty:
            raise RagsweepError(f"{run.path}: has no records yet ({run.status}); nothing to compare")
    ids_a, ids_b = _configs(a), _configs(b)
    shared = [c for c in ids_a if c in ids_b]
    if not shared:
        raise RagsweepError(
            f"{a.path} and {b.path} share no configuration id (e.g. {next(iter(ids_a))} vs "
            f"{next(iter(ids_b))}); compare runs of specs with common splitters, embeddings, "
            "retrievers and top_k"
        )
    metrics = metrics or [m for m in DEFAULT_METRICS + JUDGE_METRICS if _has(a, m) and _has(b, m)]
    missing = [m for m in metrics if not (_has(a, m) and _has(b, m))]
    if missing:
        both = sorted(set(_measured(a)) & set(_measured(b)))
        raise RagsweepError(f"--metric: {', '.join(missing)} not measured in both runs; choose from {', '.join(both)}")
    recs_a, recs_b = _rows(a, split), _rows(b, split)
    common = _common_questions(recs_a, recs_b)
    notes = _question_notes(a, b, recs_a, recs_b, common, split)
    records = PairedRecords(recs_a, recs_b, common)
    rows = []
    for config in shared:
        same = ids_a[config] == ids_b[config]
        for m in metrics:
            rows.append(_compare_one(records, config, m, same, seed, len(shared)))
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in ("p_holm", "significant")])
    table["p_holm"] = float("nan")
    for m in metrics:  # the family: this metric over every shared configuration
        sel = table["metric"].eq(m) & table["p_value"].notna()
        table.loc[sel, "p_holm"] = holm(table.loc[sel, "p_value"].tolist())
    table["significant"] = table["p_holm"] < alpha
    notes += _scoring_notes(a, b, metrics)
    ranking, ranking_notes = ranking_table(a, b, metrics, split, tests=TestOptions(seed=seed), configs=shared)
    notes += ranking_notes
    changed = [c for c in shared if ids_a[c] != ids_b[c]]
    if changed:
        notes.append(
            f"{len(changed)} shared configuration(s) have different settings in the two runs (other "
            f"configuration hash: generator, model, version...): {', '.join(changed[:5])}"
            + (" ..." if len(changed) > 5 else "")
        )
    return Comparison(
        a,
        b,
        table[COLUMNS],
        [c for c in ids_a if c not in ids_b],
        [c for c in ids_b if c not in ids_a],
        len(common),
        notes,
        ranking,
    )


def _compare_one(records: PairedRecords, config: str, metric: str, same: bool, seed: int, family: int = 1) -> dict:
    import numpy as np

    from ragsweep.evaluation.bootstrap import bootstrap_ci
    from ragsweep.evaluation.significance import compare_pair

    recs_a, recs_b, common = records
    va = recs_a[recs_a["config_id"] == config].set_index("qid")[metric]
    vb = recs_b[recs_b["config_id"] == config].set_index("qid")[metric]
    row = {"config_id": config, "metric": metric, "same_settings": same}
    if common:  # B first: diff = B - A
        b_first = (vb.reindex(common).to_numpy(float), va.reindex(common).to_numpy(float))
        t = compare_pair(*b_first, TestOptions(seed=seed), family_size=family)
        return {**row, **t, "paired": True, "mean_a": t["mean_b"], "mean_b": t["mean_a"]}
    mean_a, mean_b = bootstrap_ci(va.to_numpy(float), seed=seed)[0], bootstrap_ci(vb.to_numpy(float), seed=seed)[0]
    nan = float("nan")
    return {
        **row,
        "paired": False,
        "n": int(np.count_nonzero(~np.isnan(vb.to_numpy(float)))),
        "mean_a": mean_a,
        "mean_b": mean_b,
        "diff": mean_b - mean_a,
        "diff_lo": nan,
        "diff_hi": nan,
        "d_z": nan,
        "p_value": nan,
        "test": None,
    }


def _scoring_notes(a: RunData, b: RunData, metrics: list[str]) -> list[str]:
    """Scores made with other settings (BERTScore backbone/layer/baseline, judge model or prompt) are not
    on the same scale: say so next to the deltas."""
    notes = []
    if any(m.startswith("bertscore_") for m in metrics) and a.meta.get("bertscore_key") != b.meta.get("bertscore_key"):
        notes.append(
            f"BERTScore settings differ between the runs (A: {a.meta.get('bertscore')}, B: "
            f"{b.meta.get('bertscore')}): BERTScore deltas mix the change with the scorer"
        )
    keys_a = (a.meta.get("stage2") or {}).get("judge_keys") or {}
    keys_b = (b.meta.get("stage2") or {}).get("judge_keys") or {}
    judges = sorted(
        {JUDGE_OF[m] for m in metrics if m in JUDGE_OF and keys_a.get(JUDGE_OF[m]) != keys_b.get(JUDGE_OF[m])}
    )
    if judges:
        notes.append(
            f"judge settings (model, prompt or parameters) differ for {', '.join(judges)}: their deltas mix "
            "the change with the judge"
        )
    return notes


def _configs(run: RunData) -> dict[str, str]:
    """config_id -> config_hash of the configurations with records, in the run's order."""
    pairs = run.records[["config_id", "config_hash"]].drop_duplicates("config_id")
    return dict(zip(pairs["config_id"], pairs["config_hash"]))


def _measured(run: RunData) -> list[str]:
    return [
        m
        for m in DEFAULT_METRICS
        + JUDGE_METRICS
        + [c for c in run.records.columns if c.startswith("bertscore_")]
        + [m for m in names("retrieval") if m not in DEFAULT_METRICS]
        if _has(run, m)
    ]


def _has(run: RunData, metric: str) -> bool:
    return metric in run.records.columns and bool(run.records[metric].notna().any())


def _rows(run: RunData, split: str):
    recs = run.records[run.records["error"].isna()]
    return recs if split == "all" else recs[recs["split"] == split]


def _common_questions(recs_a, recs_b) -> list[str]:
    """qids both runs answered, with the same question text (a reused qid over other data is not a pair)."""
    qa = recs_a.drop_duplicates("qid").set_index("qid")["question"]
    qb = recs_b.drop_duplicates("qid").set_index("qid")["question"]
    both = qa.index.intersection(qb.index)
    return sorted(q for q in both if qa[q] == qb[q])


def _question_notes(a, b, recs_a, recs_b, common: list[str], split: str) -> list[str]:
    na, nb = recs_a["qid"].nunique(), recs_b["qid"].nunique()
    notes = []
    if not common:
        notes.append(f"no question is in both runs' {split} questions: unpaired comparison (means only, no tests)")
    elif len(common) < max(na, nb):
        notes.append(f"paired on the {len(common)} {split} questions both runs answered ({na} in A, {nb} in B)")
    fa, fb = (r.meta.get("dataset", {}).get("fingerprint") for r in (a, b))
    if fa != fb:
        notes.append(f"the runs' datasets differ (fingerprints {fa} and {fb})")
    return notes


def write_csv(result: Comparison, path: Path) -> Path | None:
    """``table`` to ``path`` and, when there is one, ``ranking`` beside it as ``<stem>.ranking.csv``
    (returned)."""
    result.table.to_csv(path, index=False)
    if result.ranking is None:
        return None
    ranking = path.with_name(f"{path.stem}.ranking.csv")
    result.ranking.to_csv(ranking, index=False)
    return ranking


def print_comparison(result: Comparison, console) -> None:
    """A rich table: per shared configuration and metric, A, B, B - A [95% CI] and the Holm p-value."""
    from rich.markup import escape
    from rich.table import Table

    a, b = result.a, result.b
    console.print(f"A: {a.describe()}")
    console.print(f"B: {b.describe()}")
    shared = result.table["config_id"].nunique()
    console.print(
        f"{shared} configuration(s) in both; only in A: {len(result.only_a)}, only in B: "
        f"{len(result.only_b)}; {result.questions_paired} questions paired"
    )
    for note in result.notes:
        console.print(f"note: {escape(note)}")
    table = Table(
        caption="B - A with a 95% paired-bootstrap CI; p: two-sided paired test (exact sign-flip, "
        "exact sign test or paired t-test; the test column of --csv), Holm-adjusted "
        "over the configurations of each metric; * p < 0.05",
        pad_edge=False,
    )
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("configuration", "left"),
        ("metric", "left"),
        ("n", "right"),
        ("A", "right"),
        ("B", "right"),
        ("B - A [95% CI]", "right"),
        ("p (Holm)", "right"),
    )
    for col, just in columns:
        table.add_column(col, justify=just, no_wrap=True)
    for r in result.table.itertuples(index=False):
        ci = f" [{r.diff_lo:+.3f}, {r.diff_hi:+.3f}]" if r.paired and r.n else ""
        p = "-" if r.p_holm != r.p_holm else f"{r.p_holm:.4f}{' *' if r.significant else ''}"
        cid = r.config_id + ("" if r.same_settings else " (changed)")
        table.add_row(
            cid, r.metric, str(r.n), _f(r.mean_a), _f(r.mean_b), f"{r.diff:+.3f}{ci}" if r.diff == r.diff else "-", p
        )
    console.print(table)
    if result.ranking is not None:
        from ragsweep.results.ranking import print_ranking

        print_ranking(result.ranking, console)


def _f(v: float) -> str:
    return "-" if v != v else f"{v:.3f}"
