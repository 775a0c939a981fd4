"""``ragsweep report RUN``: one self-contained HTML file (styles, script, figures and data inline;
no network), built from ``load_run`` and the figures ``ragsweep plot`` exports."""

from __future__ import annotations

import base64
import html
import io
import json
import math
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from ragsweep.metrics.catalogue import higher_is_better, label, ordered
from ragsweep.results.run import clean

if TYPE_CHECKING:
    from ragsweep.results.run import RunData

SUMMARY_METRICS = ordered("report")
CAPTIONS = {
    "bertscore_violins": "Per-question BERTScore of each configuration's answers against the reference answers "
                         "(precision, recall, F1; baseline-rescaled so that 0 is the score of unrelated "
                         "sentences), one violin per configuration coloured by retriever, best mean F1 first.",
    "retrieval_metrics": "Mean retrieval metrics at each configuration's top_k with percentile-bootstrap "
                         "confidence intervals. A chunk is relevant when it overlaps a gold evidence span, so "
                         "splitters are comparable; out-of-scope questions are excluded.",
    "judge_scores": "Stage-2 LLM judges on the configurations selected on the validation questions: "
                    "correctness 1-5, and pass rates; unparseable verdicts are excluded, not counted as fails.",
    "heatmap": "The chosen metric by splitter and retriever, one panel per top_k.",
    "significance": "Mean difference (row - column) for every pair of the best configurations; * marks a "
                    "two-sided paired test (exact sign-flip, exact sign test or paired t-test) significant after "
                    "Holm correction over the family of all pairs shown. Exploratory: which differences stand "
                    "out, not a verdict on the best (see the comparisons below).",
    "latency": "Median per-question latency, split into query embedding, index search (with fusion) and "
               "answer generation (an LLM's time on the calls: reported by the server, or measured when a call "
               "had it alone; its wall time, queue included, where neither is known).",
    "stage_times": "Wall time per stage of the sweep, summed over its invocations.",
    "llm_spending": "What the run paid for LLM calls (generation, query rewrites, graph extraction, judges).",
    "search_progress": "The best validation figure the search had found against the compute its trials took "
                       "(each trial's own seconds: what it added to what earlier trials had computed).",
    "pareto_front": "Every complete trial's validation figure against its median latency; the line joins the "
                    "trials no other trial beats on both.",
}
MAX_SVG_BYTES = 400_000
SECTIONS = [("verdict", "Verdict"),
            ("summary", "Summary"), ("search", "Search"), ("bertscore", "BERTScore"), ("retrieval", "Retrieval"),
            ("judges", "Judges"), ("heatmap", "Splitter x retriever"), ("significance", "Significance"),
            ("agreement", "Ranking agreement"), ("costs", "Cost and latency"),
            ("explorer", "Questions"), ("details", "Run details")]


