"""The figures of a run, shared by the HTML report and ``ragsweep plot``: one function per figure,
each taking a ``RunData`` and returning a matplotlib Figure, or None when the run has nothing to
show for it (no judges, no LLM calls, a single configuration)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragsweep.results.run import RunData

FORMATS = ("png", "svg", "pdf")


@dataclass(frozen=True)
class FigureSpec:
    name: str  # file stem and report anchor
    title: str
    draw: Callable  # (run, metric, split) -> Figure | None


def _specs() -> list[FigureSpec]:
    from ragsweep.results.figures import costs, distributions, heatmap, intervals, search, significance

    return [
        FigureSpec(
            "bertscore_violins",
            "BERTScore distributions",
            lambda run, metric, split: distributions.bertscore_violins(run, split),
        ),
        FigureSpec(
            "retrieval_metrics",
            "Retrieval metrics with confidence intervals",
            lambda run, metric, split: intervals.retrieval_intervals(run, split),
        ),
        FigureSpec(
            "judge_scores",
            "Judge scores with confidence intervals",
            lambda run, metric, split: intervals.judge_intervals(run, split),
        ),
        FigureSpec(
            "heatmap",
            "Splitter x retriever",
            lambda run, metric, split: heatmap.splitter_retriever_heatmap(run, metric, split),
        ),
        FigureSpec(
            "significance",
            "Significance matrix",
            lambda run, metric, split: significance.significance_matrix(run, metric, split),
        ),
        FigureSpec("latency", "Latency per configuration", lambda run, metric, split: costs.latency_breakdown(run)),
        FigureSpec("stage_times", "Time per stage", lambda run, metric, split: costs.stage_times(run)),
        FigureSpec("llm_spending", "LLM spending", lambda run, metric, split: costs.llm_spending(run)),
        FigureSpec(
            "search_progress",
            "Search: best so far against compute",
            lambda run, metric, split: search.search_progress(run),
        ),
        FigureSpec(
            "pareto_front", "Search: quality against latency", lambda run, metric, split: search.pareto_front(run)
        ),
    ]


def draw_figures(run: RunData, metric: str = "bertscore_f1_rescaled", split: str = "test"):
    """Yield ``(FigureSpec, Figure)`` for every figure the run has data for (closed by the caller).
    Each is drawn and should be saved inside ``style.context()``, as ``save_figures`` does."""
    from ragsweep.results.figures.style import context

    for spec in _specs():
        with context():
            fig = spec.draw(run, metric, split)
        if fig is not None:
            yield spec, fig


def save_figures(
    run: RunData,
    out_dir: Path,
    fmt: str | Sequence[str] = "png",
    metric: str = "bertscore_f1_rescaled",
    split: str = "test",
) -> list[Path]:
    """Write each figure as ``out_dir/<name>.<fmt>`` for each format ``fmt`` names (one, or several: each
    figure is drawn once and saved in each); returns the paths written."""
    import matplotlib.pyplot as plt

    from ragsweep.results.figures.style import context

    formats = [fmt] if isinstance(fmt, str) else list(fmt)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for spec, fig in draw_figures(run, metric, split):
        for f in formats:
            path = out_dir / f"{spec.name}.{f}"
            with context():
                fig.savefig(path, format=f)
            written.append(path)
        plt.close(fig)
    return written
