"""Short-answer metrics (containment, exact match, token F1) against hand-computed SQuAD values, and their
columns in records.parquet and summary.csv."""

from __future__ import annotations

import math
import re
import string

import pandas as pd
import pytest

from ragsweep.metrics import (
    ANSWER_FUNCTIONS,
    all_answer_metrics,
    answer_contains,
    exact_match,
    normalize_answer,
    token_f1,
)
from ragsweep.pipelines.outputs import columns

METRICS = (answer_contains, exact_match, token_f1)


def squad_v11_normalize(s: str) -> str:
    """``normalize_answer`` of the official SQuAD v1.1 evaluation script, verbatim."""

    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


# --- normalisation -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "The Cat's  hat!",
        "An apple a day, keeps (the) doctor away.",
        "  THEORY of  a-n  ",
        "Denver Broncos",
        "it's 10:30 p.m. -- $5",
        "the",
        "",
        "anthem, theatre, a.m.",
    ],
)
def test_ascii_text_normalises_exactly_as_the_squad_script(text):
    assert normalize_answer(text) == squad_v11_normalize(text)


def test_normalisation_by_hand():
    assert normalize_answer("The Cat's  hat!") == "cats hat"  # case, punctuation deleted, article, spaces
    assert normalize_answer("Theatre and another anthem") == "theatre and another anthem"  # whole words only
    assert normalize_answer(" A\tb\n  AN c ") == "b c"
    assert normalize_answer(None) == ""


def test_unicode_punctuation_and_compatibility_forms():
    # curly quotes, dashes and the ellipsis are punctuation, as their ASCII forms are for SQuAD
    assert normalize_answer("“Don’t” — stop…") == normalize_answer('"Don\'t" - stop...') == "dont stop"
    assert normalize_answer("well–known «the» ¿what?") == "wellknown what"
    # NFKC first: ligatures, full-width letters and no-break spaces become their plain forms
    assert normalize_answer("ﬁve\u00a0ＤＡＹＳ") == "five days"


# --- the metrics ---------------------------------------------------------------------------


def test_containment_is_on_token_boundaries():
    assert answer_contains("The period is 10 days long.", "10 days") == 1.0
    assert answer_contains("It lasts 110 days.", "10 days") == 0.0
    assert answer_contains("It lasts 10 daysish.", "10 days") == 0.0
    assert answer_contains("Cats are fine", "cat") == 0.0
    assert answer_contains("days 10", "10 days") == 0.0  # a contiguous run, in order
    assert answer_contains("Within “72 hours”, said the Controller.", "72 hours") == 1.0
    assert answer_contains("Paris", "The city of Paris") == 0.0  # the answer must hold all of the reference


def test_exact_match():
    assert exact_match("The Eiffel Tower.", "eiffel tower") == 1.0
    assert exact_match("Eiffel Tower in Paris", "Eiffel Tower") == 0.0
    assert exact_match("an apple", "The apple!") == 1.0


def test_token_f1_by_hand():
    # pred [cat, sat, on, mat], gold [cat, on, mat]: 3 shared, P = 3/4, R = 1, F1 = 6/7
    assert token_f1("the cat sat on the mat", "a cat on a mat") == pytest.approx(6 / 7)
    # a bag of tokens: a repeated token is shared only as often as the gold has it: P = 1/2, R = 1
    assert token_f1("Paris Paris", "Paris") == pytest.approx(2 / 3)
    # pred [broncos, won], gold [denver, broncos]: P = R = 1/2
    assert token_f1("The Broncos won", "Denver Broncos") == pytest.approx(0.5)
    assert token_f1("nothing shared", "Denver Broncos") == 0.0
    assert token_f1("Denver Broncos", "denver broncos.") == 1.0


def test_several_references_take_the_best_as_squad_does():
    refs = ["Denver Broncos", "Carolina Panthers", "the Broncos"]
    assert exact_match("Broncos", refs) == 1.0  # "the Broncos" normalises to "broncos"
    assert answer_contains("the Broncos won", ["Denver Broncos", "Broncos"]) == 1.0
    assert answer_contains("the Broncos won", ["Denver Broncos"]) == 0.0
    assert token_f1("The Broncos won", ["Carolina", "Denver Broncos"]) == pytest.approx(0.5)
    # a reference that normalises to nothing, or is missing, is skipped; a generator is read once for all metrics
    assert all_answer_metrics("Denver", iter(["the", None, "Denver"])) == {
        "answer_contains": 1.0,
        "exact_match": 1.0,
        "token_f1": 1.0,
    }


