"""Looking at runs: ``ragsweep.load_run``, ``ragsweep plot``, ``ragsweep compare`` and what they say about
run directories that are missing, killed or written by another version.

The runs are real sweeps: ``report_run`` (all 107 demo questions, every retriever kind, LLM answers and
judges from the scripted server) and ``base_run`` (the reference sweep), plus a variant of the reference
sweep with another generator setting for ``compare``.
"""

from __future__ import annotations

import json
import platform
import shutil
import struct
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from conftest import BASE_LIMIT, describe

from ragsweep.errors import RagsweepError
from ragsweep.evaluation.test_options import TestOptions
from ragsweep.results import load_run


def one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """The command failed with exit 2 and one line on stderr containing every needle."""
    assert proc.returncode == 2, describe(proc)
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), describe(proc)
    for n in needles:
        assert n in lines[0], f"{n!r} not in {lines[0]!r}"
    return lines[0]


def copy_run(run_dir, tmp_path, name="copy"):
    dest = tmp_path / name
    shutil.copytree(run_dir, dest)
    return dest


def edit_manifest(run_dir, **changes) -> None:
    path = run_dir / "manifest.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta.update(changes)
    path.write_text(json.dumps(meta), encoding="utf-8")


# --------------------------------------------------------------------------- load_run
def test_load_run_gives_dataframes_of_a_finished_run(report_run):
    run = load_run(report_run.run_dir)
    assert run.status == "complete" and run.complete and run.notes == []
    m = report_run.manifest
    assert len(run.records) == m["expected_records"] == 5 * 107
    pd.testing.assert_frame_equal(run.records.drop(columns=["sources"]), report_run.records.drop(columns=["sources"]))
    assert set(run.summary["split"]) == {"test", "validation", "all"}
    # manifest: one row per configuration, labels and resolved settings flattened
    assert list(run.manifest["config_id"]) == [c["config_id"] for c in m["configurations"]]
    assert {"splitter", "retriever", "top_k", "retriever.kind", "splitter.chunk_size"} <= set(run.manifest.columns)
    assert set(run.manifest["retriever.kind"]) == {"bm25", "vector", "fusion", "knowledge_graph", "hybrid_kg"}
    # questions: all 107 with their split and gold spans; out-of-scope and negative ones have none
    q = run.questions
    assert len(q) == 107 and set(q["qtype"]) == {
        "simple",
        "paraphrase",
        "disambiguation",
        "complex",
        "multi_hop",
        "comparative",
        "out_of_scope",
        "negative-irrelevant",
        "negative-jailbreak",
        "negative-unsafe",
    }
    assert set(q["split"]) == {"test", "validation"}
    unanswerable = q["qtype"].eq("out_of_scope") | q["qtype"].str.startswith("negative-")
    assert (q.loc[unanswerable, "evidence"].map(len) == 0).all()
    assert (q.loc[~unanswerable, "evidence"].map(len) > 0).all()
    assert run.judges == ["correctness", "correctness_pass", "faithfulness", "relevancy"]
    assert not run.comparisons.empty
    inv = run.invocations
    assert len(inv) == 1 and inv["timings_s.total"].iloc[0] > 0


def test_sources_gold_flag_agrees_with_the_hit_metric(report_run):
    """Independent check of the gold-overlap rule: a record has hit@k = 1 exactly when one of its sources
    overlaps a gold span (the records' metric was computed by the sweep, the flag by load_run)."""
    run = load_run(report_run.run_dir)
    src = run.sources()
    assert {"config_id", "qid", "rank", "doc_id", "start", "end", "score", "gold"} <= set(src.columns)
    assert len(src) == sum(len(s) for s in report_run.records["sources"])
    any_gold = src.groupby(["config_id", "qid"])["gold"].any()
    rec = run.records.set_index(["config_id", "qid"])
    scored = rec["hit"].notna()
    joined = any_gold.reindex(rec.index[scored], fill_value=False)
    assert (joined.astype(float).to_numpy() == rec.loc[scored, "hit"].to_numpy()).all()
    # knowledge-graph sources carry their triplets and graph rank
    retriever = run.manifest.set_index("config_id")["retriever"]
    kg = src[src["config_id"].map(retriever).eq("kg")]
    assert len(kg) and kg["triplets"].map(lambda t: t is not None and len(t) > 0).all()
    hybrid = src[src["config_id"].map(retriever).eq("hybrid-kg")]
    assert hybrid["rank_graph"].notna().any() and hybrid["rank_vector"].notna().any()


