"""The HTML report in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

The report of ``report_run`` (every retriever kind, LLM answers, stage-2 judges) is opened from a
file:// URL with every non-file request refused and counted: it must load with no console errors and
no network request, show its sections and figures, sort its tables, switch splits, and its explorer
must show answers, sources with per-retriever ranks and triplets, and the judges' reasoning. A
screenshot must not be blank.

Skipped when no Chromium is installed (``apt-get install chromium``), unless
``RAGSWEEP_REQUIRE_BROWSER=1`` (set by ``.ci/run``, which installs it) makes that an error.
"""

from __future__ import annotations

import io
import os
import re
import shutil

import pytest
from conftest import REPORT_KEY, describe, unavailable

pytestmark = pytest.mark.browser

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SECTIONS = ["summary", "bertscore", "retrieval", "judges", "heatmap", "significance", "costs", "explorer", "details"]


def chromium_path() -> str:
    path = os.environ.get("RAGSWEEP_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        unavailable("RAGSWEEP_REQUIRE_BROWSER", "no chromium found", "not on PATH", "apt-get install chromium")
    return path


@pytest.fixture(scope="module")
def report_file(report_run, run_cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    proc = run_cli("report", report_run.run_dir, "--out", out)
    assert proc.returncode == 0, describe(proc)
    assert f"report: {out}" in proc.stdout
    return out


@pytest.fixture(scope="module")
def page(report_file):
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_FLAGS)
        try:
            pg = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            external: list[str] = []
            pg.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
            pg.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))

            def route(r):
                if r.request.url.startswith(("file:", "data:")):
                    r.continue_()
                else:
                    external.append(r.request.url)
                    r.abort()

            pg.route("**/*", route)
            pg.goto(report_file.as_uri())
            pg.wait_for_selector("body[data-ready='1']", timeout=30_000)
            pg.wait_for_load_state("load")
            yield {"page": pg, "errors": errors, "external": external}
        finally:
            browser.close()


def test_report_is_self_contained_and_keeps_no_secret(report_file, report_run):
    html = report_file.read_text(encoding="utf-8")
    # every resource is inline: no external src/href, no stylesheet or script fetched from anywhere
    assert not re.search(r"""(?:src|href)\s*=\s*["'](?:https?:)?//""", html)
    assert "<link" not in html and "@import" not in html and "<script src" not in html
    assert REPORT_KEY not in html and report_run.manifest["llm"]["llm"]["api_key_env"] == "REPORT_KEY"


def test_report_loads_without_errors_or_network(page):
    pg = page["page"]
    assert page["errors"] == []
    assert page["external"] == []
    assert pg.title() == "ragsweep report: report"
    for anchor in SECTIONS:
        assert pg.locator(f"section#{anchor} h2").count() == 1, anchor
        assert pg.locator(f"nav.toc a[href='#{anchor}']").count() == 1, anchor
    # the eight figures are decoded images with a caption
    sizes = pg.eval_on_selector_all("figure img", "els => els.map(e => [e.complete, e.naturalWidth, e.naturalHeight])")
    assert len(sizes) == 8 and all(ok and w > 300 and h > 150 for ok, w, h in sizes), sizes
    assert pg.locator("section#judges figure").count() == 1
    assert pg.locator("section#costs figure").count() == 3  # latency, stage times, LLM spending
    usage = pg.locator("#usage").inner_text()
    assert all(
        w in usage
        for w in ("stage: generation", "judge: correctness", "judge: faithfulness", "judge: relevancy", "total")
    )
    assert pg.locator("#comparisons tbody tr").count() > 0


def column(pg, table: str, header: str) -> list[str]:
    idx = pg.eval_on_selector(
        f"{table} > thead > tr",
        "(tr, h) => Array.from(tr.cells).findIndex(c => c.textContent.replace(/[\\u25B4\\u25BE]/g, '').trim() === h)",
        header,
    )
    assert idx >= 0, f"no column {header!r} in {table}"
    return pg.eval_on_selector_all(
        f"{table} > tbody > tr:not(.detail)",
        "(rows, i) => rows.map(r => r.cells[i].getAttribute('data-v') ?? r.cells[i].textContent.trim())",
        idx,
    )