@pytest.mark.parametrize("refs", [None, "", "   ", "The.", "“…”", [], ["a", "", None], float("nan")])
def test_undefined_without_a_reference(refs):
    for fn in METRICS:
        assert math.isnan(fn("some answer", refs))


@pytest.mark.parametrize("answer", [None, "", "  ", "The!"])
def test_an_empty_answer_scores_zero(answer):
    for fn in METRICS:
        assert fn(answer, "Denver Broncos") == 0.0


def test_column_list_names_every_metric_and_is_summarised_and_selectable():
    assert columns.ANSWER_METRICS == list(ANSWER_FUNCTIONS)
    assert set(columns.ANSWER_METRICS) <= set(columns.SUMMARY_METRICS)
    assert set(columns.ANSWER_METRICS) <= set(columns.SELECTABLE_METRICS)


# --- records and summary -------------------------------------------------------------------


def test_records_and_summary_carry_the_metrics_with_cis(tmp_path):
    """Built from a journal: error rows and questions without a reference are NaN (excluded from means)."""
    from ragsweep.pipelines.journal import Journal
    from ragsweep.pipelines.outputs.records import build_records
    from ragsweep.pipelines.outputs.summary import build_summary

    questions = [
        {"qid": q, "question": "?", "qtype": "simple", "reference_answer": ref, "split": "test", "evidence": []}
        for q, ref in [("q1", "10 days"), ("q2", "Denver Broncos"), ("q3", None), ("q4", "72 hours")]
    ]
    configs = [{"config_id": "c1", "config_hash": "h1"}]
    journal = Journal(tmp_path / "journal.sqlite")
    journal.add_answer("h1", "q1", "c1", {"answer": "It lasts 10 days."})
    journal.add_answer("h1", "q2", "c1", {"answer": "The Broncos"})
    journal.add_answer("h1", "q3", "c1", {"answer": "anything"})
    journal.add_answer("h1", "q4", "c1", {"answer": None, "error": "RuntimeError: boom"})
    rec = build_records(questions, configs, journal).set_index("qid")
    journal.close()
    assert (rec[columns.ANSWER_METRICS].dtypes == "float64").all()
    assert rec.loc["q1", columns.ANSWER_METRICS].tolist() == [1.0, 0.0, pytest.approx(2 / 3)]  # P = 2/4, R = 1
    assert rec.loc["q2", columns.ANSWER_METRICS].tolist() == [0.0, 0.0, pytest.approx(2 / 3)]  # P = 1, R = 1/2
    assert rec.loc[["q3", "q4"], columns.ANSWER_METRICS].isna().all().all()  # no reference; failed row

    summary = build_summary(rec.reset_index(), configs, {"bootstrap_samples": 200, "confidence": 0.95}, seed=1)
    path = tmp_path / "summary.csv"
    summary.to_csv(path, index=False)
    row = pd.read_csv(path).query("split == 'all'").iloc[0]
    for m in columns.ANSWER_METRICS:
        assert row[f"{m}_n"] == 2
        assert row[f"{m}_lo"] <= row[m] <= row[f"{m}_hi"]
    assert row["answer_contains"] == 0.5 and row["answer_contains_lo"] == 0.0 and row["answer_contains_hi"] == 1.0


def test_a_sweep_records_and_summarises_the_metrics(base_run):
    """The reference sweep: the columns are in records.parquet and summary.csv (with CIs), equal to the metrics
    of each record's answer, NaN only where there is no reference or the row failed; the run stays complete."""
    rec = base_run.records
    assert base_run.manifest["status"] == "complete"
    for m in columns.ANSWER_METRICS:
        assert {m, f"{m}_lo", f"{m}_hi", f"{m}_n"} <= set(base_run.summary.columns)
        s = base_run.summary
        assert (s[f"{m}_lo"] <= s[m] + 1e-12).all() and (s[m] <= s[f"{m}_hi"] + 1e-12).all()
    expected = pd.DataFrame([all_answer_metrics(a, r) for a, r in zip(rec["answer"], rec["reference_answer"])])
    pd.testing.assert_frame_equal(rec[columns.ANSWER_METRICS].reset_index(drop=True), expected[columns.ANSWER_METRICS])
    has_ref = rec["reference_answer"].fillna("").str.strip().ne("") & rec["error"].isna()
    assert rec.loc[has_ref, columns.ANSWER_METRICS].notna().all().all()
    assert rec["token_f1"].gt(0).any()  # the extractive baseline's sentences share words with the references
