"""The metric catalogue (metrics/catalogue.py) is the one place a metric is declared: every metric in it reaches the
records, the summary (with its CI), the labels, the table, the report and the figures, and what may be tuned or
selected on follows its flags."""

from __future__ import annotations

import html
import io
import math

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
    for position in ("table", "compare"):
        placed = [getattr(m, position) for m in CATALOGUE if getattr(m, position) is not None]
        assert sorted(placed) == list(range(len(placed))), f"{position} positions must be 0..n-1"
    for m in ordered("table"):
        assert len(BY_NAME[m].column) <= 9, f"{m}: too wide for the table"
    assert label("no_such_metric") == "no_such_metric"


def test_metric_functions_are_the_catalogue_s():
    from ragsweep.metrics import all_answer_metrics, all_retrieval_metrics
    from ragsweep.pipelines.outputs.columns import RETRIEVAL_METRICS

    assert list(all_retrieval_metrics([("d", 0, 10)], [("d", 0, 5)], 1)) == names("retrieval") == RETRIEVAL_METRICS
    assert list(all_answer_metrics("a", "a")) == names("answer")


def test_direction_and_uses_follow_the_flags():
    from ragsweep.evaluation.verdict import LOWER_IS_BETTER
    from ragsweep.pipelines.outputs.columns import SELECTABLE_METRICS

    assert LOWER_IS_BETTER == {m.name for m in CATALOGUE if not m.higher_is_better}
    assert {"false_abstention_rate", "generation_ms"} <= LOWER_IS_BETTER
    assert SELECTABLE_METRICS == names(selectable=True) and "correctness" not in SELECTABLE_METRICS


def test_tuning_and_selection_accept_exactly_the_declared_metrics(tmp_path):
    import yaml
    from pydantic import ValidationError

    from ragsweep.config import SweepSpec
    from ragsweep.errors import RagsweepError
    from ragsweep.pipelines.preflight import check_llm_settings

    def spec(tune: str, metric: str = "bertscore_f1_rescaled") -> SweepSpec:
        return SweepSpec.model_validate(yaml.safe_load(f"""
name: t
dataset: {{corpus: {{format: demo}}, questions: {{format: demo}}}}
embeddings: [{{kind: sentence_transformers, model: minilm}}]
splitters: [{{kind: sentence, chunk_size: 256, chunk_overlap: 32}}]
retrievers: [{{kind: fusion, weights: tune, tune_metric: {tune}}}]
top_k: [3]
scoring: {{metric: {metric}}}
"""))

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
    for m in CATALOGUE:
        if m.report or m.family == "judge":
            assert html.escape(m.label) in page or m.label in page, f"{m.name}: not in the report"
    assert not math.isnan(summary["correctness"].dropna().iloc[0])