def test_running_run_is_rebuilt_from_its_journal_exactly(report_run, tmp_path):
    """A run whose sweep has not written results (status "running") is read from the journal by the same
    builder: with every row journaled it equals the records the sweep wrote. A live pid on this host is
    "running", a dead one "killed"."""
    d = copy_run(report_run.run_dir, tmp_path)
    for f in ("records.parquet", "summary.csv", "comparisons.csv"):
        (d / f).unlink()
    meta = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    sweep = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "ragsweep", "run"])
    try:
        edit_manifest(
            d,
            status="running",
            running={"pid": sweep.pid, "host": platform.node(), "started_at": "2026-01-01T00:00:00+00:00"},
        )
        live = load_run(d)
    finally:
        sweep.kill()
        sweep.wait()
    assert live.status == "running" and any("still running" in n for n in live.notes)
    cols = [c for c in report_run.records.columns if c != "sources"]
    got = live.records[cols].sort_values(["config_id", "qid"]).reset_index(drop=True)
    want = report_run.records[cols].sort_values(["config_id", "qid"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)
    full = report_run.extra["summary_by_split"]
    metric = "bertscore_f1_rescaled"
    mine = live.summary.set_index(["config_id", "split"])[metric].sort_index()
    theirs = full.set_index(["config_id", "split"])[metric].sort_index()
    assert mine.to_numpy() == pytest.approx(theirs.to_numpy())

    dead = subprocess.Popen(["true"])
    dead.wait()
    edit_manifest(d, running={"pid": dead.pid, "host": platform.node(), "started_at": meta["written_at"]})
    assert load_run(d).status == "killed"
    # the pid reused by another program after the kill: still killed
    other = subprocess.Popen(["sleep", "60"])
    try:
        edit_manifest(d, running={"pid": other.pid, "host": platform.node(), "started_at": meta["written_at"]})
        assert load_run(d).status == "killed"
    finally:
        other.kill()
        other.wait()
    # started on another machine: this one cannot tell
    edit_manifest(d, running={"pid": 1, "host": "elsewhere.example", "started_at": meta["written_at"]})
    other_host = load_run(d)
    assert other_host.status == "unfinished" and any("elsewhere.example" in n for n in other_host.notes)
    # a damaged journal is one line, not a traceback
    (d / "journal.sqlite").write_bytes(b"not a database")
    for f in ("journal.sqlite-wal", "journal.sqlite-shm"):
        (d / f).unlink(missing_ok=True)
    with pytest.raises(RagsweepError, match="journal.sqlite: unreadable"):
        load_run(d)


def test_report_of_a_run_with_a_failed_row_and_no_answer(report_run, tmp_path):
    """A failed row has no answer (NaN in pandas): the report still builds, with the failure shown, and
    its data block is valid JSON (no NaN)."""
    from ragsweep.results.report.build import build_report
    from ragsweep.results.report.explorer import explorer_data

    run = load_run(report_run.run_dir)
    i = run.records.index[0]
    run.records.loc[i, ["answer", "bertscore_f1_rescaled"]] = [float("nan"), float("nan")]
    run.records.loc[i, "error"] = "RuntimeError: <b>boom</b>"
    data = explorer_data(run)
    row = next(r for r in data["answers"][run.records.loc[i, "qid"]] if r["error"])
    bertscore = [m["name"] for m in data["metrics"]].index("bertscore_f1_rescaled")
    assert row["answer"] is None and row["scores"][bertscore] is None
    json.dumps(data, allow_nan=False)
    page = build_report(run)
    assert "RuntimeError: \\u003cb>boom\\u003c/b>" in page and "<b>boom</b>" not in page


@pytest.mark.parametrize(
    "case", ["missing", "file", "empty_dir", "journal_only", "bad_json", "old_format", "future_format", "no_records"]
)
def test_unreadable_run_directories_get_one_clear_line(case, report_run, tmp_path, run_cli):
    target = tmp_path / "run"
    expect = {
        "missing": "no such run directory",
        "file": "not a directory",
        "empty_dir": "not a ragsweep run",
        "journal_only": "has a journal but no manifest.json",
        "bad_json": "not valid JSON",
        "old_format": "written by an older ragsweep (run format 1",
        "future_format": "newer ragsweep",
        "no_records": "records.parquet: missing",
    }[case]
    if case == "file":
        target.write_text("x")
    elif case == "empty_dir":
        target.mkdir()
    elif case == "journal_only":
        target.mkdir()
        shutil.copy(report_run.run_dir / "journal.sqlite", target / "journal.sqlite")
    elif case != "missing":
        copy_run(report_run.run_dir, tmp_path, "run")
        if case == "bad_json":
            (target / "manifest.json").write_text("{not json", encoding="utf-8")
        elif case == "old_format":
            edit_manifest(target, format_version=1)
        elif case == "future_format":
            edit_manifest(target, format_version=99)
        elif case == "no_records":
            (target / "records.parquet").unlink()
    with pytest.raises(RagsweepError) as err:
        load_run(target)
    assert expect in str(err.value) and "\n" not in str(err.value)
    if case in ("old_format", "journal_only", "no_records"):
        assert "ragsweep run SPEC" in str(err.value)  # the fix
    for cmd in (
        ["show", target],
        ["report", target],
        ["plot", target, "--out", tmp_path / "p"],
        ["compare", target, report_run.run_dir],
    ):
        one_line_error(run_cli(*cmd), expect)


# --------------------------------------------------------------------------- plot
def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def test_plot_exports_every_figure_in_each_format(report_run, run_cli, tmp_path):
    names = {
        "bertscore_violins",
        "retrieval_metrics",
        "judge_scores",
        "heatmap",
        "significance",
        "latency",
        "stage_times",
        "llm_spending",
    }
    ids = set(report_run.records["config_id"])
    out = tmp_path / "figures"
    proc = run_cli("plot", report_run.run_dir, "--format", "png, svg,pdf,png", "--out", out)  # each drawn once
    assert proc.returncode == 0, describe(proc)
    assert sorted(p.suffix for p in out.iterdir()) == sorted([".png", ".svg", ".pdf"] * len(names))
    for fmt in ("png", "svg", "pdf"):
        files = {p.stem: p for p in out.glob(f"*.{fmt}")}
        assert set(files) == names
        for p in files.values():
            if fmt == "png":
                w, h = png_size(p)
                assert w >= 600 and h >= 300, (p.name, w, h)
            elif fmt == "pdf":
                assert p.read_bytes()[:5] == b"%PDF-"
            else:  # text stays text in SVG: axis labels and configuration names are legible and searchable
                svg = p.read_text(encoding="utf-8")
                assert svg.lstrip().startswith(("<?xml", "<svg"))
        if fmt == "svg":
            violins = files["bertscore_violins"].read_text(encoding="utf-8")
            assert "BERTScore F1 (rescaled)" in violins and all(i in violins for i in ids)
            assert "retriever" in violins  # the legend
            assert "nDCG@k" in files["retrieval_metrics"].read_text(encoding="utf-8")
            assert "median latency per question (ms)" in files["latency"].read_text(encoding="utf-8")
            assert "USD" in files["llm_spending"].read_text(encoding="utf-8")
            assert "correctness (1-5)" in files["judge_scores"].read_text(encoding="utf-8")


def test_report_refuses_bad_options(report_run, run_cli, tmp_path):
    one_line_error(run_cli("report", report_run.run_dir, "--out", tmp_path), "is a directory", "report.html")
    (tmp_path / "f").write_text("x")
    one_line_error(run_cli("report", report_run.run_dir, "--out", tmp_path / "f" / "r.html"), "cannot write")
    one_line_error(run_cli("report", report_run.run_dir, "--metric", "bleu"), "--metric")
    assert not list(tmp_path.glob("*.tmp"))


def test_a_split_without_questions_is_refused(base_run, make_spec, shared_cache, run_cli, tmp_path):
    """--limit 1 keeps one question, a validation one: figures on the test split would be empty."""
    spec = make_spec("one-question", retrievers=[{"kind": "bm25"}], top_k=[3])
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", 1)
    assert proc.returncode == 0, describe(proc)
    run = load_run(spec.run_dir)
    assert set(run.records["split"]) == {"validation"}
    for cmd in (["report", spec.run_dir], ["plot", spec.run_dir, "--out", tmp_path], ["show", spec.run_dir]):
        one_line_error(run_cli(*cmd), "no test questions", "validation, all")
    assert run_cli("report", spec.run_dir, "--split", "all").returncode == 0


def test_plot_refuses_bad_options(report_run, run_cli, tmp_path):
    one_line_error(run_cli("plot", report_run.run_dir, "--format", "jpg", "--out", tmp_path), "--format", "png")
    one_line_error(run_cli("plot", report_run.run_dir, "--format", "png,jpg", "--out", tmp_path), "'jpg'", "pdf")
    one_line_error(run_cli("plot", report_run.run_dir, "--metric", "bleu", "--out", tmp_path), "--metric", "ndcg")
    one_line_error(run_cli("plot", report_run.run_dir, "--split", "train", "--out", tmp_path), "--split")
    (tmp_path / "f").write_text("x")
    one_line_error(run_cli("plot", report_run.run_dir, "--out", tmp_path / "f"), "is a file")


def test_significance_matrix_cells_are_the_pairwise_tests(report_run):
    """The matrix figure draws ``pairwise_table``: its p-values are the paired tests of the records (the
    family is every pair), Holm-adjusted over all pairs."""
    from ragsweep.evaluation.paired_tests import paired_test
    from ragsweep.evaluation.significance import holm
    from ragsweep.results.figures.significance import pairwise_table

    run = load_run(report_run.run_dir)
    pairs = pairwise_table(run, "bertscore_f1_rescaled", "test")
    n = run.records["config_id"].nunique()
    assert len(pairs) == n * (n - 1) // 2
    test = run.records[run.records["split"] == "test"].pivot(
        index="qid", columns="config_id", values="bertscore_f1_rescaled"
    )
    raw = [
        paired_test(test[r.a], test[r.b], family_size=len(pairs), tests=TestOptions(seed=run.meta["seed"])).p_value
        for r in pairs.itertuples()
    ]
    assert pairs["p_value"].tolist() == pytest.approx(raw)
    assert pairs["p_holm"].tolist() == pytest.approx(holm(raw))
    assert pairs["diff"].tolist() == pytest.approx([(test[r.a] - test[r.b]).mean() for r in pairs.itertuples()])
    assert (pairs["mean_a"] >= pairs["mean_b"]).all()  # a ranked above b


# --------------------------------------------------------------------------- compare
@pytest.fixture(scope="module")
def one_sentence_run(base_run, make_spec, shared_cache, run_cli):
    """The reference sweep with one-sentence extractive answers: same retrieval, other answers."""
    spec = make_spec("one-sentence", generator={"kind": "extractive", "max_sentences": 1})
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", BASE_LIMIT)
    assert proc.returncode == 0, describe(proc)
    return spec.run_dir


def test_compare_pairs_questions_and_tests_each_configuration(base_run, one_sentence_run, run_cli, tmp_path):
    from ragsweep.evaluation.paired_tests import paired_test
    from ragsweep.evaluation.significance import holm, paired_difference
    from ragsweep.results.compare import compare_runs

    a, b = load_run(base_run.run_dir), load_run(one_sentence_run)
    result = compare_runs(a, b, split="test")
    t = result.table
    ids = sorted(set(a.records["config_id"]))
    assert sorted(t["config_id"].unique()) == ids and result.only_a == result.only_b == []
    assert set(t["metric"]) == {"bertscore_f1_rescaled", "ndcg", "hit", "mrr", "span_recall"}
    n_test = int((a.questions.set_index("qid").loc[a.records["qid"].unique(), "split"] == "test").sum())
    assert result.questions_paired == n_test and t["paired"].all()
    # the generator changed, so every configuration hash changed, and the runs say so
    assert not t["same_settings"].any() and any("different settings" in n for n in result.notes)
    # retrieval did not change: zero differences, p = 1
    retr = t[t["metric"] != "bertscore_f1_rescaled"]
    assert (retr["diff"] == 0).all() and (retr["p_value"] == 1).all()
    # BERTScore: recomputed independently from the two record tables
    bs = t[t["metric"] == "bertscore_f1_rescaled"].set_index("config_id")
    assert (bs["diff"] != 0).any()
    raw = []
    for cid in ids:

        def values(run):
            r = run.records
            r = r[(r["config_id"] == cid) & (r["split"] == "test")].set_index("qid")["bertscore_f1_rescaled"]
            return r.sort_index().to_numpy(float)

        x, y = values(b), values(a)
        pair = paired_difference(x, y)
        assert bs.loc[cid, "diff"] == pytest.approx(pair.diff) == pytest.approx(np.nanmean(x - y))
        assert (bs.loc[cid, "diff_lo"], bs.loc[cid, "diff_hi"]) == pytest.approx((pair.diff_lo, pair.diff_hi))
        raw.append(paired_test(x, y, family_size=len(ids)).p_value)
    assert bs.loc[ids, "p_value"].tolist() == pytest.approx(raw)
    assert bs.loc[ids, "p_holm"].tolist() == pytest.approx(holm(raw))

    # the command line: a table, the notes, and the full table as CSV
    proc = run_cli("compare", base_run.run_dir, one_sentence_run, "--csv", tmp_path / "cmp.csv")
    assert proc.returncode == 0, describe(proc)
    assert f"{len(ids)} configuration(s) in both" in proc.stdout and "B - A" in proc.stdout
    assert "sentence256-minilm-vector-k3 (changed)" in proc.stdout
    csv = pd.read_csv(tmp_path / "cmp.csv")
    assert len(csv) == len(t) and list(csv.columns) == list(t.columns)


def test_compare_without_common_questions_is_unpaired_and_says_so(base_run):
    from ragsweep.results.compare import compare_runs

    a = load_run(base_run.run_dir)
    b = load_run(base_run.run_dir)
    b.records["qid"] = "other-" + b.records["qid"]
    result = compare_runs(a, b, metrics=["ndcg"])
    assert not result.table["paired"].any() and result.table["p_value"].isna().all()
    assert any("unpaired" in n for n in result.notes)
    assert (result.table["diff"].abs() < 1e-12).all()  # same values, other qids


def test_compare_refuses_what_it_cannot_compare(base_run, report_run, run_cli):
    # no shared configuration ids (other splitters)
    one_line_error(run_cli("compare", base_run.run_dir, report_run.run_dir), "share no configuration")
    one_line_error(
        run_cli("compare", base_run.run_dir, base_run.run_dir, "--metric", "correctness"),
        "--metric",
        "not measured in both runs",
    )
    one_line_error(run_cli("compare", base_run.run_dir, base_run.run_dir, "--split", "dev"), "--split")
    one_line_error(
        run_cli("compare", base_run.run_dir, base_run.run_dir, "--csv", "/proc/x/y.csv"), "--csv", "cannot write"
    )


# --------------------------------------------------------------------------- stage-2 judges: unmeasured
def test_a_judge_whose_every_reply_is_unparseable_is_not_shown_as_not_judged(
    make_spec, shared_cache, run_cli, tmp_path
):
    """The faithfulness judge's replies cannot be parsed: show and the report say n/a with the unmeasured count
    and an example reason, not "-" (which reads as "not judged")."""
    from conftest import SENTENCE256
    from fake_openai import DEFAULT_MALFORMED_REPLY, FakeOpenAI

    with FakeOpenAI(rules=[{"kind": "faithfulness", "action": "malformed"}]) as fake:
        spec = make_spec(
            "unparseable-judge",
            splitters=[SENTENCE256],
            retrievers=[{"kind": "bm25"}],
            top_k=[3, 5, 8],
            generator={"kind": "llm"},
            stage2={"top_n": 2, "max_configs": 2},
            llm={"model": "unparseable-judge", "base_url": fake.base_url, "api_key_env": None},
        )
        proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", BASE_LIMIT, timeout=300)
    assert proc.returncode == 0, describe(proc)
    run = load_run(spec.run_dir)
    test = run.records[run.records["split"] == "test"]
    n = int(test.groupby("config_id")["faithfulness_status"].apply(lambda s: s.eq("unmeasured").sum()).max())
    assert n > 0 and test["faithfulness"].isna().all() and test["correctness"].notna().any()
    reason = f"reply does not start with YES or NO: {DEFAULT_MALFORMED_REPLY!r}"
    # the table the sweep prints at its end says so too
    judged_rows = [ln for ln in proc.stdout.splitlines() if "sentence256-bm25-k" in ln and "n/a (" in ln]
    assert len(judged_rows) == 2 and all(f"n/a ({n} unmeasured)" in ln for ln in judged_rows), proc.stdout

    shown = run_cli("show", spec.run_dir)
    assert shown.returncode == 0, describe(shown)
    cells = [ln for ln in shown.stdout.splitlines() if "sentence256-bm25-k" in ln and "n/a" in ln]
    assert len(cells) == 2 and all(f"n/a ({n} unmeasured)" in ln for ln in cells), shown.stdout
    made = int(run.records["faithfulness_status"].notna().sum())  # validation and test: both are judged
    assert made == 4 * n and f"faithfulness: {made}/{made} judgements unmeasured, 0 failed; e.g. " in shown.stdout
    assert f"(unmeasured): {reason}" in shown.stdout
    assert "correctness: 0/" in shown.stdout

    rep = run_cli("report", spec.run_dir, "--out", tmp_path / "r.html")
    assert rep.returncode == 0, describe(rep)
    page = (tmp_path / "r.html").read_text()
    assert f"n/a ({n} unmeasured)" in page and 'id="judge-unmeasured"' in page
    assert "not judged" in page  # the configuration stage 2 did not select, in the summary table
    assert html_escape(reason) in page


def html_escape(text: str) -> str:
    import html

    return html.escape(text)
