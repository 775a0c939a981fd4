"""The report's "Ranking agreement with OTHER" section (``ragsweep report RUN --against OTHER``): how
alike two runs of the same configurations over different questions (a human set and a generated one,
say) rank them, per metric (``results/ranking.py``), and the configurations' means of the report's
metric, OTHER against this run, in one scatter."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from ragsweep.evaluation.test_options import TestOptions
from ragsweep.results.ranking import CAVEAT, EXPLAIN, ranking_table, score_matrix, shared_configs

if TYPE_CHECKING:
    import pandas as pd

    from ragsweep.results.run import RunData

CAPTION = (
    "Each point is a configuration: its mean on OTHER's questions (x) and on this run's (y). "
    "Spearman's rho compares the two orderings, not the values, so the sets may score on different scales."
)


def agreement_section(
    run: RunData, other: RunData, metric: str, split: str, figure_html: Callable[[object, str, str], str]
) -> str:
    """The section's HTML: what was compared, the table (one row per metric) and the scatter of
    ``metric`` (drawn inside the figure style and embedded with ``figure_html(fig, title, caption)``)."""
    import matplotlib.pyplot as plt

    from ragsweep.errors import RagsweepError
    from ragsweep.results.compare import DEFAULT_METRICS, JUDGE_METRICS
    from ragsweep.results.figures.style import context

    configs = shared_configs(other, run)
    if not configs:
        raise RagsweepError(
            f"--against: {run.path} and {other.path} share no configuration id; compare runs of "
            "specs with common splitters, embeddings, retrievers and top_k"
        )
    name = _e(other.name)
    intro = (
        f"<p>{len(configs)} configuration(s) in both this run and <b>{name}</b> ({_e(other.path)}), "
        f"{_e(split)} questions of each; A = {name}, B = this run. {_e(EXPLAIN)}</p>"
    )
    measured = [m for m in dict.fromkeys([metric] + DEFAULT_METRICS + JUDGE_METRICS) if _has(run, m) and _has(other, m)]
    seed = int(run.meta.get("seed") or 0)
    table, notes = ranking_table(other, run, measured, split, tests=TestOptions(seed=seed), configs=configs)
    if table is None:
        return intro + _muted("fewer than 3 shared configurations: no ranking to compare")
    parts = [intro, _table(table, other.name), *(_muted(n) for n in notes), _muted(CAVEAT)]
    row = table[table["metric"] == metric]
    if row.empty or row["n_configs"].iloc[0] == 0:
        parts.append(_muted(f"{metric}: not scored for 3 or more configurations in both runs; no scatter"))
        return "".join(parts)
    with context():
        fig, title = _scatter(run, other, configs, metric, split, row.iloc[0])
        parts.append(figure_html(fig, title, CAPTION.replace("OTHER", other.name)))
    plt.close(fig)
    return "".join(parts)


def _scatter(run: RunData, other: RunData, configs: list[str], metric: str, split: str, row):
    import matplotlib.pyplot as plt
    import numpy as np

    from ragsweep.results.figures.style import metric_name, retriever_legend, retriever_palette

    x, y = (_means(score_matrix(r, configs, metric, split)) for r in (other, run))
    ok = ~np.isnan(x) & ~np.isnan(y)
    kinds = _retrievers(run, configs)
    palette = retriever_palette(set(kinds) - {""}) if any(kinds) else {}
    colours = [palette.get(k, "#0072B2") for k in kinds]
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    ax.scatter(x[ok], y[ok], s=22, c=[c for c, keep in zip(colours, ok) if keep], edgecolors="white", linewidths=0.5)
    best_x, best_y = (int(np.argmax(np.where(ok, v, -np.inf))) for v in (x, y))  # the best of each run
    for i, dy in ((best_y, 5), (best_x, -11))[: 1 if best_x == best_y else 2]:
        ax.annotate(configs[i], (x[i], y[i]), fontsize=8, xytext=(-4, dy), textcoords="offset points", ha="right")
    ax.set_xlabel(f"{other.name}: mean {metric_name(metric)}")
    ax.set_ylabel(f"{run.name}: mean {metric_name(metric)}")
    rho = (
        f"Spearman \u03c1 = {row.spearman:.2f} [{row.spearman_lo:.2f}, {row.spearman_hi:.2f}], "
        f"{int(row.n_configs)} configurations"
    )
    ax.set_title(f"{metric_name(metric)}\n{rho}")
    title = f"{metric_name(metric)}: {rho}"
    if palette:
        retriever_legend(fig, palette)
    return fig, title


def _means(m):
    """Each row's mean over its scores; NaN for a row without any."""
    import numpy as np

    count = (~np.isnan(m)).sum(axis=1)
    return np.where(count > 0, np.nansum(m, axis=1) / np.maximum(count, 1), np.nan)


def _retrievers(run: RunData, configs: list[str]) -> list[str]:
    """Each configuration's retriever label ("" when the summary has none), for the colours."""
    s = run.summary
    if s.empty or "retriever" not in s.columns:
        return [""] * len(configs)
    labels = s.drop_duplicates("config_id").set_index("config_id")["retriever"]
    return [str(labels.get(c, "")) for c in configs]


def _table(t: pd.DataFrame, other: str) -> str:
    head = [
        "metric",
        "configurations",
        "Spearman [95% CI]",
        "Kendall tau-b",
        "same best",
        "top-5 overlap",
        f"reliability ({other} / this run)",
        "corrected for attenuation",
        f"questions ({other})",
        "questions (this run)",
    ]
    rows = []
    for r in t.itertuples(index=False):
        done = r.n_configs > 0
        cells = [
            r.metric,
            r.n_configs,
            f"{r.spearman:+.3f} [{r.spearman_lo:+.3f}, {r.spearman_hi:+.3f}]" if done else "-",
            f"{r.kendall:+.3f}" if done and r.kendall == r.kendall else "-",
            ("yes" if r.top1_same else "no") if done else "-",
            f"{r.top5_overlap:.2f}" if done else "-",
            f"{_num(r.reliability_a)} / {_num(r.reliability_b)}",
            _num(r.disattenuated),
            r.n_a,
            r.n_b,
        ]
        rows.append(
            f"<tr><td>{_e(cells[0])}</td>" + "".join(f'<td class="num">{_e(c)}</td>' for c in cells[1:]) + "</tr>"
        )
    ths = "".join(f"<th>{_e(h)}</th>" for h in head)
    return (
        f'<div class="scroll"><table id="ranking-agreement"><thead><tr>{ths}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def _num(v) -> str:
    return "-" if v is None or v != v else f"{v:.2f}"


def _has(run: RunData, metric: str) -> bool:
    return metric in run.records.columns and bool(run.records[metric].notna().any())


def _muted(text: str) -> str:
    return f'<p class="muted">{_e(text)}</p>'


def _e(v) -> str:
    return html.escape("" if v is None else str(v))
