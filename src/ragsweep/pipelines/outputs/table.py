"""The summary table printed at the end of a run (and by ``ragsweep show``)."""

from __future__ import annotations

from ragsweep.baselines.rows import partition
from ragsweep.metrics.catalogue import BY_NAME, higher_is_better
from ragsweep.pipelines.outputs.columns import ABSTENTION_METRICS, DEGENERATE_FLAGS, JUDGE_METRICS, TABLE_METRICS


def read_summary(path) -> list[dict]:
    """The rows of a ``summary.csv`` with the columns the table shows as numbers (blank: NaN); read
    with the csv module, since a no-op re-run would otherwise import pandas just to print them."""
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    numeric = (
        "n_questions",
        "n_errors",
        "retrieval_ms_median",
        "n_truncated",
        "latency_invocations",
        *DEGENERATE_FLAGS,
        *(f"n_{f}" for f in DEGENERATE_FLAGS),
    )
    for row in rows:
        for col, value in row.items():
            metric = col.removesuffix("_lo").removesuffix("_hi").removesuffix("_unmeasured")
            metric = metric.removesuffix("_failed")
            if col in numeric or metric in TABLE_METRICS or metric in JUDGE_METRICS:
                row[col] = float(value) if value not in ("", None) else float("nan")
    return rows


def usage_line(usage: dict, made_now: int | None = None) -> str:
    """The run's LLM spending (every invocation's calls, from the call cache), and this invocation's calls where
    they are fewer (a resumed run paid for the rest before)."""
    cost = f"${usage['cost_usd']:.4f}" if usage.get("cost_usd") is not None else "cost unknown (no price)"
    if usage.get("unpriced_calls"):
        cost += f" (+{usage['unpriced_calls']} calls without a price)"
    now = f"{made_now} calls made now; " if made_now is not None and made_now != usage["calls"] else ""
    return (
        f"LLM: {now}{usage['calls']} calls paid by this run in all, {usage.get('prompt_tokens', 0)} prompt + "
        f"{usage.get('completion_tokens', 0)} completion tokens, {cost}"
    )


def _column(metric: str) -> str:
    """The metric's heading, short enough for the 5-wide columns; the caption says what they are."""
    return BY_NAME[metric].column if metric in BY_NAME else metric


def _missing(v) -> bool:
    return v is None or v != v


def _number(v) -> float | None:
    """``v`` as a float, None where it is missing (None or NaN)."""
    return None if _missing(v) else float(v)


def judgement_counts(
    row: dict, metric: str, words: tuple[tuple[str, str], ...] = (("unmeasured", "unmeasured"), ("failed", "failed"))
) -> list[str]:
    """``["2 unmeasured", "1 failed"]``: a judge metric's non-zero counts (summary columns ``METRIC_KIND``), each
    followed by its word."""
    counts = ((row.get(f"{metric}_{kind}"), word) for kind, word in words)
    return [f"{int(x)} {word}" for n, word in counts if (x := _number(n)) is not None and x > 0]


def _unmeasured(row, metric: str) -> str:
    """ " (2 unm.)" after a judge mean that excludes unmeasured judgements."""
    said = judgement_counts(row, metric, (("unmeasured", "unm."),))
    return f" ({said[0]})" if said else ""


def no_mean(row: dict, metric: str) -> str:
    """What stands for a missing judge mean: ``not judged``, or ``n/a (12 unmeasured)`` (``, 2 failed``): a judge
    whose every reply was unparseable is not the same as one that did not run."""
    said = judgement_counts(row, metric)
    return f"n/a ({', '.join(said)})" if said else "not judged"


FLAG_COLUMN = "echo/copy/loop"


def _flagged(row) -> list[int] | None:
    """The row's counts of answers that echo the prompt, that copy the context and that loop (None: no answer of
    it has the flags, an extractive configuration or one answered before they existed; a flag added since
    counts 0)."""
    if _missing(row.get("n_echoed_prompt")) or all(_missing(row.get(f)) for f in DEGENERATE_FLAGS):
        return None
    return [0 if _missing(row.get(f"n_{f}")) else int(row[f"n_{f}"]) for f in DEGENERATE_FLAGS]


def summary_rows(summary) -> list[dict]:
    """Rows of a summary: a DataFrame's records, or the dicts given (``read_summary``)."""
    return summary.to_dict("records") if hasattr(summary, "to_dict") else list(summary)


