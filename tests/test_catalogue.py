"""The metric catalogue (metrics/catalogue.py) is the one place a metric is declared: every metric in it reaches the
records, the summary (with its CI), the labels, the table, the report and the figures, and what may be tuned or
selected on follows its flags."""

from __future__ import annotations

import html
import io
import math
import re

import pytest

from ragsweep.metrics.catalogue import BY_NAME, CATALOGUE, label, names, ordered


def test_declarations_are_consistent():
    assert len(BY_NAME) == len(CATALOGUE)
    labels = [m.label for m in CATALOGUE]
    assert len(set(labels)) == len(labels), "two metrics would print alike"
    shorts = [m.column for m in CATALOGUE]
    assert len(set(shorts)) == len(shorts)
    for m in CATALOGUE:
        assert m.label and m.label != m.name or m.name in ("hit",), f"{m.name}: no readable label"
        assert (m.fn is not None) == (m.family in ("answer", "retrieval")), m.name
        assert not m.tunable or m.family == "retrieval", m.name
        assert (m.judge is not None) == (m.family == "judge"), m.name
        assert not (m.selectable and m.family in ("latency", "degenerate", "judge")), m.name
    for position in ("table", "compare", "report"):
        placed = [getattr(m, position) for m in CATALOGUE if getattr(m, position) is not None]
        assert sorted(placed) == list(range(len(placed))), f"{position} positions must be 0..n-1"
    for m in ordered("table"):
        assert len(BY_NAME[m].column) <= 9, f"{m}: too wide for the table"
    assert label("no_such_metric") == "no_such_metric"


_RETRIEVAL = ["hit", "mrr", "ndcg", "span_recall", "span_precision", "doc_mrr"]
_BERTSCORE = [
    "bertscore_p",
    "bertscore_r",
    "bertscore_f1",
    "bertscore_p_rescaled",
    "bertscore_r_rescaled",
    "bertscore_f1_rescaled",
]
_ANSWER = ["answer_contains", "exact_match", "token_f1"]
_ABSTENTION = ["abstention_rate", "false_abstention_rate"]


def test_derived_lists_keep_their_order():
    """The orders files and screens were written in before the catalogue (summary.csv's columns above all: a
    summary written earlier must still compare column for column)."""
    from ragsweep.evaluation.verdict import LOWER_IS_BETTER
    from ragsweep.pipelines.outputs import columns

    assert columns.SUMMARY_METRICS == (
        _BERTSCORE
        + _ANSWER
        + _RETRIEVAL
        + ["retrieval_ms", "query_embedding_ms", "rerank_ms", "postprocess_ms", "generation_ms"]
        + _ABSTENTION
        + ["quip", "echoed_prompt", "copied_context", "looped"]
    )
    assert columns.SELECTABLE_METRICS == _BERTSCORE + _ANSWER + _RETRIEVAL + _ABSTENTION + ["quip"]
    assert columns.TABLE_METRICS == [
        "bertscore_f1_rescaled",
        "hit",
        "answer_contains",
        "mrr",
        "ndcg",
        "span_recall",
        "span_precision",
        *_ABSTENTION,
    ]
    assert columns.JUDGE_METRICS == ["correctness", "correctness_pass", "faithfulness", "relevancy"]
    assert ordered("report") == (
        ["bertscore_f1_rescaled", "bertscore_p_rescaled", "bertscore_r_rescaled"] + _ANSWER + _RETRIEVAL + _ABSTENTION
    )
    assert ordered("compare") == [
        "bertscore_f1_rescaled",
        "ndcg",
        "hit",
        "mrr",
        "span_recall",
        "correctness",
        "correctness_pass",
        "faithfulness",
        "relevancy",
    ]
    assert names(tunable=True) == _RETRIEVAL
    assert LOWER_IS_BETTER == {
        "retrieval_ms",
        "query_embedding_ms",
        "rerank_ms",
        "postprocess_ms",
        "generation_ms",
        "false_abstention_rate",
        "echoed_prompt",
        "copied_context",
        "looped",
    }