def test_summary_table_sorts_and_switches_split(page, report_run):
    pg = page["page"]
    table = "#summary-test"
    ids = set(report_run.records["config_id"])
    assert set(column(pg, table, "configuration")) == ids
    header = pg.locator(f"{table} thead th", has_text="nDCG")
    header.click()
    values = [float(v) for v in column(pg, table, "nDCG") if v != ""]
    assert len(values) == len(ids) and values == sorted(values, reverse=True) and values[0] > values[-1]
    assert header.get_attribute("aria-sort") == "descending"
    header.click()
    values = [float(v) for v in column(pg, table, "nDCG") if v != ""]
    assert values == sorted(values) and header.get_attribute("aria-sort") == "ascending"
    pg.locator(f"{table} thead th", has_text="configuration").click()
    names = column(pg, table, "configuration")
    assert names == sorted(names, reverse=True)
    # the CI is shown next to each mean, and the means are those of summary.csv
    full = report_run.extra["summary_by_split"]
    test = full[full["split"] == "test"].set_index("config_id")
    cell = pg.locator(f"{table} tbody tr", has_text=names[0]).locator("td").nth(7).inner_text()
    bs = test.loc[names[0]]
    assert (
        cell == f"{bs['bertscore_f1_rescaled']:.3f} [{bs['bertscore_f1_rescaled_lo']:.3f}, "
        f"{bs['bertscore_f1_rescaled_hi']:.3f}]"
    )
    # split switch: only the chosen split's table is shown
    assert pg.locator("#summary-test").is_visible() and not pg.locator("#summary-validation").is_visible()
    pg.select_option("#split-select", "validation")
    assert pg.locator("#summary-validation").is_visible() and not pg.locator("#summary-test").is_visible()
    pg.select_option("#split-select", "test")
    # the filter box
    pg.fill("#summary-filter", "bm25")
    visible = pg.eval_on_selector_all(
        f"{table} tbody tr", "rows => rows.filter(r => !r.hidden).map(r => r.cells[0].textContent)"
    )
    assert visible and all("bm25" in v for v in visible)
    pg.fill("#summary-filter", "")


