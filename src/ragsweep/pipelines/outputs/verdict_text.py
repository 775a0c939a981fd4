"""The verdict as terminal lines: printed at the end of a run (from ``verdict.json``) and by ``show``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ragsweep.metrics.catalogue import label

if TYPE_CHECKING:
    from ragsweep.evaluation.verdict import Verdict


def fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def cost_bits(v: Verdict) -> list[str]:
    """ "fastest: X (12.3 ms)" and the like, only where the tied set differs in that cost."""
    by_id = {c["config_id"]: c for c in v.costs}
    bits = []
    for name, key, unit in (
        ("fastest", "latency_ms", " ms median per question"),
        ("cheapest", "tokens", " LLM tokens per question"),
        ("smallest index", "chunks", " chunks"),
    ):
        values = {c.get(key) for c in v.costs if c.get(key) is not None}
        pick = {"latency_ms": v.fastest, "tokens": v.cheapest, "chunks": v.smallest}[key]
        if pick is None or len(values) < 2:
            continue
        value = by_id[pick][key]
        bits.append(
            f"{name}: {pick} ({value:.1f}{unit})" if key == "latency_ms" else f"{name}: {pick} ({value:.0f}{unit})"
        )
    return bits


def verdict_lines(v: Verdict, ci_label: str | None = None) -> list[str]:
    """Plain-text lines (rich markup allowed) for the terminal; ``ci_label`` defaults to the verdict's level."""
    name = label(v.metric)
    ci_label = ci_label or v.ci_label
    if v.chosen is None:
        return [f"[bold]verdict ({name})[/bold]: {v.why(name)}"]
    on = v.reported_on
    lines = [
        f"[bold]verdict[/bold] by {name}: chosen on {v.n_validation} validation questions, reported on "
        f"{v.n_test} test questions"
        if v.held_out
        else f"[bold]verdict[/bold] by {name}: {v.note}"
    ]
    if v.metric_why and v.metric_why != "scoring.metric":
        lines.append(f"  by {name} because {v.metric_why.removeprefix('scoring.metric is unset and ')}")
    opt = f"; validation {fmt(v.validation_mean)}, optimism {v.optimism:+.3f}" if v.held_out else ""
    lines.append(
        f"  use [bold]{v.chosen}[/bold]: {on} {name} {fmt(v.test_mean)} [{fmt(v.test_lo)}, "
        f"{fmt(v.test_hi)}] ({ci_label} CI){opt}"
    )
    shown = ", ".join(v.tied[:8]) + (f" and {len(v.tied) - 8} more" if len(v.tied) > 8 else "")
    lines.append(
        f"  tied with it ({len(v.tied)} of {v.n_configs - 1}; not significantly different on {on}): {shown or 'none'}"
    )
    if v.better:
        lines.append(f"  [yellow]significantly better on {on} ({len(v.better)}): {', '.join(v.better[:5])}[/yellow]")
    lines.append(f"  significantly worse: {len(v.worse)}" + (f" ({v.test_method})" if v.test_method else ""))
    if v.untested:
        lines.append(f"  not compared (no {on} question in common): {', '.join(v.untested[:5])}")
    lines += coverage_lines(v) + ppi_lines(v)
    bits = cost_bits(v)
    if bits:
        lines.append("  among it and the tied ones: " + "; ".join(bits))
    lines.append(f"  why: {v.why(name)}")
    flagged = v.flagged_note(name)  # most of its answers echo the prompt or copy the context (pipelines/degenerate.py)
    if flagged:
        lines.append(f"  [yellow]{flagged}[/yellow]")
    if v.baselines:
        lines.append(f"  against the reference baselines ({on}): " + "; ".join(_reference(b) for b in v.baselines))
    if v.by_type and len(v.by_type) > 1:
        parts = [f"{t['qtype']} {fmt(t['mean'])} [{fmt(t['lo'])}, {fmt(t['hi'])}] (n={t['n']})" for t in v.by_type]
        lines.append(f"  by question type ({on}): " + "; ".join(parts))
    if v.missed_metric is not None:
        missed = ", ".join(v.missed_by_all[:12]) + (
            f" and {len(v.missed_by_all) - 12} more" if len(v.missed_by_all) > 12 else ""
        )
        lines.append(
            f"  {on} questions every configuration misses ({v.missed_metric} = 0): "
            f"{len(v.missed_by_all)}" + (f": {missed}" if missed else "")
        )
    return lines


def ppi_lines(v: Verdict) -> list[str]:
    """The pick's and the tied set's figures corrected by the human labels (PPI++), when the verdict is a judge's
    and the run has labels of it."""
    if not v.ppi:
        return []
    parts = [
        f"{c} {fmt(p['ppi'])} [{fmt(p['lo'])}, {fmt(p['hi'])}] ({p['n_labelled']} of {p['n_judged']} labelled)"
        for c, p in v.ppi.items()
    ]
    return ["  corrected by the human labels (PPI++, the judge's error on the labelled answers): " + "; ".join(parts)]


def coverage_lines(v: Verdict) -> list[str]:
    """Questions missing (failed or unanswered) of the pick and the tied ones, when any is; the configurations
    left out for missing more than ``scoring.max_missing``."""
    out = []
    missing = {c: mn for c, mn in (v.missing or {}).items() if mn[0]}
    if missing:
        parts = [f"{c} {m} of {n}" for c, (m, n) in missing.items()]
        out.append(
            "  [yellow]questions missing (failed or not answered), of the pick and the tied: "
            + "; ".join(parts)
            + "[/yellow]"
        )
    if v.left_out:
        shown = ", ".join(f"{c} ({m} of {n} missing)" for c, m, n in v.left_out[:6])
        more = f" and {len(v.left_out) - 6} more" if len(v.left_out) > 6 else ""
        out.append(
            f"  [yellow]left out of the verdict, missing more than {100 * v.max_missing:g} % of their questions "
            f"(scoring.max_missing): {shown}{more}[/yellow]"
        )
    return out


def _reference(b: dict) -> str:
    """One baseline as the verdict says it: its mean, the pick's difference from it, and the pick's share of it."""
    text = f"{b['baseline']} {fmt(b['mean'])} [{fmt(b['lo'])}, {fmt(b['hi'])}]"
    if b.get("diff") is not None:
        text += f", the pick {b['diff']:+.3f} [{fmt(b['diff_lo'])}, {fmt(b['diff_hi'])}]"
    if b["baseline"] == "oracle" and b.get("share") is not None:
        text += f" ({100 * b['share']:.0f} % of it)"
    return text