def test_metric_functions_are_the_catalogue_s():
    from ragsweep.metrics import all_answer_metrics, all_retrieval_metrics

    assert list(all_retrieval_metrics([("d", 0, 10)], [("d", 0, 5)], 1)) == _RETRIEVAL
    assert list(all_answer_metrics("a", "a")) == _ANSWER


def test_tables_and_figures_put_the_best_first_in_the_metric_s_direction():
    import pandas as pd

    from ragsweep.results.figures.style import ordered as best_first

    summary = pd.DataFrame(
        {"config_id": ["a", "b", "c"], "hit": [0.2, 0.9, None], "false_abstention_rate": [0.2, 0.9, None]}
    )
    assert best_first(summary, "hit") == ["b", "a", "c"]
    assert best_first(summary, "false_abstention_rate") == ["a", "b", "c"]


def test_tuning_and_selection_accept_exactly_the_declared_metrics(tmp_path):
    import yaml
    from pydantic import ValidationError

    from ragsweep.config import SweepSpec
    from ragsweep.errors import RagsweepError
    from ragsweep.pipelines.preflight import check_llm_settings

    def spec(tune: str, metric: str = "bertscore_f1_rescaled") -> SweepSpec:
        return SweepSpec.model_validate(
            yaml.safe_load(f"""
name: t
dataset: {{corpus: {{format: demo}}, questions: {{format: demo}}}}
embeddings: [{{kind: sentence_transformers, model: minilm}}]
splitters: [{{kind: sentence, chunk_size: 256, chunk_overlap: 32}}]
retrievers: [{{kind: fusion, weights: tune, tune_metric: {tune}}}]
top_k: [3]
scoring: {{metric: {metric}}}
""")
        )

    for m in names(tunable=True):
        assert spec(m).retrievers[0].tune_metric == m
    with pytest.raises(ValidationError):
        spec("bertscore_f1")
    for m in names(selectable=True):
        check_llm_settings(spec("ndcg", m))
    for m in names("judge") + names("latency"):
        with pytest.raises(RagsweepError, match="scoring.metric: unknown metric"):
            check_llm_settings(spec("ndcg", m))


def test_every_metric_reaches_records_summary_table_report_and_figures(report_run):
    """The report run (LLM answers, stage-2 judges, every retriever kind) carries every metric of the catalogue."""
    import pandas as pd
    from rich.console import Console

    from ragsweep.pipelines.outputs.table import print_summary
    from ragsweep.results.figures.style import metric_name
    from ragsweep.results.report.build import build_report
    from ragsweep.results.run import load_run

    records = report_run.records
    summary = pd.read_csv(report_run.run_dir / "summary.csv")
    for m in CATALOGUE:
        assert m.name in records.columns, f"{m.name}: not a record column"
        if m.name not in ("rerank_ms", "postprocess_ms"):  # no reranker or postprocessor in this run
            assert records[m.name].notna().any(), f"{m.name}: never measured"
        for col in (m.name, f"{m.name}_lo", f"{m.name}_hi"):
            assert col in summary.columns, f"{col}: not a summary column"
        assert metric_name(m.name) == m.axis and ("@k" in m.axis) == m.per_k

    out = io.StringIO()
    print_summary(summary[summary["split"] == "test"], Console(file=out, width=400), metrics=ordered("table"))
    for m in ordered("table"):
        assert f" {BY_NAME[m].column} " in out.getvalue() or f"{BY_NAME[m].column}\n" in out.getvalue(), m

    page = build_report(load_run(report_run.run_dir))
    heads = re.findall(r'<th class="num">([^<]*)</th>', page)
    for m in CATALOGUE:
        if m.report is not None or m.family == "judge":
            assert html.escape(m.label) in heads, f"{m.name}: not a column of the report's summary table"
    assert not math.isnan(summary["correctness"].dropna().iloc[0])
