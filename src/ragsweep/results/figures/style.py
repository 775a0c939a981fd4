"""What every figure shares: print-legible fonts, one colour per retriever kind, metric names.

Figures are sized from their content, so 50 configuration names stay legible at 8 pt in print.
The command line draws with matplotlib's Agg backend (no display needed); in a notebook the
figures use the notebook's backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.colors import ListedColormap
    from matplotlib.typing import ColorType, LineStyleType

# One fixed colour per retriever kind (Okabe & Ito 2008 colour-blind-safe palette), so a retriever
# keeps its colour across figures and runs; other labels get the remaining colours in order.
KIND_COLOURS = {"bm25": "#E69F00", "vector": "#0072B2", "fusion": "#009E73", "kg": "#CC79A7", "hybrid": "#D55E00"}
_SPARE = ["#56B4E9", "#F0E442", "#000000", "#999999", "#882255", "#44AA99"]


def metric_name(metric: str) -> str:
    """A figure's label for the metric (the catalogue's, with ``@k`` for those measured at top_k)."""
    from ragsweep.metrics.catalogue import BY_NAME

    return BY_NAME[metric].axis if metric in BY_NAME else metric


def retriever_kind(label: str) -> str:
    """The family of a retriever label (``fusion-w0.7`` -> fusion, ``hybrid-kg`` -> hybrid, ``kg-d2`` -> kg)."""
    for kind in ("hybrid", "fusion", "bm25", "vector", "kg"):
        if str(label).startswith(kind):
            return kind
    return str(label)


def retriever_palette(labels) -> dict[str, ColorType]:
    """A colour per retriever label: its kind's colour; several labels of one kind get spare colours."""
    import itertools

    import matplotlib

    # after the spare colours, matplotlib's tab20 (20 more), then repeats: never runs out
    tab20 = cast("ListedColormap", matplotlib.colormaps["tab20"]).colors  # a tuple of RGB tuples
    spare = itertools.chain(_SPARE, itertools.cycle(cast("Sequence[ColorType]", tab20)))
    out: dict[str, ColorType] = {}
    used: set = set()
    for label in sorted(set(map(str, labels))):
        colour: ColorType | None = KIND_COLOURS.get(retriever_kind(label))
        if colour is None or colour in used:
            colour = next(spare)
        used.add(colour)
        out[label] = colour
    return out


RC = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "none",
    "pdf.fonttype": 42,
    "figure.constrained_layout.use": True,
}


def context():
    """Print-legible settings (fonts >= 8 pt, text kept as text in SVG/PDF) for drawing *and* saving,
    applied only inside the block, so a notebook's own matplotlib settings and backend are left alone."""
    import matplotlib

    return matplotlib.rc_context(RC)


def config_height(n: int, per: float = 0.22, base: float = 1.4) -> float:
    """Figure height (inches) for ``n`` configurations on the y axis at 8 pt."""
    return base + per * max(n, 1)


def ordered(summary: pd.DataFrame, metric: str) -> list[str]:
    """Configuration ids best first by ``metric`` (lowest first where lower is better; NaN last, ties by id)."""
    from ragsweep.metrics.catalogue import higher_is_better

    s = summary[["config_id", metric]].copy()
    s["_nan"] = s[metric].isna()
    return s.sort_values(["_nan", metric, "config_id"], ascending=[True, not higher_is_better(metric), True])[
        "config_id"
    ].tolist()


def retriever_legend(fig, palette: dict[str, ColorType], references: Sequence[str] = ()) -> None:
    """One legend for the whole figure, below the panels, so it covers neither data nor the title; the
    reference baselines drawn (``reference_lines``) after the retrievers."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list = [Patch(facecolor=c, label=label) for label, c in palette.items()]
    handles += [
        Line2D([], [], color=REFERENCE_COLOUR, linestyle=reference_style(k), label=f"{k} (reference)")
        for k in references
    ]
    title = "retriever" + (" / reference baseline" if references else "")
    fig.legend(handles=handles, title=title, frameon=False, loc="outside lower center", ncol=min(len(handles), 6))


# Reference baselines are lines across the panels, not rows among the configurations: one grey, a dash pattern
# per kind (no_retrieval the floor, oracle the ceiling, full_document the long-context reader)
REFERENCE_COLOUR = "#4D4D4D"
_REFERENCE_STYLES: dict[str, LineStyleType] = {"no_retrieval": ":", "oracle": "--", "full_document": "-."}


def reference_style(kind: str) -> LineStyleType:
    return _REFERENCE_STYLES.get(kind, "-")


def reference_lines(ax, refs: pd.DataFrame, metric: str) -> list[str]:
    """A vertical line at each reference baseline's mean ``metric`` (``refs``: summary rows with ``baseline``);
    returns the kinds drawn (a baseline without a value for the metric is not)."""
    drawn = []
    for r in refs.to_dict("records"):
        v = r.get(metric)
        if v is None or v != v:
            continue
        ax.axvline(float(v), color=REFERENCE_COLOUR, linestyle=reference_style(r["baseline"]), linewidth=1.1, zorder=4)
        drawn.append(str(r["baseline"]))
    return drawn
