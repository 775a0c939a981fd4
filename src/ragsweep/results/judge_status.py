"""Stage-2 judges of a run, judgement by judgement: per configuration and judge metric, the mean, or why there is
none (not judged, or judged but every judgement unmeasured or failed); per judge, how many judgements are
unmeasured (a reply that could not be parsed) or failed (a call that failed), with one example reason. What
``show`` prints as its judges table and the report's Judges section adds.

The means and counts are the summary's (test questions, where stage 2 judges); the reasons are the records'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragsweep.errors import shorten
from ragsweep.pipelines.outputs.table import judgement_counts, no_mean

if TYPE_CHECKING:
    from ragsweep.results.run import RunData

TITLE = "Stage-2 judges, test questions: mean [95% CI] (n unm.: unmeasured judgements, excluded from the mean)"
NOTE = (
    "not judged: stage 2 did not judge the configuration; n/a: judged, but no judgement could be used (replies "
    "that could not be parsed, or failed calls)"
)


def _missing(v) -> bool:
    from ragsweep.results.run import clean

    return clean(v) is None


def judge_of(metric: str) -> str:
    from ragsweep.pipelines.outputs.columns import JUDGE_OF

    return JUDGE_OF[metric]


def judged_metrics(run: RunData) -> list[str]:
    """Judge metrics of the judges that judged anything (a judge whose every reply was unmeasured included)."""
    from ragsweep.pipelines.outputs.columns import JUDGE_METRICS

    recs = run.records
    return [
        m
        for m in JUDGE_METRICS
        if m in recs.columns and f"{judge_of(m)}_status" in recs.columns and recs[f"{judge_of(m)}_status"].notna().any()
    ]


def unmeasured_suffix(row: dict, metric: str) -> str:
    """`` (2 unm.)`` after a mean that excludes unmeasured judgements (and ``, 1 failed``)."""
    said = judgement_counts(row, metric, (("unmeasured", "unm."), ("failed", "failed")))
    return f" ({', '.join(said)})" if said else ""


def mean_cell(row: dict, metric: str) -> str:
    v = row.get(metric)
    if _missing(v):
        return no_mean(row, metric)
    lo, hi = row.get(f"{metric}_lo"), row.get(f"{metric}_hi")
    ci = "" if _missing(lo) else f" [{lo:.3f}, {hi:.3f}]"
    return f"{v:.3f}{ci}{unmeasured_suffix(row, metric)}"


def table_rows(run: RunData) -> tuple[list[str], list[list[str]]]:
    """The judge metrics and one row per configuration stage 2 selected or judged: its id and a cell per metric."""
    metrics = judged_metrics(run)
    summary = run.split("test")
    if not metrics or summary.empty:
        return metrics, []
    selected = set((run.meta.get("stage2") or {}).get("selected") or [])
    judged = set(
        run.records.loc[run.records[[f"{judge_of(m)}_status" for m in metrics]].notna().any(axis=1), "config_id"]
    )
    rows = [r for r in summary.to_dict("records") if r["config_id"] in selected | judged]
    return metrics, [[str(r["config_id"]), *(mean_cell(r, m) for m in metrics)] for r in rows]


def judge_lines(run: RunData) -> list[str]:
    """Per judge: judgements made, how many unmeasured and failed (and cut at max_tokens), one example reason."""
    from ragsweep.results.run import clean

    recs = run.records
    judges = dict.fromkeys(judge_of(m) for m in judged_metrics(run))
    out = []
    for judge in judges:
        status = recs[f"{judge}_status"]
        made = int(status.notna().sum())
        bad = recs[status.isin(["unmeasured", "failed"])]
        line = (
            f"{judge}: {int(status.eq('unmeasured').sum())}/{made} judgements unmeasured, "
            f"{int(status.eq('failed').sum())} failed"
        )
        cut = int(recs[f"{judge}_truncated"].fillna(0).gt(0).sum()) if f"{judge}_truncated" in recs.columns else 0
        if cut:
            line += f", {cut} with a reply cut at max_tokens"
        if not bad.empty:
            r = bad.iloc[0]
            reason = clean(r.get(f"{judge}_reason")) if f"{judge}_reason" in bad.columns else None
            line += f"; e.g. {r['config_id']} {r['qid']} ({r[f'{judge}_status']}): {shorten(reason or 'no reason')}"
        out.append(line)
    from ragsweep.pipelines.outputs.judge_text import self_agreement_lines

    return out + self_agreement_lines(run.meta.get("stage2"))


def print_judges(run: RunData, console) -> None:
    """The judges table of ``show`` and the per-judge lines under it; nothing for a run without stage 2."""
    from rich.table import Table

    metrics, rows = table_rows(run)
    if not rows:
        return
    t = Table(title=TITLE, caption=NOTE)
    t.add_column("configuration", no_wrap=True)
    for m in metrics:
        t.add_column(m, justify="right")
    for row in rows:
        t.add_row(*row)
    console.print(t)
    for line in judge_lines(run):
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def judges_html(run: RunData) -> str:
    """The judges table and lines for the report's Judges section ("" for a run without stage 2)."""
    import html

    metrics, rows = table_rows(run)
    if not rows:
        return ""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["configuration", *metrics])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    lines = "".join(f"<li>{html.escape(line)}</li>" for line in judge_lines(run))
    return (
        f'<h3>{html.escape(TITLE)}</h3><div class="scroll"><table id="judge-status"><thead><tr>{head}</tr>'
        f'</thead><tbody>{body}</tbody></table></div><ul class="muted" id="judge-unmeasured">{lines}</ul>'
        f'<p class="muted">{html.escape(NOTE)}</p>'
    )