def write_report(run: RunData, out: Path, metric: str = "bertscore_f1_rescaled", split: str = "test",
                 against: RunData | None = None) -> Path:
    from ragsweep.errors import RagsweepError

    if out.is_dir():
        raise RagsweepError(f"--out: {out} is a directory; give the HTML file to write, e.g. {out / 'report.html'}")
    text = build_report(run, metric, split, against)
    tmp = out.with_name(out.name + ".tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    except OSError as exc:
        if tmp.parent.is_dir():
            tmp.unlink(missing_ok=True)
        raise RagsweepError(f"--out: cannot write {out} ({exc.strerror or exc}); choose a writable path") from None
    return out


def _notes(run: RunData) -> str:
    """Failed configurations, truncated replies, mixed invocations, LLM endpoints that queued: beside the verdict."""
    from ragsweep.results.run_notes import run_notes

    lines = run_notes(run)
    return f'<div class="notes">{"".join(f"<p>{_e(line)}</p>" for line in lines)}</div>' if lines else ""


def build_report(run: RunData, metric: str = "bertscore_f1_rescaled", split: str = "test",
                 against: RunData | None = None) -> str:
    """The report's HTML; with ``against`` (another run of the same configurations over other
    questions), a section on how alike the two rank the configurations (``agreement.py``)."""
    import matplotlib.pyplot as plt

    from ragsweep.results.figures import draw_figures
    from ragsweep.results.figures.style import context
    from ragsweep.results.human_labels import ppi_html
    from ragsweep.results.report.agreement import agreement_section
    from ragsweep.results.report.explorer import explorer_data

    figures: dict[str, str] = {}
    for spec, fig in draw_figures(run, metric, split):
        with context():
            figures[spec.name] = _figure(fig, spec.title, CAPTIONS.get(spec.name, ""))
        plt.close(fig)
    from ragsweep.results.verdict_view import run_verdict, verdict_html

    verdict = run_verdict(run, metric)
    assets = files("ragsweep.results.report") / "assets"
    body = "\n".join([
        _header(run, split, against is not None),
        "<main>",
        verdict_html(verdict, run.ci_label),
        _notes(run),
        _section("summary", "Summary", _summary(run, split, metric)),
        *([_section("search", "Search", _search(run, figures))] if run.meta.get("search") else []),
        _section("bertscore", "BERTScore distributions", figures.get("bertscore_violins", _none("no BERTScores"))),
        _section("retrieval", "Retrieval metrics", figures.get("retrieval_metrics", _none("no retrieval metrics"))),
        _section("judges", "Judge scores", _judges(run, figures) + ppi_html(run)),
        _section("heatmap", "Splitter x retriever", figures.get("heatmap", _none(f"no {metric} values"))),
        _section("significance", "Significance", figures.get("significance", _none("fewer than two configurations"))
                 + _comparisons(run, verdict.comparisons)),
        *([_section("agreement", f"Ranking agreement with {against.name}", agreement_section(
            run, against, metric, split, _figure))] if against is not None else []),
        _section("costs", "Cost and latency", "".join(figures.get(k, "") for k in ("latency", "stage_times",
                                                                                    "llm_spending"))
                 + _usage(run)),
        _section("explorer", "Per-question explorer", _explorer_shell()),
        _section("details", "Run details", _details(run)),
        "</main>",
        _json_block("explorer-data", explorer_data(run)),
    ])
    title = html.escape(f"ragsweep report: {run.name}")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<meta name=\"generator\" content=\"ragsweep\"><title>{title}</title>"
            f"<style>{(assets / 'report.css').read_text(encoding='utf-8')}</style></head>\n<body>\n{body}\n"
            f"<script>{(assets / 'report.js').read_text(encoding='utf-8')}</script>\n</body></html>\n")


# ---------------------------------------------------------------------------- pieces
def _e(v) -> str:
    return html.escape("" if v is None else str(v))


def _section(anchor: str, title: str, content: str) -> str:
    return f'<section id="{anchor}"><h2>{_e(title)}</h2>\n{content}\n</section>'


def _none(text: str) -> str:
    return f'<p class="muted">{_e(text)}</p>'


def _figure(fig, title: str, caption: str) -> str:
    """A figure as a data URI in an <img> (its ids cannot clash with the page's): SVG, which scales,
    unless it would pass ``MAX_SVG_BYTES`` (many violins), then a 150 dpi PNG."""
    buf = io.BytesIO()
    fig.savefig(buf, format="svg")
    mime = "image/svg+xml"
    if buf.tell() > MAX_SVG_BYTES:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=150)
        mime = "image/png"
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (f'<figure><img alt="{_e(title)}" src="data:{mime};base64,{data}">'
            f"<figcaption><b>{_e(title)}.</b> {_e(caption)}</figcaption></figure>")


