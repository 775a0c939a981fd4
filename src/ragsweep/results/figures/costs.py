"""Where time and money go: per-configuration latency, per-stage wall time, LLM spending."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragsweep.results.figures.style import config_height

if TYPE_CHECKING:
    from ragsweep.results.run import RunData


def latency_breakdown(run: RunData, split: str = "all"):
    """Median per-question latency per configuration, stacked: query embedding, index search (and
    fusion), answer generation (ms). Medians of parts, so bars can differ slightly from the
    median total."""
    import matplotlib.pyplot as plt
    import numpy as np

    recs = run.records
    if recs.empty:
        return None
    if split != "all":
        recs = recs[recs["split"] == split]
    recs = recs[recs["error"].isna()]
    if recs.empty:
        return None
    parts = recs.assign(search_ms=(recs["retrieval_ms"] - recs["query_embedding_ms"].fillna(0)).clip(lower=0))
    med = parts.groupby("config_id")[["query_embedding_ms", "search_ms", "generation_ms"]].median().fillna(0)
    med = med.loc[med.sum(axis=1).sort_values().index]
    fig, ax = plt.subplots(figsize=(9, config_height(len(med))))
    left = np.zeros(len(med))
    labels = {
        "query_embedding_ms": "query embedding",
        "search_ms": "index search + fusion",
        "generation_ms": "answer generation (server time)",
    }
    for col, colour in zip(labels, ("#56B4E9", "#0072B2", "#E69F00")):
        ax.barh(med.index, med[col], left=left, color=colour, label=labels[col])
        left += med[col].to_numpy()
    ax.set_xlabel("median latency per question (ms)")
    ax.set_ylabel("configuration (fastest first)")
    ax.invert_yaxis()
    ax.legend(frameon=False, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(
        f"Latency per question ({len(recs['qid'].unique())} questions; cached query embeddings count "
        "their first measurement)"
    )
    return fig


def stage_times(run: RunData):
    """Wall time per stage summed over the run's invocations (s): what a fresh run of it costs."""
    import matplotlib.pyplot as plt

    totals: dict[str, float] = {}
    for inv in run.meta.get("invocations") or []:
        for stage, secs in (inv.get("timings_s") or {}).items():
            if stage != "total":
                totals[stage] = totals.get(stage, 0.0) + float(secs or 0.0)
    totals = {k: v for k, v in totals.items() if v > 0}
    if not totals:
        return None
    items = sorted(totals.items(), key=lambda kv: kv[1], reverse=True)
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.3 * len(items)))
    ax.barh([k.replace("_", " ") for k, _ in items], [v for _, v in items], color="#0072B2")
    for i, (_, v) in enumerate(items):
        ax.text(v, i, f" {v:.1f} s", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("wall time (s), summed over invocations")
    n = len(run.meta.get("invocations") or [])
    ax.set_title(f"Time per stage ({n} invocation{'s' if n != 1 else ''} of ragsweep run)")
    ax.grid(axis="x", alpha=0.3)
    return fig


def llm_spending(run: RunData):
    """LLM cost by stage and by configuration (USD, or tokens when no price is known); None
    without LLM calls."""
    import matplotlib.pyplot as plt

    usage = run.meta.get("usage") or {}
    if not usage.get("calls"):
        return None
    priced = usage.get("cost_usd") is not None
    key = "cost_usd" if priced else "tokens"

    def value(b: dict) -> float:
        return (
            float(b.get("cost_usd") or 0.0)
            if priced
            else float(b.get("prompt_tokens", 0) + b.get("completion_tokens", 0))
        )

    stages = sorted(((k, value(v)) for k, v in (usage.get("by_stage") or {}).items()), key=lambda kv: -kv[1])
    configs = sorted(((k, value(v)) for k, v in (usage.get("by_configuration") or {}).items()), key=lambda kv: -kv[1])
    fig, axes = plt.subplots(1, 2, figsize=(11, config_height(max(len(configs), len(stages)))))
    unit = "USD" if priced else "tokens (no price known)"
    for ax, items, what in ((axes[0], stages, "stage"), (axes[1], configs, "configuration")):
        ax.barh([k for k, _ in items], [v for _, v in items], color="#D55E00")
        ax.invert_yaxis()
        ax.set_xlabel(f"{key.replace('_usd', '')} ({unit})")
        ax.set_ylabel(what)
        ax.grid(axis="x", alpha=0.3)
    total = (
        f"${usage['cost_usd']:.4f}"
        if priced
        else f"{usage.get('prompt_tokens', 0) + usage.get('completion_tokens', 0)} tokens"
    )
    fig.suptitle(f"LLM spending paid by this run: {usage['calls']} calls, {total}")
    return fig
