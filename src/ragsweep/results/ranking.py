"""Ranking agreement between two runs of the same configurations over different question sets (a
human set and a generated one, say): per metric, Spearman's rho of the configurations' means with a
bootstrap CI over the questions of each run (``evaluation.rank_agreement``). Shared by ``ragsweep
compare`` (its ``ranking`` table) and ``ragsweep report --against``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragsweep.evaluation.test_options import DEFAULT, TestOptions

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ragsweep.results.run import RunData

COLUMNS = [
    "metric",
    "n_configs",
    "spearman",
    "spearman_lo",
    "spearman_hi",
    "kendall",
    "top1_same",
    "top5_overlap",
    "reliability_a",
    "reliability_b",
    "disattenuated",
    "n_a",
    "n_b",
]
TITLE = "Ranking agreement (Spearman of the configurations' means, 95% bootstrap CI over questions)"
EXPLAIN = (
    "For a synthetic question set against a human one, rho near 1 means the synthetic set ranks the "
    "configurations as the human one does; a CI reaching 0 means the question sets are too small to tell."
)
CAVEAT = (
    "Question noise pulls rho and, more, its bootstrap interval towards 0: the interval is conservative for "
    "'the sets agree'. Reliability: each set's split-half rho (Spearman-Brown); corrected: rho / "
    "sqrt(reliability A x B), how alike the question populations rank (Spearman 1904)."
)
MIN_CONFIGS = 3


def shared_configs(a: RunData, b: RunData) -> list[str]:
    """The configuration ids with records in both runs, in A's order."""
    ids_b = set(b.records["config_id"])
    return [c for c in dict.fromkeys(a.records["config_id"]) if c in ids_b]


def score_matrix(run: RunData, configs: list[str], metric: str, split: str = "test") -> np.ndarray:
    """(configurations x questions) of ``metric`` on the run's ``split`` questions (``all``: every
    question), rows in ``configs`` order; failed rows and missing values are NaN."""
    recs = run.records[run.records["error"].isna()]
    if split != "all":
        recs = recs[recs["split"] == split]
    recs = recs[recs["config_id"].isin(configs)].drop_duplicates(["config_id", "qid"])
    table = recs.pivot(index="config_id", columns="qid", values=metric) if metric in recs.columns else None
    if table is None or table.empty:
        import numpy as np

        return np.full((len(configs), 0), np.nan)
    return table.reindex(configs).to_numpy(float)


def ranking_table(
    a: RunData,
    b: RunData,
    metrics: list[str],
    split: str = "test",
    tests: TestOptions = DEFAULT,
    configs: list[str] | None = None,
) -> tuple[pd.DataFrame | None, list[str]]:
    """One row per metric (``COLUMNS``) over ``configs`` (default: the shared ones), and notes, its intervals by
    ``tests.n_boot`` resamples of ``tests.seed``; ``None`` when fewer than 3 configurations are shared. A metric
    with fewer than 3 configurations scored in both runs gets a row of NaNs."""
    import pandas as pd

    from ragsweep.evaluation.rank_agreement import rank_agreement

    configs = shared_configs(a, b) if configs is None else configs
    if len(configs) < MIN_CONFIGS:
        return None, []
    rows, notes, skipped = [], [], []
    for m in metrics:
        sa, sb = score_matrix(a, configs, m, split), score_matrix(b, configs, m, split)
        try:
            r = rank_agreement(sa, sb, n_boot=tests.n_boot, seed=tests.seed)
        except ValueError:
            rows.append({"metric": m, "n_configs": 0, "n_a": sa.shape[1], "n_b": sb.shape[1]})
            notes.append(f"ranking agreement: fewer than {MIN_CONFIGS} configurations have {m} scores in both runs")
            continue
        rows.append(
            {
                "metric": m,
                "n_configs": r.n_configs,
                "spearman": r.spearman,
                "spearman_lo": r.ci_lo,
                "spearman_hi": r.ci_hi,
                "kendall": r.kendall,
                "top1_same": r.top1_same,
                "top5_overlap": r.top_k_overlap,
                "reliability_a": r.reliability_a,
                "reliability_b": r.reliability_b,
                "disattenuated": r.disattenuated,
                "n_a": r.n_questions_a,
                "n_b": r.n_questions_b,
            }
        )
        if r.n_degenerate:
            skipped.append(f"{m} {r.n_degenerate}")
    if skipped:
        notes.append(
            f"ranking agreement: bootstrap resamples left out of {tests.n_boot} (all configurations tied in one "
            f"run, or one without a score): {', '.join(skipped)}"
        )
    return pd.DataFrame(rows, columns=COLUMNS), notes


def print_ranking(ranking: pd.DataFrame, console) -> None:
    """The ranking table as a small rich table, and what it means."""
    from rich.table import Table

    table = Table(title=TITLE, caption=CAVEAT, pad_edge=False)
    for col in (
        "metric",
        "configs",
        "Spearman [95% CI]",
        "Kendall tau-b",
        "same best",
        "top-5 overlap",
        "reliability A / B",
        "corrected",
        "questions A",
        "questions B",
    ):
        table.add_column(col, justify="left" if col == "metric" else "right", no_wrap=True)
    for r in ranking.itertuples(index=False):
        rho = "-" if r.spearman != r.spearman else f"{r.spearman:+.3f} [{r.spearman_lo:+.3f}, {r.spearman_hi:+.3f}]"
        same = "-" if r.n_configs == 0 else ("yes" if r.top1_same else "no")
        table.add_row(
            r.metric,
            str(r.n_configs),
            rho,
            _f(r.kendall, "+.3f"),
            same,
            _f(r.top5_overlap, ".2f"),
            f"{_f(r.reliability_a, '.2f')} / {_f(r.reliability_b, '.2f')}",
            _f(r.disattenuated, "+.2f"),
            str(r.n_a),
            str(r.n_b),
        )
    console.print(table)
    console.print(EXPLAIN)


def _f(v, fmt: str) -> str:
    return "-" if v is None or v != v else format(v, fmt)
