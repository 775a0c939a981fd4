"""The report's tables as HTML: each split's summary (mean and CI per metric, sortable), the verdict's and stage
2's comparisons, and the LLM usage. Cells carry ``data-v`` (the number to sort by, empty where missing)."""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING, Any

from ragsweep.metrics.catalogue import higher_is_better, label, ordered
from ragsweep.results.run import clean

if TYPE_CHECKING:
    from ragsweep.results.run import RunData

REPORT_METRICS = ordered("report")


def escape(v) -> str:
    """``v`` as HTML text (None as empty)."""
    return html.escape("" if v is None else str(v))


def summary_table(run: RunData, split: str, metric: str | None = None) -> str:
    """One split's table, the report's metric first (and sorted by it), then the others."""
    from ragsweep.baselines.rows import configurations, references
    from ragsweep.results.judge_status import judged_metrics

    rows = run.split(split)

    judges = judged_metrics(run)
    order = ([metric] if metric else []) + [m for m in REPORT_METRICS + judges if m != metric]
    metrics = [m for m in order if m in rows.columns]
    head = (
        ["configuration", "splitter", "embedding", "retriever", "k", "n", "errors"]
        + [label(m) for m in metrics]
        + ["retrieval ms (median)", "retrieval ms (p95)", "cost USD"]
    )
    num_from = 4
    ths = "".join(f'<th class="{"num" if i >= num_from else ""}">{escape(h)}</th>' for i, h in enumerate(head))
    best_first = configurations(rows).sort_values(
        metrics[0], ascending=not higher_is_better(metrics[0]), na_position="last"
    )
    body = [_summary_row(r, metrics, judges) for r in best_first.to_dict("records")]
    # reference baselines: a body of their own under the configurations, which sorting the table leaves in place
    refs = [_summary_row(r, metrics, judges, reference=True) for r in references(rows).to_dict("records")]
    ref_body = f'<tbody class="reference">{"".join(refs)}</tbody>' if refs else ""
    return (
        f'<div class="scroll tall" data-split="{split}"><table class="sortable summary" id="summary-{split}">'
        f"<thead><tr>{ths}</tr></thead><tbody>{''.join(body)}</tbody>{ref_body}</table></div>"
    )


def _summary_row(r: dict, metrics: list[str], judges: list[str], reference: bool = False) -> str:
    """One configuration's (or reference baseline's) row: labels, then each metric's mean with its CI."""
    from ragsweep.results.judge_status import no_mean

    tag = ' <span class="tag" title="a reference baseline: scored, never chosen">reference</span>' if reference else ""
    cells = [
        f'<td class="id">{escape(r["config_id"])}{tag}</td>',
        f"<td>{escape(r['splitter'])}</td>",
        f"<td>{escape(clean(r.get('embedding')) or '-')}</td>",
        f"<td>{escape(r['retriever'])}</td>",
        _num_cell(r["top_k"], 0),
        _num_cell(r["n_questions"], 0),
        _num_cell(r["n_errors"], 0),
    ]
    for m in metrics:
        v, lo, hi = r.get(m), r.get(f"{m}_lo"), r.get(f"{m}_hi")
        if _missing(v):
            cells.append(f'<td class="num" data-v="">{escape(no_mean(r, m) if m in judges else "-")}</td>')
        else:
            unm: Any = r.get(f"{m}_unmeasured")
            extra = f" ({int(unm)} unm.)" if not _missing(unm) and unm > 0 else ""
            cells.append(
                f'<td class="num" data-v="{v:.6f}">{v:.3f}{escape(extra)} '
                f'<span class="ci">[{lo:.3f}, {hi:.3f}]</span></td>'
            )
    cells += [
        _num_cell(r.get("retrieval_ms_median"), 1),
        _num_cell(r.get("retrieval_ms_p95"), 1),
        _num_cell(r.get("generation_cost_usd"), 4),
    ]
    attrs = ' class="reference"' if reference else ""
    return f"<tr{attrs}>{''.join(cells)}</tr>"