def _header(run: RunData, split: str, agreement: bool = False) -> str:
    m = run.meta
    ds = m.get("dataset", {})
    gen = m.get("generator", {})
    facts = [("status", run.status), ("records", f"{len(run.records)} / {m.get('expected_records')}"),
             ("configurations", len(m.get("configurations", []))),
             ("dataset", f"{ds.get('name')} ({ds.get('documents')} documents, {ds.get('questions_used')} questions, "
                         f"fingerprint {ds.get('fingerprint')})"),
             ("generator", gen.get("label")), ("figures on", f"{split} questions"),
             ("ragsweep", m.get("ragsweep_version"))]
    banners = []
    if run.status != "complete":
        kind = "bad" if run.status in ("killed", "incomplete") else "warn"
        banners.append(f'<div class="banner {kind}" id="status-banner"><b>{_e(run.status)}:</b> '
                       f"{_e('; '.join(run.notes))}</div>")
    if gen.get("label") == "extractive-baseline":
        banners.append('<div class="banner info">Answers come from the offline <b>extractive baseline</b> '
                       "(retrieved sentences, not generated text): BERTScore measures how close the retrieved "
                       "sentences are to the reference answers.</div>")
    sections = [s for s in SECTIONS if s[0] != "agreement" or agreement]
    nav = "".join(f'<a href="#{a}">{_e(t)}</a>' for a, t in sections)
    facts_html = "".join(f"<span><b>{_e(k)}:</b> {_e(v)}</span>" for k, v in facts)
    return (f'<header class="top"><h1>{_e(run.name)}</h1><div class="facts">{facts_html}</div>'
            f"{''.join(banners)}</header><nav class=\"toc\">{nav}</nav>")


def _judges(run: RunData, figures: dict[str, str]) -> str:
    """The judge figure, then per configuration and judge the mean or why there is none, and the unmeasured."""
    from ragsweep.results.judge_status import judges_html

    status = judges_html(run)
    if "judge_scores" in figures:
        return figures["judge_scores"] + status
    if status:
        return _none("no judge mean to plot: every judgement was unmeasured or failed") + status
    return _none("no stage-2 judgements in this run (add a stage2 section and an llm endpoint to the spec)")


def _summary(run: RunData, split: str, metric: str | None = None) -> str:
    if run.summary.empty:
        return _none("no results yet")
    splits = [s for s in ("test", "validation", "all") if (run.summary["split"] == s).any()]
    options = "".join(f'<option value="{s}"{" selected" if s == split else ""}>{s} questions</option>'
                      for s in splits)
    controls = (f'<div class="controls"><label>questions <select id="split-select">{options}</select></label>'
                '<label>filter <input id="summary-filter" type="search" placeholder="configuration id"></label>'
                f'<span class="muted">click a column to sort; mean with [{run.ci_label} bootstrap CI]</span></div>')
    tables = "".join(_summary_table(run, s, metric) for s in splits)
    return controls + tables


def _summary_table(run: RunData, split: str, metric: str | None = None) -> str:
    """One split's table, the report's metric first (and sorted by it), then the others."""
    rows = run.split(split)
    from ragsweep.results.judge_status import judged_metrics, no_mean

    judges = judged_metrics(run)
    order = ([metric] if metric else []) + [m for m in SUMMARY_METRICS + judges if m != metric]
    metrics = [m for m in order if m in rows.columns]
    head = (["configuration", "splitter", "embedding", "retriever", "k", "n", "errors"]
            + [label(m) for m in metrics] + ["retrieval ms (median)", "retrieval ms (p95)", "cost USD"])
    num_from = 4
    ths = "".join(f'<th class="{"num" if i >= num_from else ""}">{_e(h)}</th>' for i, h in enumerate(head))
    body = []
    best_first = rows.sort_values(metrics[0], ascending=not higher_is_better(metrics[0]), na_position="last")
    for r in best_first.to_dict("records"):
        cells = [f"<td class=\"id\">{_e(r['config_id'])}</td>", f"<td>{_e(r['splitter'])}</td>",
                 f"<td>{_e(clean(r.get('embedding')) or '-')}</td>", f"<td>{_e(r['retriever'])}</td>",
                 _num_cell(r["top_k"], 0), _num_cell(r["n_questions"], 0), _num_cell(r["n_errors"], 0)]
        for m in metrics:
            v, lo, hi = r.get(m), r.get(f"{m}_lo"), r.get(f"{m}_hi")
            if _missing(v):
                cells.append(f'<td class="num" data-v="">{_e(no_mean(r, m) if m in judges else "-")}</td>')
            else:
                unm = r.get(f"{m}_unmeasured")
                extra = f" ({int(unm)} unm.)" if not _missing(unm) and unm > 0 else ""
                cells.append(f'<td class="num" data-v="{v:.6f}">{v:.3f}{_e(extra)} '
                             f'<span class="ci">[{lo:.3f}, {hi:.3f}]</span></td>')
        cells += [_num_cell(r.get("retrieval_ms_median"), 1), _num_cell(r.get("retrieval_ms_p95"), 1),
                  _num_cell(r.get("generation_cost_usd"), 4)]
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<div class="scroll tall" data-split="{split}"><table class="sortable summary" id="summary-{split}">'
            f"<thead><tr>{ths}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def _num_cell(v, digits: int) -> str:
    if _missing(v):
        return '<td class="num" data-v="">-</td>'
    return f'<td class="num" data-v="{float(v):.6f}">{float(v):.{digits}f}</td>'


