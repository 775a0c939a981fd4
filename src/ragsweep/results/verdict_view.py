"""The verdict of a loaded run (``ragsweep show`` prints it with ``verdict_text.verdict_lines``) and the
report's opening section."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragsweep.evaluation.verdict import Verdict
    from ragsweep.results.run import RunData

from ragsweep.metrics.catalogue import label
from ragsweep.pipelines.outputs.verdict_text import cost_bits, coverage_lines, fmt

_MARKUP = re.compile(r"\[/?yellow\]")  # the terminal's colour markup


def default_metric(run: RunData) -> str:
    """The metric the run decided by (``scoring.metric``, or the one the data chose when it was unset)."""
    chosen = (run.meta.get("verdict_metric") or {}).get("metric")
    return str(chosen or (run.meta.get("spec", {}).get("scoring") or {}).get("metric") or "bertscore_f1_rescaled")


def chunks_per_config(run: RunData) -> dict[str, int]:
    """Chunks in each configuration's index (its splitter's chunk count, from the latest invocation
    that recorded it)."""
    from ragsweep.evaluation.config_costs import chunks_by_config

    per_splitter: dict[str, int] = {}
    for inv in run.meta.get("invocations") or []:
        per_splitter.update({k: int(v) for k, v in (inv.get("chunks") or {}).items()})
    return chunks_by_config([c.get("labels") or {} for c in run.meta.get("configurations") or []], per_splitter)


def run_verdict(run: RunData, metric: str | None = None) -> Verdict:
    """``evaluation.verdict.decide`` on a loaded run with its own settings (alpha, seed, bootstrap). By a judge's
    figure: never a judge shown no better than chance (its repeats, or human labels: ``label_verdict``), and with
    human labels the pick's and the tied set's PPI++ figures (``Verdict.ppi``)."""
    from ragsweep.evaluation.default_metric import agreement_flags, constant_flags, settle, spans_in
    from ragsweep.evaluation.test_options import TestOptions
    from ragsweep.evaluation.verdict import decide
    from ragsweep.results.label_verdict import label_flags, ppi_figures

    spec = run.meta.get("spec", {})
    scoring = spec.get("scoring") or {}
    metric = metric or default_metric(run)
    records = run.records
    finalists = (run.meta.get("search") or {}).get("finalists")
    if finalists is not None:  # a search: the finalists are the configurations answered on test
        from ragsweep.baselines.rows import among

        records = among(records, finalists)

    def verdict_for(m: str) -> Verdict:
        return decide(
            records,
            m,
            tests=TestOptions(
                alpha=float(scoring.get("alpha", 0.05)),
                n_boot=int(scoring.get("bootstrap_samples", 1000)),
                confidence=float(scoring.get("confidence", 0.95)),
                seed=int(spec.get("seed", 0)),
            ),
            chunks=chunks_per_config(run),
            max_missing=float(scoring.get("max_missing", 0.2)),
        )

    chosen = run.meta.get("verdict_metric") or {}
    why = (chosen.get("why") if chosen.get("metric") == metric else None) or "scoring.metric"
    flags = {
        **constant_flags(records, metric),
        **agreement_flags(run.meta.get("stage2")),
        **label_flags(run, seed=int(spec.get("seed", 0))),
    }
    generator = (spec.get("generator") or {}).get("kind") or "extractive"
    verdict, why = settle(metric, why, verdict_for, flags, generator, spans_in(records))
    verdict.metric_why = why
    verdict.ppi = ppi_figures(run, verdict)
    return verdict


def verdict_html(v: Verdict, ci_label: str | None = None) -> str:
    """The report's opening section."""
    e = html.escape
    name = label(v.metric)
    ci_label = ci_label or v.ci_label
    on = v.reported_on
    if v.chosen is None:
        return f"<section id='verdict'><h2>Verdict</h2><p>{e(v.why(name))}</p></section>"
    rows = "".join(
        f"<tr><td>{e(t['qtype'])}</td><td>{t['n']}</td><td>{fmt(t['mean'])} [{fmt(t['lo'])}, {fmt(t['hi'])}]</td></tr>"
        for t in v.by_type
    )
    opt = (
        f" Validation {fmt(v.validation_mean)}; optimism (validation − test) {v.optimism:+.3f}."
        if v.held_out
        else f" {e(v.note or '')}."
    )
    bits = cost_bits(v)
    parts = [
        "<section id='verdict'><h2>Verdict</h2>",
        f"<p class='verdict'>Use <b>{e(v.chosen)}</b>: {on} {e(name)} <b>{fmt(v.test_mean)}</b> "
        f"[{fmt(v.test_lo)}, {fmt(v.test_hi)}] ({ci_label} CI, {v.n_test} {on} questions).{opt}</p>",
        f"<p>{e(v.why(name))}</p>",
        f"<p>Tied with it ({len(v.tied)}): {e(', '.join(v.tied)) or 'none'}.</p>",
    ]
    if v.better:
        parts.append(f"<p><b>Significantly better on {on}</b>: {e(', '.join(v.better))}.</p>")
    if v.untested:
        parts.append(f"<p>Not compared (no {on} question in common): {e(', '.join(v.untested))}.</p>")
    for line in coverage_lines(v):  # questions missing of the pick and the tied; configurations left out
        text = _MARKUP.sub("", line).strip()
        parts.append(f"<p class='warning'>{e(text)}.</p>")
    if bits:
        parts.append(f"<p>Among it and the tied ones: {e('; '.join(bits))}.</p>")
    if v.baselines:
        parts.append(_references_html(v, name, ci_label))
    if rows:
        parts.append(
            f"<table><thead><tr><th>question type</th><th>n</th><th>{e(name)} ({on})</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
    if v.missed_metric is not None:
        parts.append(
            f"<p>{on.capitalize()} questions every configuration misses ({e(v.missed_metric)} = 0): "
            f"{len(v.missed_by_all)}{': ' + e(', '.join(v.missed_by_all)) if v.missed_by_all else ''}.</p>"
        )
    parts.append("</section>")
    return "".join(parts)


def _references_html(v: Verdict, name: str, ci_label: str) -> str:
    """The pick against each reference baseline (``Verdict.baselines``) as a table under the verdict."""
    e = html.escape
    rows = []
    for b in v.baselines:
        diff = "-" if b.get("diff") is None else f"{b['diff']:+.3f} [{fmt(b['diff_lo'])}, {fmt(b['diff_hi'])}]"
        share = "-" if b.get("share") is None else f"{100 * b['share']:.0f} %"
        rows.append(
            f"<tr><td>{e(b['baseline'])}</td><td>{b['n']}</td><td>{fmt(b['mean'])} [{fmt(b['lo'])}, "
            f"{fmt(b['hi'])}]</td><td>{diff}</td><td>{share}</td></tr>"
        )
    return (
        f"<p>Against the reference baselines ({v.reported_on} questions; {ci_label} CIs; reference points, not "
        "tests):</p><table id='references'><thead><tr><th>baseline</th><th>n</th>"
        f"<th>{e(name)}</th><th>the pick − baseline</th><th>the pick / baseline</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