def _num_cell(v, digits: int) -> str:
    if _missing(v):
        return '<td class="num" data-v="">-</td>'
    return f'<td class="num" data-v="{float(v):.6f}">{float(v):.{digits}f}</td>'


def _missing(v) -> bool:
    return clean(v) is None


def comparisons_table(run: RunData, stage1) -> str:
    """The verdict's comparisons for the report's metric (stage 1), and stage 2's judge comparisons."""
    import pandas as pd

    parts = [] if stage1 is None or stage1.empty else [stage1.assign(stage="stage1")]
    if not run.comparisons.empty and "stage" in run.comparisons.columns:
        parts.append(run.comparisons[run.comparisons["stage"] == "stage2"])
    if not parts:
        return ""
    c = pd.concat(parts, ignore_index=True)
    head = [
        "stage",
        "metric",
        "best",
        "other",
        "n",
        "mean best",
        "mean other",
        f"diff [{run.ci_label} CI]",
        "d_z",
        "p",
        "p (Holm)",
    ]
    body = []
    for r in c.to_dict("records"):
        body.append(
            "<tr>"
            + "".join(
                [
                    f"<td>{escape(r['stage'])}</td>",
                    f"<td>{escape(r['metric'])}</td>",
                    f"<td>{escape(r['best'])}</td>",
                    f"<td>{escape(r['other'])}</td>",
                    _num_cell(r["n"], 0),
                    _num_cell(r["mean_best"], 3),
                    _num_cell(r["mean_other"], 3),
                    f'<td class="num" data-v="{fmt(r["diff"], 6)}">{fmt(r["diff"], 3)} '
                    f'<span class="ci">[{fmt(r["diff_lo"], 3)}, {fmt(r["diff_hi"], 3)}]</span></td>',
                    _num_cell(r["d_z"], 2)
                    if not _inf(r["d_z"])
                    else f'<td class="num" data-v="">{escape(r["d_z"])}</td>',
                    _num_cell(r["p_value"], 4),
                    _num_cell(r["p_holm"], 4),
                ]
            )
            + "</tr>"
        )
    ths = "".join(f"<th>{escape(h)}</th>" for h in head)
    return (
        "<h3>Best configuration against each other one (test questions)</h3>"
        '<p class="muted">The best is the configuration ranked first on the validation questions, so the test '
        "questions that give these p-values did not also pick it; Holm's correction is over its n - 1 "
        "comparisons (the family of the verdict).</p>"
        f'<div class="scroll"><table class="sortable" id="comparisons"><thead><tr>{ths}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def fmt(v, digits: int) -> str:
    return "" if _missing(v) else f"{float(v):.{digits}f}"


def _inf(v) -> bool:
    return isinstance(v, float) and math.isinf(v)


def usage_table(run: RunData) -> str:
    usage = run.meta.get("usage") or {}
    if not usage.get("calls"):
        return '<p class="muted">No LLM calls were paid for by this run (cost: $0).</p>'
    buckets = [(f"stage: {k}", b) for k, b in sorted((usage.get("by_stage") or {}).items())]
    buckets += [(f"judge: {k}", b) for k, b in sorted((usage.get("by_judge") or {}).items())]
    rows = []
    for what, b in buckets + [("total", usage)]:
        rows.append(
            f"<tr><td>{escape(what)}</td>{_num_cell(b.get('calls'), 0)}{_num_cell(b.get('prompt_tokens'), 0)}"
            f"{_num_cell(b.get('completion_tokens'), 0)}{_num_cell(b.get('cost_usd'), 4)}</tr>"
        )
    return (
        '<table class="sortable" id="usage"><thead><tr><th>what</th><th class="num">calls</th>'
        '<th class="num">prompt tokens</th><th class="num">completion tokens</th><th class="num">USD</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