def _missing(v) -> bool:
    return clean(v) is None


def _comparisons(run: RunData, stage1) -> str:
    """The verdict's comparisons for the report's metric (stage 1), and stage 2's judge comparisons."""
    import pandas as pd

    parts = [] if stage1 is None or stage1.empty else [stage1.assign(stage="stage1")]
    if not run.comparisons.empty and "stage" in run.comparisons.columns:
        parts.append(run.comparisons[run.comparisons["stage"] == "stage2"])
    if not parts:
        return ""
    c = pd.concat(parts, ignore_index=True)
    head = ["stage", "metric", "best", "other", "n", "mean best", "mean other", f"diff [{run.ci_label} CI]", "d_z",
            "p", "p (Holm)"]
    body = []
    for r in c.to_dict("records"):
        body.append("<tr>" + "".join([
            f"<td>{_e(r['stage'])}</td>", f"<td>{_e(r['metric'])}</td>", f"<td>{_e(r['best'])}</td>",
            f"<td>{_e(r['other'])}</td>", _num_cell(r["n"], 0), _num_cell(r["mean_best"], 3),
            _num_cell(r["mean_other"], 3),
            f'<td class="num" data-v="{_fmt(r["diff"], 6)}">{_fmt(r["diff"], 3)} '
            f'<span class="ci">[{_fmt(r["diff_lo"], 3)}, {_fmt(r["diff_hi"], 3)}]</span></td>',
            _num_cell(r["d_z"], 2) if not _inf(r["d_z"]) else f'<td class="num" data-v="">{_e(r["d_z"])}</td>',
            _num_cell(r["p_value"], 4), _num_cell(r["p_holm"], 4)]) + "</tr>")
    ths = "".join(f"<th>{_e(h)}</th>" for h in head)
    return ("<h3>Best configuration against each other one (test questions)</h3>"
            '<p class="muted">The best is the configuration ranked first on the validation questions, so the test '
            "questions that give these p-values did not also pick it; Holm's correction is over its n - 1 "
            "comparisons (the family of the verdict).</p>"
            f'<div class="scroll"><table class="sortable" id="comparisons"><thead><tr>{ths}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _fmt(v, digits: int) -> str:
    return "" if _missing(v) else f"{float(v):.{digits}f}"


def _inf(v) -> bool:
    return isinstance(v, float) and math.isinf(v)


def _usage(run: RunData) -> str:
    usage = run.meta.get("usage") or {}
    if not usage.get("calls"):
        return '<p class="muted">No LLM calls were paid for by this run (cost: $0).</p>'
    buckets = [(f"stage: {k}", b) for k, b in sorted((usage.get("by_stage") or {}).items())]
    buckets += [(f"judge: {k}", b) for k, b in sorted((usage.get("by_judge") or {}).items())]
    rows = []
    for what, b in buckets + [("total", usage)]:
        rows.append(f"<tr><td>{_e(what)}</td>{_num_cell(b.get('calls'), 0)}{_num_cell(b.get('prompt_tokens'), 0)}"
                    f"{_num_cell(b.get('completion_tokens'), 0)}{_num_cell(b.get('cost_usd'), 4)}</tr>")
    return ('<table class="sortable" id="usage"><thead><tr><th>what</th><th class="num">calls</th>'
            '<th class="num">prompt tokens</th><th class="num">completion tokens</th><th class="num">USD</th>'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _search(run: RunData, figures: dict[str, str]) -> str:
    """What the search did (``search_text``), its figures, and the finalists and front as a table."""
    from ragsweep.pipelines.outputs.search_text import search_lines

    record = run.meta["search"]
    shown = set(record.get("finalists") or []) | set(record.get("pareto") or [])
    rows = "".join(
        f"<tr><td>{_e(t['config_id'])}</td><td>{_e(t['state'])}</td>"
        + "".join(f"<td>{_fmt(t['values'].get(o), 3)}</td>" for o in record["objectives"])
        + f"<td>{_fmt(t['seconds'], 2)}</td><td>{'yes' if t['config_id'] in record.get('finalists', []) else ''}</td>"
        f"<td>{'yes' if t['config_id'] in (record.get('pareto') or []) else ''}</td></tr>"
        for t in record["trials"] if t["config_id"] in shown and t["state"] == "complete")
    head = "".join(f"<th>{_e(o)}</th>" for o in record["objectives"])
    table = (f"<table><thead><tr><th>configuration</th><th>state</th>{head}<th>compute (s)</th><th>finalist</th>"
             f"<th>Pareto</th></tr></thead><tbody>{rows}</tbody></table>")
    lines = "".join(f"<p>{_e(line)}</p>" for line in search_lines(record))
    return lines + table + figures.get("search_progress", "") + figures.get("pareto_front", "")


def _explorer_shell() -> str:
    return ('<div class="controls"><label>type <select id="q-type"><option value="">all</option></select></label>'
            '<label>split <select id="q-split"><option value="">all</option></select></label>'
            '<label>search <input id="q-search" type="search" placeholder="words or qid"></label>'
            '<span id="q-count" class="muted"></span></div>'
            '<div class="explorer"><div class="qlist" id="qlist"></div><div class="qdetail" id="qdetail"></div></div>')


def _details(run: RunData) -> str:
    m = run.meta
    inv = run.invocations
    cols = [c for c in ("finished_at", "answered", "failed", "skipped_already_done", "embeddings_computed",
                        "bertscore_pairs_computed", "llm_calls_made", "timings_s.total") if c in inv.columns]
    rows = "".join("<tr>" + "".join(f"<td>{_e(clean(r[c]))}</td>" for c in cols) + "</tr>"
                   for r in inv.to_dict("records"))
    table = (f"<table><thead><tr>{''.join(f'<th>{_e(c)}</th>' for c in cols)}</tr></thead><tbody>{rows}</tbody>"
             "</table>") if cols else ""
    spec = json.dumps(m.get("spec", {}), indent=2, ensure_ascii=False)
    versions = json.dumps(m.get("versions", {}), indent=2)
    return (f"<h3>Invocations</h3>{table}"
            f"<details><summary>Spec (as resolved)</summary><pre>{_e(spec)}</pre></details>"
            f"<details><summary>Package versions</summary><pre>{_e(versions)}</pre></details>"
            f'<p class="muted">Run directory: {_e(run.path)}. Regenerate with <code>ragsweep report '
            f"{_e(run.path)}</code>.</p>")


def _json_block(element_id: str, data) -> str:
    """Data for the script, safe inside <script>: every "<" escaped, so nothing can end the element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c")
    return f'<script type="application/json" id="{element_id}">{text}</script>'
