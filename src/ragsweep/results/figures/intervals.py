"""Means with 95% bootstrap confidence intervals per configuration: retrieval metrics and judges.

A dot-and-whisker ("forest") plot per metric, configurations on a shared axis, so overlapping
intervals are seen at a glance (Cumming & Finch 2005, "Inference by eye", American Psychologist
60(2), on reading CIs side by side).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragsweep.metrics.catalogue import names
from ragsweep.results.figures.style import (
    config_height,
    metric_name,
    ordered,
    reference_lines,
    retriever_legend,
    retriever_palette,
)

if TYPE_CHECKING:
    from ragsweep.results.run import RunData

RETRIEVAL = names("retrieval")


def retrieval_intervals(run: RunData, split: str = "test"):
    """Six panels (hit, MRR, nDCG, span recall/precision, document MRR) at each configuration's top_k."""
    summary = run.split(split)
    metrics = [m for m in RETRIEVAL if m in summary.columns and summary[m].notna().any()]
    if not metrics:
        return None
    return forest(
        summary,
        metrics,
        sort_by="ndcg" if "ndcg" in metrics else metrics[0],
        title=f"Retrieval metrics at each configuration's top_k, {split} questions (mean, {run.ci_label} CI)",
    )


def judge_intervals(run: RunData, split: str = "test"):
    """Stage-2 judges on the judged configurations; None when the run has no judgements."""
    judges = run.judges
    summary = run.split(split)
    if not judges or summary.empty:
        return None
    judged = summary[summary[judges].notna().any(axis=1)]
    if judged.empty:
        return None
    return forest(
        judged,
        judges,
        sort_by=judges[0],
        title=f"LLM judges on the stage-2 configurations, {split} questions (mean, {run.ci_label} CI)",
        limits={"correctness": (1, 5)},
    )


def forest(summary, metrics: list[str], sort_by: str, title: str, limits: dict | None = None):
    """A panel per metric, a configuration per row (mean and CI); the reference baselines among ``summary``
    (``baseline`` set) are vertical lines at their means, not rows: they are not ranked with the configurations."""
    import matplotlib.pyplot as plt
    import numpy as np

    from ragsweep.baselines.rows import configurations, references

    refs = references(summary)
    summary = configurations(summary)
    if summary.empty:
        return None
    order = ordered(summary, sort_by)
    rows = summary.set_index("config_id").loc[order]
    palette = retriever_palette(rows["retriever"])
    colours = [palette[str(r)] for r in rows["retriever"]]
    cols = len(metrics) if len(metrics) <= 4 else 3
    nrows = -(-len(metrics) // cols)
    fig, axes = plt.subplots(
        nrows, cols, sharey=True, squeeze=False, figsize=(3.4 * cols + 1.6, config_height(len(order)) * nrows)
    )
    y = np.arange(len(order))
    drawn: dict[str, None] = {}
    for ax, m in zip(axes.flat, metrics):
        mean, lo, hi = rows[m].to_numpy(float), rows[f"{m}_lo"].to_numpy(float), rows[f"{m}_hi"].to_numpy(float)
        ax.hlines(y, lo, hi, colors=colours, linewidth=1.6)
        ax.scatter(mean, y, c=colours, s=14, zorder=3)
        ax.set_xlabel(metric_name(m))
        ref_means = refs[m].to_numpy(float) if m in refs.columns else np.array([])
        low = np.concatenate([lo, ref_means])
        # 1.02: a line at 1 (the oracle's retrieval) is drawn whole, not on the frame
        ax.set_xlim(*(limits or {}).get(m, (min(0.0, np.nanmin(low) if np.isfinite(low).any() else 0.0), 1.02)))
        drawn.update(dict.fromkeys(reference_lines(ax, refs, m)))
        ax.grid(axis="x", alpha=0.3)
        ax.set_yticks(y, order)
    axes[0, 0].invert_yaxis()  # shared: best at the top of every panel
    for ax in list(axes.flat)[len(metrics) :]:
        ax.set_visible(False)
    fig.supylabel("configuration", fontsize=9)
    retriever_legend(fig, palette, list(drawn))
    fig.suptitle(f"{title}; best {metric_name(sort_by)} first")
    return fig
