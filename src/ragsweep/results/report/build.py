"""``ragsweep report RUN``: one self-contained HTML file (styles, script, figures and data inline;
no network), built from ``load_run`` and the figures ``ragsweep plot`` exports."""

from __future__ import annotations

import base64
import html
import io
import json
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from ragsweep.redact import redact
from ragsweep.results.report.tables import comparisons_table, fmt, summary_table, usage_table
from ragsweep.results.report.tables import escape as _e
from ragsweep.results.run import clean

if TYPE_CHECKING:
    from ragsweep.results.run import RunData

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
# figures that draw the reference baselines (``baselines:``) as lines at their means
WITH_REFERENCES = ("bertscore_violins", "retrieval_metrics", "judge_scores")
REFERENCE_CAPTION = (
    " Grey lines: the reference baselines' means where they have one (no_retrieval dotted, oracle dashed, "
    "full_document dash-dot), "
    "scored on the same questions and never ranked; the heatmap and the significance matrix leave them out."
)
MAX_SVG_BYTES = 400_000
SECTIONS = [
    ("verdict", "Verdict"),
    ("summary", "Summary"),
    ("search", "Search"),
    ("bertscore", "BERTScore"),
    ("retrieval", "Retrieval"),
    ("judges", "Judges"),
    ("heatmap", "Splitter x retriever"),
    ("significance", "Significance"),
    ("agreement", "Ranking agreement"),
    ("costs", "Cost and latency"),
    ("explorer", "Questions"),
    ("details", "Run details"),
]


def write_report(
    run: RunData, out: Path, metric: str = "bertscore_f1_rescaled", split: str = "test", against: RunData | None = None
) -> Path:
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


def build_report(
    run: RunData, metric: str = "bertscore_f1_rescaled", split: str = "test", against: RunData | None = None
) -> str:
    """The report's HTML; with ``against`` (another run of the same configurations over other
    questions), a section on how alike the two rank the configurations (``agreement.py``)."""
    import matplotlib.pyplot as plt

    from ragsweep.results.figures import draw_figures
    from ragsweep.results.figures.style import context
    from ragsweep.results.human_labels import ppi_html
    from ragsweep.results.report.agreement import agreement_section
    from ragsweep.results.report.explorer import explorer_data

    figures: dict[str, str] = {}
    refs = not run.references(split).empty
    for spec, fig in draw_figures(run, metric, split):
        caption = CAPTIONS.get(spec.name, "") + (REFERENCE_CAPTION if refs and spec.name in WITH_REFERENCES else "")
        with context():
            figures[spec.name] = _figure(fig, spec.title, caption)
        plt.close(fig)
    from ragsweep.results.verdict_view import run_verdict, verdict_html

    verdict = run_verdict(run, metric)
    assets = files("ragsweep.results.report") / "assets"
    body = "\n".join(
        [
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
            _section(
                "significance",
                "Significance",
                figures.get("significance", _none("fewer than two configurations"))
                + comparisons_table(run, verdict.comparisons),
            ),
            *(
                [
                    _section(
                        "agreement",
                        f"Ranking agreement with {against.name}",
                        agreement_section(run, against, metric, split, _figure),
                    )
                ]
                if against is not None
                else []
            ),
            _section(
                "costs",
                "Cost and latency",
                "".join(figures.get(k, "") for k in ("latency", "stage_times", "llm_spending")) + usage_table(run),
            ),
            _section("explorer", "Per-question explorer", _explorer_shell()),
            _section("details", "Run details", _details(run)),
            "</main>",
            _json_block("explorer-data", explorer_data(run)),
        ]
    )
    title = html.escape(f"ragsweep report: {run.name}")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="ragsweep"><title>{title}</title>'
        f"<style>{(assets / 'report.css').read_text(encoding='utf-8')}</style></head>\n<body>\n{body}\n"
        f"<script>{(assets / 'report.js').read_text(encoding='utf-8')}</script>\n</body></html>\n"
    )


# ---------------------------------------------------------------------------- pieces
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
    return (
        f'<figure><img alt="{_e(title)}" src="data:{mime};base64,{data}">'
        f"<figcaption><b>{_e(title)}.</b> {_e(caption)}</figcaption></figure>"
    )


