"""The significance matrix: every pair of configurations, paired test, Holm-corrected over all pairs shown.

Exploratory: the family is every pair in the figure (C(n, 2) of them), so a star survives looking at every
cell, but the matrix answers "which differences stand out?", not "is the chosen configuration better?" (the
comparisons table tests that, the best against each other configuration). ``paired_test`` p-values can go
below ``alpha / C(n, 2)``, so stars remain possible however many configurations are shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragsweep.results.figures.style import metric_name

if TYPE_CHECKING:
    from ragsweep.results.run import RunData


def significance_matrix(
    run: RunData,
    metric: str = "bertscore_f1_rescaled",
    split: str = "test",
    max_configs: int = 30,
    alpha: float = 0.05,
    pairs=None,
):
    """Mean difference row - column on the questions both answered; ``*`` where the p-value, Holm-adjusted
    over all pairs shown (exploratory), is below ``alpha``. The ``max_configs`` best configurations by
    ``metric`` (the matrix grows with the square). ``pairs``: precomputed ``pairwise_table`` output. None
    with < 2 configurations."""
    import matplotlib.pyplot as plt
    import numpy as np

    if pairs is None:
        pairs = pairwise_table(run, metric, split, max_configs)
    if pairs is None or pairs.empty:
        return None
    order = list(dict.fromkeys(pairs.attrs["order"]))
    n = len(order)
    idx = {c: i for i, c in enumerate(order)}
    diff = np.full((n, n), np.nan)
    star = np.zeros((n, n), dtype=bool)
    for r in pairs.itertuples(index=False):
        i, j = idx[r.a], idx[r.b]
        diff[i, j], diff[j, i] = r.diff, -r.diff
        star[i, j] = star[j, i] = bool(r.p_holm < alpha)
    size = max(4.5, 0.32 * n + 2.5)
    fig, ax = plt.subplots(figsize=(size + 1.2, size))
    bound = float(np.nanmax(np.abs(diff))) if np.isfinite(diff).any() else 1.0
    im = ax.imshow(diff, cmap="RdBu", vmin=-bound, vmax=bound)
    for i in range(n):
        for j in range(n):
            if star[i, j]:
                ax.text(j, i, "*", ha="center", va="center", fontsize=9, color="black")
    ax.set_xticks(range(n), order, rotation=90)
    ax.set_yticks(range(n), order)
    ax.set_xlabel("configuration (column)")
    ax.set_ylabel("configuration (row)")
    fig.colorbar(im, ax=ax, shrink=0.6, label=f"mean difference, row - column ({metric_name(metric)})")
    ax.set_title(
        f"Pairwise {metric_name(metric)}, {split} questions: * = Holm-adjusted p < {alpha:g}\n"
        f"(two-sided paired test; family: all {len(pairs)} pairs shown; exploratory)"
    )
    return fig


def pairwise_table(
    run: RunData,
    metric: str = "bertscore_f1_rescaled",
    split: str = "test",
    max_configs: int = 30,
    seed: int | None = None,
):
    """The pairwise tests of the ``max_configs`` best configurations (``pairwise_tests``), best first in
    ``.attrs["order"]``; None when the metric was not measured."""
    from ragsweep.baselines.rows import configurations
    from ragsweep.evaluation.significance import pairwise_tests
    from ragsweep.evaluation.test_options import TestOptions
    from ragsweep.results.figures.style import ordered

    recs = configurations(run.records)  # a reference baseline is not tested against the configurations
    if recs.empty or metric not in recs.columns:
        return None
    if split != "all":
        recs = recs[recs["split"] == split]
    recs = recs[recs["error"].isna() & recs[metric].notna()]
    if recs["config_id"].nunique() < 2:
        return None
    means = recs.groupby("config_id", as_index=False)[metric].mean()
    order = ordered(means, metric)[:max_configs]
    out = pairwise_tests(
        recs[recs["config_id"].isin(order)][["config_id", "qid", metric]],
        metric,
        tests=TestOptions(seed=run.meta.get("seed", 0) if seed is None else seed),
    )
    out.attrs["order"] = order
    return out
