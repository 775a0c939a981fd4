"""BERTScore: rescaling, baselines (published and corpus-made), and the pair cache."""

from __future__ import annotations

import pytest

from ragsweep.config import BERTScoreSpec
from ragsweep.evaluation.bertscore import BERTScoreRunner, rescale, sample_unrelated_pairs, score_fields


def test_rescale_maps_baseline_to_zero_and_one_to_one():
    assert rescale(0.8, 0.8) == 0.0
    assert rescale(1.0, 0.8) == 1.0
    assert rescale(0.9, 0.8) == pytest.approx(0.5)  # (0.9 - 0.8) / (1 - 0.8)


def test_score_fields_mark_unmeasured_as_nan():
    from ragsweep.evaluation.bertscore import Baseline

    fields = score_fields(None, Baseline(0.5, 0.5, 0.5, "x"))
    assert all(v != v for v in fields.values())
    fields = score_fields((0.75, 0.5, 0.6), Baseline(0.5, 0.5, 0.5, "x"))
    assert fields["bertscore_p_rescaled"] == pytest.approx(0.5)
    assert fields["bertscore_r_rescaled"] == pytest.approx(0.0)


def test_published_baseline_is_read_from_bert_score(tmp_path):
    runner = BERTScoreRunner(BERTScoreSpec(model="roberta-large"), tmp_path / "b.sqlite")
    try:
        base = runner.published_baseline()
        assert runner.num_layers == 17  # bert-score's tuned layer for roberta-large
        assert base is not None and base.source == "bert-score published"
        assert 0.7 < base.f < 0.9  # roberta-large layer 17 baseline F is about 0.83
        assert runner._encoder is None  # nothing was loaded to read a baseline
    finally:
        runner.close()


def test_unknown_backbone_without_layer_is_a_clear_error(tmp_path):
    from ragsweep.errors import RagsweepError

    with pytest.raises(RagsweepError, match=r"scoring\.bertscore\.num_layers: .*set num_layers"):
        BERTScoreRunner(BERTScoreSpec(model="some-org/unknown-model"), tmp_path / "b.sqlite")


def test_unrelated_pairs_are_seeded_and_distinct():
    sents = [f"Sentence number {i} has exactly seven words." for i in range(50)]
    a = sample_unrelated_pairs(sents, 20, seed=3)
    assert a == sample_unrelated_pairs(sents, 20, seed=3)
    assert a != sample_unrelated_pairs(sents, 20, seed=4)
    assert all(x != y for x, y in a)
    assert sample_unrelated_pairs(["too short"], 5, seed=0) == []


@pytest.fixture(scope="module")
def minilm_runner(tmp_path_factory):
    runner = BERTScoreRunner(BERTScoreSpec(), tmp_path_factory.mktemp("bs") / "b.sqlite")
    yield runner
    runner.close()


def test_pairs_are_scored_once_and_cached(minilm_runner):
    pairs = [
        ("The landlord must give 60 days notice.", "Sixty days of notice are required."),
        ("Rent is due monthly.", "Rent is due monthly."),
        ("The landlord must give 60 days notice.", "Sixty days of notice are required."),
    ]
    before = minilm_runner.computed
    scores = minilm_runner.score(pairs)
    assert minilm_runner.computed - before == 2  # the repeated pair is scored once
    assert scores[0] == scores[2]
    assert scores[1][2] == pytest.approx(1.0, abs=1e-5)  # identical texts: F1 = 1
    assert 0.0 < scores[0][2] < 1.0
    again = minilm_runner.score(pairs)
    assert minilm_runner.computed - before == 2 and again == scores


def test_corpus_baseline_is_computed_once_and_cached(minilm_runner):
    sents = [
        f"The committee shall meet {w} times a year in the town hall."
        for w in ("two", "three", "four", "five", "six", "seven", "eight", "nine")
    ] + [f"Applicants must submit form {c} before the deadline ends." for c in "ABCDEFGH"]
    base = minilm_runner.baseline(sents, "fp-test", seed=0)
    assert base.source.startswith("corpus (")
    assert 0.0 < base.f < 1.0
    minilm_runner._raw = None  # a cached baseline must not score again
    assert minilm_runner.baseline(sents, "fp-test", seed=0) == base


def test_cached_pairs_are_probed_by_their_primary_key(tmp_path):
    """One index probe per pair looked up, whatever the cache holds: an OR of (cand, ref) terms scanned every
    cached pair of the model per batch of 300 (140 s of a contractnli x8 re-run, BENCHMARKS "Cost against
    corpus size")."""
    import sqlite3

    from ragsweep.config import BERTScoreSpec
    from ragsweep.evaluation.bertscore import BERTScoreRunner, lookup_sql

    BERTScoreRunner(BERTScoreSpec(backend="onnx"), tmp_path / "bs.sqlite").close()
    db = sqlite3.connect(tmp_path / "bs.sqlite")
    db.executemany("INSERT INTO pair VALUES ('m', ?, ?, 1, 1, 1)", [(bytes([i]), b"r") for i in range(50)])
    plan = [row[-1] for row in db.execute("EXPLAIN QUERY PLAN " + lookup_sql(3), [b"\x01", b"r"] * 3 + ["m"])]
    assert any("PRIMARY KEY (model=? AND cand=? AND ref=?)" in step for step in plan), plan
    assert db.execute(lookup_sql(2), [b"\x01", b"r", b"\x09", b"x", "m"]).fetchall() == [(b"\x01", b"r", 1.0, 1.0, 1.0)]
