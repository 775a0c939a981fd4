"""Reference baselines: their contexts (pure), then (work in progress) their rows in a sweep."""

from __future__ import annotations

import pytest

from ragsweep.baselines.contexts import Span, context_spans, document_spans, oracle_spans
from ragsweep.datasets.types import EvidenceSpan

LENGTHS = {"a": 1000, "b": 300, "c": 50}


def test_oracle_is_the_gold_spans_merged_in_document_order_without_copies():
    ev = (
        EvidenceSpan("b", 10, 40),
        EvidenceSpan("a", 100, 200),
        EvidenceSpan("a", 150, 260),  # overlaps the one before: one passage
        EvidenceSpan("c", 0, 20, copy_of=0),  # a copy of b's text elsewhere: the same evidence
        EvidenceSpan("a", 500, 520),
    )
    assert oracle_spans(ev) == [Span("a", 100, 260), Span("a", 500, 520), Span("b", 10, 40)]
    assert context_spans("oracle", ev, LENGTHS.__getitem__) == oracle_spans(ev)


def test_full_documents_in_evidence_order_until_the_budget_is_spent():
    ev = (EvidenceSpan("b", 10, 40), EvidenceSpan("a", 100, 200), EvidenceSpan("b", 50, 60))
    assert document_spans(ev, LENGTHS.__getitem__) == [Span("b", 0, 300), Span("a", 0, 1000)]
    assert document_spans(ev, LENGTHS.__getitem__, 500) == [Span("b", 0, 300), Span("a", 0, 200)]
    assert document_spans(ev, LENGTHS.__getitem__, 300) == [Span("b", 0, 300)]
    assert document_spans((), LENGTHS.__getitem__, 300) == []


def test_no_retrieval_has_no_context_and_unknown_kinds_are_refused():
    assert context_spans("no_retrieval", (EvidenceSpan("a", 0, 5),), LENGTHS.__getitem__) == []
    with pytest.raises(ValueError, match="unknown baseline 'bm25'"):
        context_spans("bm25", (), LENGTHS.__getitem__)


def test_baselines_expand_to_configurations_of_their_own():
    """``baseline-<kind>`` after the grid: its hash is its kind and generator (not the placeholders it carries),
    its labels name no splitter or retriever of the grid."""
    from ragsweep.config import parse_spec
    from ragsweep.pipelines.grid import expand, is_baseline

    data = {
        "splitters": [{"kind": "token", "chunk_size": 64}],
        "retrievers": [{"kind": "bm25"}],
        "top_k": [3, 5],
        "baselines": ["oracle", "no_retrieval"],
    }
    configs = expand(parse_spec(data))
    base = [c for c in configs if is_baseline(c)]
    assert [c.config_id for c in base] == ["baseline-oracle", "baseline-no_retrieval"]
    assert [c.config_id for c in configs if not is_baseline(c)] == ["token64-bm25-k3", "token64-bm25-k5"]
    oracle = base[0]
    assert oracle.labels()["retriever"] == "baseline:oracle" and oracle.labels()["splitter"] is None
    assert oracle.resolved()["baseline"] == "oracle"
    other = expand(parse_spec({**data, "splitters": [{"kind": "sentence"}], "retrievers": [{"kind": "vector"}]}))
    assert next(c for c in other if c.baseline == "oracle").config_hash == oracle.config_hash
    llm = expand(parse_spec({**data, "generator": {"kind": "llm"}, "llm": {"model": "m"}}))
    assert next(c for c in llm if c.baseline == "oracle").config_hash != oracle.config_hash


def test_baseline_rows_on_the_demo():
    """The oracle's context is the gold evidence (retrieval metrics 1 by construction) and its extractive answer
    comes from it; no_retrieval has no source and an empty answer; full_document gives the gold documents."""
    from ragsweep.config import parse_spec
    from ragsweep.datasets.demo import load_demo_corpus, load_demo_questions
    from ragsweep.datasets.types import Dataset
    from ragsweep.pipelines.answer_record import Outlet
    from ragsweep.pipelines.grid import expand
    from ragsweep.pipelines.journal import MemorySink
    from ragsweep.pipelines.stages.baselines import BaselineAnswering, answer_baseline

    docs = load_demo_corpus()
    questions, _ = load_demo_questions(docs)
    dataset = Dataset("demo", docs, questions)
    spec = parse_spec(
        {
            "splitters": [{"kind": "token"}],
            "retrievers": [{"kind": "bm25"}],
            "baselines": ["no_retrieval", "oracle", "full_document"],
        }
    )
    by_kind = {c.baseline: c for c in expand(spec) if c.baseline}
    q = next(q for q in questions if q.evidence)
    sink = MemorySink()
    for kind in ("no_retrieval", "oracle", "full_document"):
        assert answer_baseline(by_kind[kind], q, dataset, Outlet(sink, None), BaselineAnswering(k=5))
    rows = {r[2]: r[3] for r in sink.rows}
    oracle, empty, full = rows["baseline-oracle"], rows["baseline-no_retrieval"], rows["baseline-full_document"]
    assert oracle["hit"] == oracle["mrr"] == oracle["span_recall"] == oracle["span_precision"] == 1.0
    gold = {(e.doc_id, e.start, e.end) for e in q.evidence if e.copy_of is None}
    assert {(s["doc_id"], s["start"], s["end"]) for s in oracle["sources"]} <= gold
    assert oracle["answer"] and oracle["answer"] in " ".join(
        dataset.document(s["doc_id"]).text[s["start"] : s["end"]] for s in oracle["sources"]
    )
    assert empty["sources"] == [] and empty["answer"] == "" and empty["answer_empty"] and empty["hit"] == 0
    assert {s["doc_id"] for s in full["sources"]} == {e.doc_id for e in q.evidence} and full["hit"] == 1.0
    assert all(s["start"] == 0 for s in full["sources"]) and full["span_recall"] == 1.0