def test_explorer_shows_answers_sources_ranks_triplets_and_reasoning(page, report_run):
    pg = page["page"]
    rec = report_run.records
    assert pg.locator("#q-count").inner_text() == "107 of 107 questions"
    # filter by question type
    pg.select_option("#q-type", "out_of_scope")
    n_oos = rec.loc[rec["qtype"] == "out_of_scope", "qid"].nunique()
    assert pg.locator("#q-count").inner_text() == f"{n_oos} of 107 questions"
    pg.locator("#qlist div").first.click()
    assert "(none: out of scope)" in pg.locator("#qdetail").inner_text()
    pg.select_option("#q-type", "")

    # a test question that the graph retrieval found sources for and a judge scored, so every column has content
    kg_found = set(
        rec.loc[(rec["split"] == "test") & (rec["retriever"] == "kg") & (rec["sources"].map(len) > 0), "qid"]
    )
    judged_ok = set(rec.loc[rec["correctness_status"].eq("ok"), "qid"])
    qid = sorted(kg_found & judged_ok)[0]
    pg.fill("#q-search", qid)
    assert pg.locator("#qlist div").count() == 1
    pg.locator("#qlist div").first.click()
    detail = pg.locator("#qdetail")
    q = rec[rec["qid"] == qid].iloc[0]
    assert q["question"] in detail.locator("h3").inner_text()
    assert q["reference_answer"] in detail.inner_text()
    rows = pg.locator("#answers-table > tbody > tr:not(.detail)")
    assert rows.count() == rec.loc[rec["qid"] == qid, "config_id"].nunique()
    # answers sorted by BERTScore, best first
    bs = [float(v) for v in column(pg, "#answers-table", "BERTScore F1 (rescaled)") if v != ""]
    assert bs == sorted(bs, reverse=True)

    kg_id = rec.loc[(rec["qid"] == qid) & (rec["retriever"] == "kg"), "config_id"].iloc[0]
    kg_row = pg.locator(f"#answers-table > tbody > tr[data-config='{kg_id}']")
    kg_row.locator("button.toggle").click()
    kg_detail = kg_row.locator("xpath=following-sibling::tr[1]")
    assert kg_detail.is_visible()
    text = kg_detail.inner_text()
    assert "graph rank" in text and "triplets" in text
    record = rec[(rec["qid"] == qid) & (rec["config_id"] == kg_id)].iloc[0]
    first = record["sources"][0]
    assert first["doc_id"] in text and f"{first['start']}-{first['end']}" in text
    assert str(first["triplets"][0]) in text

    hybrid_id = rec.loc[(rec["qid"] == qid) & (rec["retriever"] == "hybrid-kg"), "config_id"].iloc[0]
    hy_row = pg.locator(f"#answers-table > tbody > tr[data-config='{hybrid_id}']")
    hy_row.locator("button.toggle").click()
    hy_text = hy_row.locator("xpath=following-sibling::tr[1]").inner_text()
    assert "vector rank" in hy_text and "bm25 rank" in hy_text and "graph rank" in hy_text

    judged = rec[(rec["qid"] == qid) & rec["correctness_status"].eq("ok")].iloc[0]
    judged_ids = set(rec.loc[rec["correctness_status"].notna(), "config_id"])
    j_row = pg.locator(f"#answers-table > tbody > tr[data-config='{judged['config_id']}']")
    j_row.locator("button.toggle").click()
    j_text = j_row.locator("xpath=following-sibling::tr[1]").inner_text()
    assert f"correctness: {judged['correctness']:g}" in j_text
    assert judged["correctness_reasoning"] in j_text
    assert "faithfulness:" in j_text and "relevancy:" in j_text
    # a judge column: only the stage-2 configurations were judged; unjudged ones sort last both ways
    header = pg.locator("#answers-table > thead th", has_text="correctness")
    for direction in ("descending", "ascending"):
        header.click()
        assert header.get_attribute("aria-sort") == direction
        scores = column(pg, "#answers-table", "correctness")
        filled = [float(v) for v in scores if v != ""]
        assert filled and scores[: len(filled)] == [v for v in scores if v != ""]  # blanks at the end
        assert len(scores) - len(filled) == rows.count() - len(
            judged_ids & set(rec.loc[rec["qid"] == qid, "config_id"])
        )
    # sorting the answers keeps each detail row under its answer
    pg.locator("#answers-table > thead th", has_text="configuration").click()
    after = pg.locator(f"#answers-table > tbody > tr[data-config='{kg_id}'] + tr.detail")
    assert after.count() == 1 and "graph rank" in after.inner_text()
    pg.fill("#q-search", "")
    assert page["errors"] == []


def test_screenshot_is_not_blank(page, tmp_path):
    from PIL import Image, ImageStat

    pg = page["page"]
    pg.evaluate("window.scrollTo(0, 0)")
    img = Image.open(io.BytesIO(pg.screenshot(full_page=False))).convert("RGB")
    assert img.size == (1400, 1000)
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "the page looks blank"
    stddev = ImageStat.Stat(img.convert("L")).stddev[0]
    assert stddev > 10, f"the page looks blank (grey-level stddev {stddev:.1f})"
    # the figures render as images too (the violins are the largest)
    fig = pg.locator("section#bertscore figure img")
    fig.scroll_into_view_if_needed()
    shot = Image.open(io.BytesIO(fig.screenshot())).convert("L")
    assert ImageStat.Stat(shot).stddev[0] > 10