def _header(run: RunData, split: str, agreement: bool = False) -> str:
    m = run.meta
    ds = m.get("dataset", {})
    gen = m.get("generator", {})
    facts = [
        ("status", run.status),
        ("records", f"{len(run.records)} / {m.get('expected_records')}"),
        ("configurations", len(m.get("configurations", []))),
        (
            "dataset",
            f"{ds.get('name')} ({ds.get('documents')} documents, {ds.get('questions_used')} questions, "
            f"fingerprint {ds.get('fingerprint')})",
        ),
        ("generator", gen.get("label")),
        ("figures on", f"{split} questions"),
        ("ragsweep", m.get("ragsweep_version")),
    ]
    banners = []
    if run.status != "complete":
        kind = "bad" if run.status in ("killed", "incomplete") else "warn"
        banners.append(
            f'<div class="banner {kind}" id="status-banner"><b>{_e(run.status)}:</b> {_e("; ".join(run.notes))}</div>'
        )
    if gen.get("label") == "extractive-baseline":
        banners.append(
            '<div class="banner info">Answers come from the offline <b>extractive baseline</b> '
            "(retrieved sentences, not generated text): BERTScore measures how close the retrieved "
            "sentences are to the reference answers.</div>"
        )
    sections = [s for s in SECTIONS if s[0] != "agreement" or agreement]
    nav = "".join(f'<a href="#{a}">{_e(t)}</a>' for a, t in sections)
    facts_html = "".join(f"<span><b>{_e(k)}:</b> {_e(v)}</span>" for k, v in facts)
    return (
        f'<header class="top"><h1>{_e(run.name)}</h1><div class="facts">{facts_html}</div>'
        f'{"".join(banners)}</header><nav class="toc">{nav}</nav>'
    )


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
    options = "".join(f'<option value="{s}"{" selected" if s == split else ""}>{s} questions</option>' for s in splits)
    controls = (
        f'<div class="controls"><label>questions <select id="split-select">{options}</select></label>'
        '<label>filter <input id="summary-filter" type="search" placeholder="configuration id"></label>'
        f'<span class="muted">click a column to sort; mean with [{run.ci_label} bootstrap CI]</span></div>'
    )
    tables = "".join(summary_table(run, s, metric) for s in splits)
    return controls + tables


def _search(run: RunData, figures: dict[str, str]) -> str:
    """What the search did (``search_text``), its figures, and the finalists and front as a table."""
    from ragsweep.pipelines.outputs.search_text import search_lines

    record = run.meta["search"]
    shown = set(record.get("finalists") or []) | set(record.get("pareto") or [])
    rows = "".join(
        f"<tr><td>{_e(t['config_id'])}</td><td>{_e(t['state'])}</td>"
        + "".join(f"<td>{fmt(t['values'].get(o), 3)}</td>" for o in record["objectives"])
        + f"<td>{fmt(t['seconds'], 2)}</td><td>{'yes' if t['config_id'] in record.get('finalists', []) else ''}</td>"
        f"<td>{'yes' if t['config_id'] in (record.get('pareto') or []) else ''}</td></tr>"
        for t in record["trials"]
        if t["config_id"] in shown and t["state"] == "complete"
    )
    head = "".join(f"<th>{_e(o)}</th>" for o in record["objectives"])
    table = (
        f"<table><thead><tr><th>configuration</th><th>state</th>{head}<th>compute (s)</th><th>finalist</th>"
        f"<th>Pareto</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    lines = "".join(f"<p>{_e(line)}</p>" for line in search_lines(record))
    return lines + table + figures.get("search_progress", "") + figures.get("pareto_front", "")


def _explorer_shell() -> str:
    return (
        '<div class="controls"><label>type <select id="q-type"><option value="">all</option></select></label>'
        '<label>split <select id="q-split"><option value="">all</option></select></label>'
        '<label>history <select id="q-history"><option value="">all</option>'
        '<option value="with">follow-ups (with history)</option><option value="without">asked alone</option>'
        "</select></label>"
        '<label>search <input id="q-search" type="search" placeholder="words or qid"></label>'
        '<span id="q-count" class="muted"></span></div>'
        '<div class="explorer"><div class="qlist" id="qlist"></div><div class="qdetail" id="qdetail"></div></div>'
    )


def _details(run: RunData) -> str:
    m = run.meta
    inv = run.invocations
    cols = [
        c
        for c in (
            "finished_at",
            "answered",
            "failed",
            "skipped_already_done",
            "embeddings_computed",
            "bertscore_pairs_computed",
            "llm_calls_made",
            "timings_s.total",
        )
        if c in inv.columns
    ]
    rows = "".join(
        "<tr>" + "".join(f"<td>{_e(clean(r[c]))}</td>" for c in cols) + "</tr>" for r in inv.to_dict("records")
    )
    table = (
        (f"<table><thead><tr>{''.join(f'<th>{_e(c)}</th>' for c in cols)}</tr></thead><tbody>{rows}</tbody></table>")
        if cols
        else ""
    )
    # redacted again: a manifest written before URLs were redacted may hold an LLM's key in its base_url
    spec = json.dumps(redact(m.get("spec", {})), indent=2, ensure_ascii=False)
    versions = json.dumps(m.get("versions", {}), indent=2)
    return (
        f"<h3>Invocations</h3>{table}"
        f"<details><summary>Spec (as resolved)</summary><pre>{_e(spec)}</pre></details>"
        f"<details><summary>Package versions</summary><pre>{_e(versions)}</pre></details>"
        f'<p class="muted">Run directory: {_e(run.path)}. Regenerate with <code>ragsweep report '
        f"{_e(run.path)}</code>.</p>"
    )


def _json_block(element_id: str, data) -> str:
    """Data for the script, safe inside <script>: every "<" escaped, so nothing can end the element."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c")
    return f'<script type="application/json" id="{element_id}">{text}</script>'