def test_a_sweep_scores_its_baselines_and_never_chooses_them(make_spec, run_cli, read_run, seeded_cache, tmp_path):
    """BM25 at two depths beside the three baselines (extractive answers, 12 demo questions): the baselines have
    their rows and summary, the verdict picks among the configurations and says how the pick stands against each
    baseline; a baseline is not exported or asked."""
    import json

    import pandas as pd
    from conftest import describe

    spec = make_spec(
        "baselines",
        splitters=[{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
        retrievers=[{"kind": "bm25"}],
        top_k=[3, 5],
        baselines=["full_document", "no_retrieval", "oracle"],
    )
    proc = run_cli("run", spec.path, "--cache", seeded_cache, "--limit", "12", "--no-progress")
    assert proc.returncode == 0, describe(proc)
    run = read_run(spec.run_dir, proc)
    rec = run.records
    assert set(rec["config_id"]) == {
        "sentence256-bm25-k3",
        "sentence256-bm25-k5",
        "baseline-full_document",
        "baseline-no_retrieval",
        "baseline-oracle",
    }
    oracle = rec[(rec["config_id"] == "baseline-oracle") & (rec["n_gold_spans"] > 0)]
    assert len(oracle) > 0 and (oracle["hit"] == 1).all() and (oracle["span_precision"] == 1).all()
    empty = rec[rec["config_id"] == "baseline-no_retrieval"]
    assert empty["answer_empty"].all() and empty["sources"].map(len).eq(0).all()
    verdict = json.loads((spec.run_dir / "verdict.json").read_text(encoding="utf-8"))
    assert not verdict["chosen"].startswith("baseline-") and verdict["n_configs"] == 2
    assert not any(c.startswith("baseline-") for c in verdict["tied"] + verdict["worse"] + verdict["better"])
    assert [b["baseline"] for b in verdict["baselines"]] == ["no_retrieval", "oracle", "full_document"]
    by = {b["baseline"]: b for b in verdict["baselines"]}
    summary = pd.read_csv(spec.run_dir / "summary.csv").query("split == 'test'").set_index("config_id")
    assert by["oracle"]["mean"] == pytest.approx(summary.loc["baseline-oracle", verdict["metric"]])
    assert by["oracle"]["share"] == pytest.approx(verdict["test_mean"] / by["oracle"]["mean"])
    assert "against the reference baselines (test): no_retrieval" in proc.stdout
    _shown_as_references(run_cli, spec.run_dir, verdict)
    for command in (
        ["export", spec.run_dir, "baseline-oracle", "--out", tmp_path / "x"],
        ["ask", spec.run_dir, "baseline-oracle", "q?"],
    ):
        refused = run_cli(*command)
        assert refused.returncode == 2 and "a reference baseline answers from" in refused.stderr, describe(refused)


BASELINE_IDS = ["baseline-no_retrieval", "baseline-oracle", "baseline-full_document"]


def _shown_as_references(run_cli, run_dir, verdict: dict) -> None:
    """``show`` lists the baselines under a rule after every configuration; the report's table has them in a body
    of their own; the figures draw them as lines, not rows; the heatmap and the significance matrix leave them
    out; MLflow's payload tags them and carries the verdict's reference figures."""
    import re

    from conftest import describe

    from ragsweep.results import load_run
    from ragsweep.results.figures import heatmap, intervals, significance
    from ragsweep.results.figures.style import REFERENCE_COLOUR
    from ragsweep.results.report.tables import summary_table
    from ragsweep.tracking.payload import run_entries

    show = run_cli("show", run_dir)
    assert show.returncode == 0, describe(show)
    lines = show.stdout.splitlines()
    at = {cid: next(i for i, line in enumerate(lines) if f"│{cid} " in line) for cid in BASELINE_IDS}
    configs = [i for i, line in enumerate(lines) if re.search(r"│sentence256-bm25-k\d", line)]
    assert len(configs) == 2 and max(configs) < at[BASELINE_IDS[0]] < at[BASELINE_IDS[1]] < at[BASELINE_IDS[2]]
    assert "├" in lines[at[BASELINE_IDS[0]] - 1]  # the rule between them
    assert "under the rule: reference baselines" in " ".join(show.stdout.split())  # the table's caption

    run = load_run(run_dir)
    html = summary_table(run, "test", verdict["metric"])
    ref_body = html[html.index('<tbody class="reference">') :]
    assert [m.strip() for m in re.findall(r'<td class="id">([^<]+)', ref_body)] == BASELINE_IDS
    assert not any(b in html[: html.index('<tbody class="reference">')] for b in BASELINE_IDS)
    from ragsweep.results.verdict_view import run_verdict, verdict_html

    opening = verdict_html(run_verdict(run))  # the report's verdict: a row per baseline
    table = opening[opening.index("<table id='references'>") :]
    table = table[: table.index("</table>")]
    assert [r.split("</td>")[0] for r in table.split("<tr><td>")[1:]] == ["no_retrieval", "oracle", "full_document"]

    fig = intervals.retrieval_intervals(run)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == verdict_order(run)
    refs = [line for line in ax.get_lines() if line.get_color() == REFERENCE_COLOUR]
    assert sorted(line.get_xdata()[0] for line in refs) == [0.0, 1.0, 1.0]  # no_retrieval, oracle, full documents
    assert "oracle (reference)" in [t.get_text() for t in fig.legends[0].get_texts()]
    assert "baseline" not in " ".join(
        t.get_text() for a in heatmap.splitter_retriever_heatmap(run).axes for t in a.get_xticklabels()
    )
    pairs = significance.pairwise_table(run, verdict["metric"])
    assert not any(c.startswith("baseline-") for c in pairs.attrs["order"])
    import matplotlib.pyplot as plt

    plt.close("all")

    sweep, *configured = run_entries(run, "rid", {})
    entries = {e.name: e for e in configured}
    assert entries["baseline-oracle"].tags["ragsweep.baseline"] == "oracle"
    assert "ragsweep.baseline" not in entries["sentence256-bm25-k3"].tags
    oracle = next(b for b in verdict["baselines"] if b["baseline"] == "oracle")
    assert sweep.metrics["reference/oracle/share"] == pytest.approx(oracle["share"])


def verdict_order(run) -> list[str]:
    """The configurations by nDCG, best first (ties by id), as the forest plot orders them."""
    from ragsweep.results.figures.style import ordered

    return ordered(run.configurations("test"), "ndcg")


def test_bad_baselines_are_refused_in_one_line():
    from ragsweep.config import parse_spec
    from ragsweep.errors import RagsweepError

    base = {"splitters": [{"kind": "token"}], "retrievers": [{"kind": "bm25"}]}
    for extra, says in (
        ({"baselines": ["oracle", "oracle"]}, "each baseline at most once"),
        ({"baselines": ["gold"]}, "baselines"),
    ):
        with pytest.raises(RagsweepError, match=says) as err:
            parse_spec({**base, **extra})
        assert "\n" not in str(err.value)


def test_llm_baselines_over_http_closed_book_gold_and_cut_documents(make_spec, run_cli, read_run, shared_cache):
    """An LLM generator on the scripted server: ``no_retrieval`` asks the question alone (the closed-book prompt,
    no context), the oracle answers from the gold spans, the full documents are cut to the context window's
    budget; stage 2 judges the baselines beside its selection, and the verdict chooses none of them."""
    import json

    from conftest import describe
    from fake_openai import FakeOpenAI

    from ragsweep.baselines.closed_book import CLOSED_BOOK

    rules = [{"kind": "generation", "match": CLOSED_BOOK.strip(), "reply": "Closed-book guess."}]
    with FakeOpenAI(rules=rules, api_key="sk-base") as fake:
        spec = make_spec(
            "baselines-llm",
            splitters=[{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
            retrievers=[{"kind": "bm25"}],
            top_k=[3, 5],
            baselines=["no_retrieval", "oracle", "full_document"],
            generator={"kind": "llm"},
            llm={
                "model": "fake-base",
                "base_url": fake.base_url,
                "api_key_env": "FAKE_KEY",
                "context_window": 1024,
                "max_tokens": 64,
            },
            stage2={"judges": ["correctness", "faithfulness"], "top_n": 1, "max_configs": 1},
        )
        proc = run_cli(
            "run", spec.path, "--cache", shared_cache, "--limit", "12", "--no-progress", env={"FAKE_KEY": "sk-base"}
        )
        by_kind = fake.stats()["by_kind"]
    assert proc.returncode == 0, describe(proc)
    run = read_run(spec.run_dir, proc)
    rec = run.records.set_index("config_id")
    empty = rec.loc["baseline-no_retrieval"]
    assert (empty["answer"] == "Closed-book guess.").all() and empty["sources"].map(len).eq(0).all()
    oracle = rec.loc["baseline-oracle"]
    answered = oracle[oracle["sources"].map(len) > 0]  # a question with gold evidence: one call, a real answer
    assert len(answered) and answered["answer"].str.strip().ne("").all()
    assert not answered["answer"].eq("Closed-book guess.").any() and answered["llm_calls"].eq(1).all()
    budget = (1024 - 64 - 512) * 3  # stages.baselines.context_budget
    full = rec.loc["baseline-full_document"]
    spans = full["sources"].map(lambda s: sum(x["end"] - x["start"] for x in s))
    assert spans.max() == budget and spans.le(budget).all()  # the demo's documents are longer: cut to the budget
    assert all(x["start"] == 0 for s in full["sources"] for x in s)
    judged = run.records[run.records["correctness_status"].notna()]
    assert {"baseline-no_retrieval", "baseline-oracle", "baseline-full_document"} <= set(judged["config_id"])
    nr = judged[judged["config_id"] == "baseline-no_retrieval"]
    assert nr["correctness_status"].eq("ok").any() and nr["faithfulness_status"].eq("unmeasured").all()
    verdict = json.loads((spec.run_dir / "verdict.json").read_text(encoding="utf-8"))
    assert not verdict["chosen"].startswith("baseline-") and len(verdict["baselines"]) == 3
    stage2 = json.loads((spec.run_dir / "manifest.json").read_text(encoding="utf-8"))["stage2"]
    assert not any(s.startswith("baseline-") for s in stage2["selected"]) and len(stage2["selected"]) == 1
    assert stage2["references"] == ["baseline-no_retrieval", "baseline-oracle", "baseline-full_document"]
    said = " ".join(proc.stdout.split())  # the end-of-run table and line name the judged baselines too
    assert "and the reference baselines baseline-no_retrieval, baseline-oracle, baseline-full_document" in said
    calls = run.records.groupby("config_id")["llm_calls"].sum()
    assert calls["baseline-no_retrieval"] == 12 and calls["baseline-oracle"] == len(answered)  # one call each
    # 6 validation + 6 test questions: the selected one and the three baselines (two answers with one prompt: cached)
    assert 12 * 4 - 2 <= by_kind["correctness"] <= 12 * 4


def test_dry_run_counts_the_baselines_answers_and_judgements(tmp_path):
    """With an LLM generator each baseline answers every question (no_retrieval with the question alone) and
    stage 2 judges all three beside its selection, no_retrieval by correctness only (no context to judge
    against); with the extractive generator no_retrieval is not judged (its answers are empty by construction)."""
    from ragsweep.config import parse_spec
    from ragsweep.datasets.load import load_dataset
    from ragsweep.evaluation.split import question_split
    from ragsweep.pipelines.estimate import estimate_run

    data = {
        "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
        "splitters": [{"kind": "token", "chunk_size": 128}],
        "retrievers": [{"kind": "bm25"}],
        "top_k": [3],
        "baselines": ["no_retrieval", "oracle", "full_document"],
        "llm": {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None},
        "stage2": {"judges": ["correctness", "faithfulness"], "top_n": 1},
    }
    spec = parse_spec({**data, "generator": {"kind": "llm"}})
    est = {e.stage: e for e in estimate_run(spec, run_dir=tmp_path / "run", cache_dir=tmp_path / "cache", limit=12)}
    dataset = load_dataset(spec.dataset)
    split = question_split(spec, dataset)
    n_test = sum(split.get(q.qid) in ("validation", "test") for q in dataset.questions[:12])  # stage 2 judges both
    assert est["generation"].calls == 4 * 12  # the configuration and three baselines, a call per question each
    assert est["judge:correctness"].calls == (1 + 3) * n_test
    assert est["judge:faithfulness"].calls == (1 + 2) * n_test
    assert "and the reference baselines no_retrieval, oracle, full_document" in est["judge:correctness"].notes[0]
    extractive = parse_spec({**data, "generator": {"kind": "extractive"}})
    est = {
        e.stage: e for e in estimate_run(extractive, run_dir=tmp_path / "r2", cache_dir=tmp_path / "cache", limit=12)
    }
    assert est["judge:correctness"].calls == (1 + 2) * n_test and "generation" not in est
