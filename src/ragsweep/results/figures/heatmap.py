"""Splitter x retriever heatmap of one metric: which chunking suits which retrieval."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragsweep.results.figures.style import metric_name

if TYPE_CHECKING:
    from ragsweep.results.run import RunData


def splitter_retriever_heatmap(run: RunData, metric: str = "bertscore_f1_rescaled", split: str = "test"):
    """One panel per top_k; a cell is the configuration's mean (the best one when several embeddings
    share the cell, which the cell then says). None when the metric was not measured."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    summary = run.configurations(split)  # a reference baseline has no splitter or retriever
    if summary.empty or metric not in summary.columns or summary[metric].isna().all():
        return None
    # adaptive configurations choose top_k per question: their own panel, last
    summary = summary.assign(top_k=[int(k) if k == k and k is not None else "adaptive" for k in summary["top_k"]])
    top_ks = sorted(summary["top_k"].unique(), key=lambda k: (isinstance(k, str), k if isinstance(k, int) else 0))
    splitters = sorted(summary["splitter"].unique())
    retrievers = sorted(summary["retriever"].unique())
    fig, axes = plt.subplots(
        1,
        len(top_ks),
        squeeze=False,
        figsize=(max(4.0, 0.9 * len(retrievers) + 2.2) * len(top_ks), 0.5 * len(splitters) + 1.8),
    )
    lo, hi = float(summary[metric].min()), float(summary[metric].max())
    several = summary.groupby(["top_k", "splitter", "retriever"]).size().max() > 1
    for ax, k in zip(axes[0], top_ks):
        part = summary[summary["top_k"] == k]
        table = part.pivot_table(index="splitter", columns="retriever", values=metric, aggfunc="max")
        table = table.reindex(index=splitters, columns=retrievers)
        sns.heatmap(
            table,
            annot=True,
            fmt=".3f",
            cmap="viridis",
            vmin=lo,
            vmax=hi,
            ax=ax,
            cbar=ax is axes[0][-1],
            cbar_kws={"label": metric_name(metric)},
            linewidths=0.5,
            annot_kws={"fontsize": 8},
        )
        ax.set_title(f"top_k = {k}" if isinstance(k, int) else "top_k per question (adaptive)")
        ax.set_xlabel("retriever")
        ax.set_ylabel("splitter" if ax is axes[0][0] else "")
        ax.tick_params(axis="x", rotation=30)
        ax.tick_params(axis="y", rotation=0)
    note = " (best over embeddings)" if several else ""
    fig.suptitle(f"{metric_name(metric)} by splitter and retriever{note}, {split} questions")
    return fig