def print_summary(summary, console, title: str = "summary", metrics: list[str] | None = None, validation=None) -> None:
    """A rich table, best first by the first metric (shown with its 95% CI); summary.csv has every CI.
    ``summary``: a DataFrame or a list of row dicts (a no-op re-run prints without importing pandas).

    Configuration ids are never cut: when the console is narrow, trailing metric columns are
    left out instead (and named in the caption). ``validation``: the validation split's rows; the
    headline metric's validation mean is then shown next to it (the figure configurations are chosen
    on), so the table shows validation and test.
    """
    from rich.table import Table

    metrics = metrics or TABLE_METRICS
    rows = summary_rows(summary)
    if not rows:
        console.print("[yellow]no results yet[/yellow]")
        return
    key = metrics[0]
    val = {str(r["config_id"]): r.get(key) for r in summary_rows(validation)} if validation is not None else {}
    sign = -1.0 if higher_is_better(key) else 1.0
    configs, refs = partition(rows)  # reference baselines: under a rule, in their own order, never ranked
    ordered = sorted(configs, key=lambda r: (True, 0.0) if _missing(r.get(key)) else (False, sign * r[key]))  # stable
    id_w = max(len("configuration"), max(len(str(r["config_id"])) for r in rows))
    n_w = max(
        len(f"{int(r['n_questions'])} ({int(r['n_errors'])} err)" if r["n_errors"] else str(int(r["n_questions"])))
        for r in rows
    )
    # each column takes its content + 2 padding + 1 rule: id, n, headline with CI, ms, then 5-wide metrics
    width = 1 + (id_w + 3) + (n_w + 3) + (22 + 3) + (5 + 3) + (8 if val else 0)
    # degenerate LLM answers (pipelines/degenerate.py): a column only when some answer is flagged
    flagged = any(sum(_flagged(r) or [0]) for r in rows)
    width += 17 if flagged else 0
    shown = [key]
    for m in metrics[1:]:
        if width + 8 > console.width:
            break
        shown.append(m)
        width += 8
    caption = _caption(key, shown, [m for m in metrics if m not in shown], flagged, bool(val), bool(refs))
    table = Table(title=title, caption=caption, pad_edge=False)
    table.add_column("configuration", style="bold", no_wrap=True, min_width=id_w)
    table.add_column("n", justify="right", no_wrap=True)
    if flagged:
        table.add_column(FLAG_COLUMN, justify="right", no_wrap=True)
    for i, m in enumerate(shown):
        table.add_column(_column(m), justify="right", no_wrap=True)
        if i == 0 and val:
            table.add_column("val.", justify="right", no_wrap=True)
    table.add_column("ms", justify="right", no_wrap=True)
    for row in ordered:
        table.add_row(*_cells(row, shown, flagged, val))
    if refs:
        table.add_section()
        for row in refs:
            table.add_row(*_cells(row, shown, flagged, val), style="dim italic")
    console.print(table)


def _caption(
    key: str, shown: list[str], left_out: list[str], flagged: bool, with_validation: bool, references: bool = False
) -> str:
    """What the table's abbreviations and columns mean, for the columns it shows."""
    caption = (
        f"sorted by {key} [95% bootstrap CI]; retrieval metrics at the configuration's top_k; "
        "BS-F1 = BERTScore F1, baseline-rescaled (BS-F1 raw: not rescaled); contains, EM, tokF1 = "
        "answer contains / equals / token F1 with the gold answer (SQuAD-normalised); "
        "ms = median retrieval latency"
    )
    if any(m in ABSTENTION_METRICS for m in shown):
        caption += (
            "; abst = abstained on unanswerable questions (no gold evidence), fAbst = abstained on answerable ones"
        )
    if any(m in JUDGE_METRICS for m in shown):
        caption += (
            "; judges: correctness 1-5, others pass rates; (n unm.) = unparseable judge replies, excluded from the mean"
        )
    if flagged:
        caption += (
            f"; {FLAG_COLUMN} = answers that echo the prompt's instructions or chat markup / are mostly a long "
            "verbatim copy of the retrieved context / restate themselves in a loop (echoed_prompt, copied_context, "
            "looped in records and summary.csv)"
        )
    if with_validation:
        caption += f"; val. = {_column(key)} on the validation questions (where configurations are chosen)"
    if references:
        caption += (
            "; under the rule: reference baselines (no_retrieval: no context, oracle: the gold evidence, "
            "full_document: the gold documents), scored like configurations, never ranked or chosen"
        )
    if left_out:
        caption += f"; not shown (narrow terminal): {', '.join(left_out)} (see summary.csv)"
    return caption


def _cells(row: dict, shown: list[str], flagged: bool, val: dict) -> list[str]:
    """One configuration's cells: id, questions (errors), echo/copy counts, the headline with its CI (and its
    validation mean), the other metrics, the median retrieval latency."""
    n = f"{int(row['n_questions'])}" + (f" ({int(row['n_errors'])} err)" if row["n_errors"] else "")
    cells = [str(row["config_id"]), n]
    if flagged:
        counts = _flagged(row)
        cells.append("-" if counts is None else "/".join(str(c) for c in counts))
    failed = bool(row["n_errors"]) and row["n_errors"] == row["n_questions"]
    for i, m in enumerate(shown):
        v = row.get(m)
        if _missing(v) and failed and i == 0:
            cells.append("failed (see below)")
        elif _missing(v):
            cells.append(no_mean(row, m) if m in JUDGE_METRICS else "-")
        elif i == 0:
            cells.append(f"{v:.3f} [{row.get(f'{m}_lo'):.3f}, {row.get(f'{m}_hi'):.3f}]" + _unmeasured(row, m))
        else:
            cells.append(f"{v:.3f}" + _unmeasured(row, m))
        if i == 0 and val:
            vv = _number(val.get(str(row["config_id"])))
            cells.append("-" if vv is None else f"{vv:.3f}")
    r = row.get("retrieval_ms_median")
    cells.append("-" if _missing(r) else f"{r:.1f}")
    return cells
