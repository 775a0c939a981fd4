"""BERTScore precision, recall and F1 per configuration as violins, coloured by retriever.

Violins show the whole per-question distribution (Hintze & Nelson 1998, "Violin plots: a box
plot-density trace synergism", The American Statistician 52(2)), which a mean with a CI hides:
two configurations with the same mean can differ in how often they fail outright.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def bertscore_violins(run: RunData, split: str = "test", rescaled: bool = True):
    """Three panels (P, R, F1) sharing the configuration axis, best F1 first; None without scores."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    suffix = "_rescaled" if rescaled else ""
    metrics = [f"bertscore_{m}{suffix}" for m in ("p", "r", "f1")]
    from ragsweep.baselines.rows import configurations

    recs = configurations(_rows(run, split))
    if recs.empty or recs[metrics[2]].notna().sum() == 0:
        return None
    refs = run.references(split)  # lines at their means, not violins among the configurations
    drawn: dict[str, None] = {}  # the baselines drawn in any panel, in order
    order = ordered(run.configurations(split), metrics[2])
    order = [c for c in order if c in set(recs["config_id"])]
    palette = retriever_palette(recs["retriever"])
    fig, axes = plt.subplots(1, 3, sharey=True, figsize=(11, config_height(len(order), 0.3)))
    for ax, m in zip(axes, metrics):
        data = recs[recs[m].notna()]
        sns.violinplot(
            data=data,
            x=m,
            y="config_id",
            hue="retriever",
            order=order,
            palette=palette,
            dodge=False,
            cut=0,
            density_norm="width",
            inner="quartile",
            linewidth=0.5,
            legend=False,
            ax=ax,
        )
        drawn.update(dict.fromkeys(reference_lines(ax, refs, m)))
        ax.set_xlabel(f"{metric_name(m)}\n(per question; lines: quartiles)")
        ax.set_ylabel("")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_ylabel("configuration (best F1 first)")
    retriever_legend(fig, palette, list(drawn))
    n = int(recs["qid"].nunique())
    fig.suptitle(f"BERTScore per question, {split} questions (n = {n}), {_scale(rescaled)}")
    return fig


def _scale(rescaled: bool) -> str:
    return "baseline-rescaled (0 = unrelated sentences)" if rescaled else "raw cosine similarity"


def _rows(run: RunData, split: str):
    recs = run.records
    if recs.empty:
        return recs
    if split != "all":
        recs = recs[recs["split"] == split]
    return recs[recs["error"].isna()]
