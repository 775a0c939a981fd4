"""Retrieval metrics and bootstrap summaries against hand-computed values."""

from __future__ import annotations

import math
import random

import numpy as np
import pandas as pd
import pytest

from ragsweep.datasets.types import EvidenceSpan
from ragsweep.evaluation.bootstrap import bootstrap_ci, summarise
from ragsweep.metrics import (
    all_retrieval_metrics,
    document_reciprocal_rank,
    first_new_gold,
    hit_at_k,
    ndcg_at_k,
    overlap,
    reciprocal_rank,
    span_precision_at_k,
    span_recall_at_k,
)

KEYS = {"hit", "mrr", "ndcg", "span_recall", "span_precision", "doc_mrr"}


# --- relevance helpers -------------------------------------------------------


def test_overlap_is_half_open():
    assert overlap(0, 10, 5, 15) == 5  # [5, 10)
    assert overlap(0, 10, 10, 20) == 0  # adjacent: share no character
    assert overlap(0, 10, 20, 30) == 0
    assert overlap(0, 100, 40, 60) == 20  # containment


def test_k_must_be_positive():
    for fn in (hit_at_k, reciprocal_rank, ndcg_at_k, span_recall_at_k, span_precision_at_k, document_reciprocal_rank):
        with pytest.raises(ValueError):
            fn([("d", 0, 10)], [("d", 0, 10)], 0)
        with pytest.raises(ValueError):
            fn([], [], -1)  # checked even when the answer would be NaN


# --- hand-computed cases -----------------------------------------------------


def test_overlapping_chunks_covering_one_span():
    # gold [100, 200) of d; chunks [50,150), [100,250), [120,180) all overlap it.
    gold = [EvidenceSpan("d", 100, 200)]
    retrieved = [("d", 50, 150), ("d", 100, 250), ("d", 120, 180)]
    # Only rank 1 finds the span first: gains [1, 0, 0].
    assert first_new_gold(retrieved, gold) == [1, 0, 0]
    m = all_retrieval_metrics(retrieved, gold, 3)
    assert set(m) == KEYS
    assert m["hit"] == 1.0
    assert m["mrr"] == 1.0
    # DCG = 1/log2(2) = 1; IDCG = min(3, 1) = 1 gain at rank 1 = 1; nDCG = 1 (not 1 + 1/log2 3 + 1/2).
    assert m["ndcg"] == pytest.approx(1.0)
    # Retrieved union [50, 250) covers all 100 gold characters: recall = 100/100.
    assert m["span_recall"] == pytest.approx(1.0)
    # Retrieved union is 200 characters (not 100+150+60 = 310), 100 of them gold: precision = 100/200.
    assert m["span_precision"] == pytest.approx(0.5)
    assert m["doc_mrr"] == 1.0


def test_two_gold_spans_in_two_docs():
    gold = [EvidenceSpan("a", 0, 100), EvidenceSpan("b", 0, 100)]
    retrieved = [("a", 50, 150), ("c", 0, 100), ("b", 0, 50)]
    m = all_retrieval_metrics(retrieved, gold, 3)
    assert m["hit"] == 1.0
    assert m["mrr"] == 1.0
    # gains [1, 0, 1]: DCG = 1/log2 2 + 1/log2 4 = 1 + 0.5 = 1.5
    # IDCG = min(3, 2) gains: 1/log2 2 + 1/log2 3 = 1 + 0.63093 = 1.63093; nDCG = 1.5/1.63093 = 0.91972
    assert m["ndcg"] == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert m["ndcg"] == pytest.approx(0.91972, abs=1e-5)
    # Gold characters 100 + 100 = 200; covered a:[50,100) = 50, b:[0,50) = 50 -> 100/200 = 0.5
    assert m["span_recall"] == pytest.approx(0.5)
    # Retrieved characters 100 + 100 + 50 = 250; gold among them 50 + 0 + 50 = 100 -> 100/250 = 0.4
    assert m["span_precision"] == pytest.approx(0.4)
    assert m["doc_mrr"] == 1.0


def test_relevant_at_rank_three():
    gold = [("d", 0, 10)]
    retrieved = [("d", 20, 30), ("e", 0, 10), ("d", 5, 15)]
    assert hit_at_k(retrieved, gold, 5) == 1.0
    assert reciprocal_rank(retrieved, gold, 5) == pytest.approx(1 / 3)
    # DCG = 1/log2(3 + 1) = 0.5; IDCG = min(5, 1) gain = 1/log2 2 = 1 -> 0.5
    assert ndcg_at_k(retrieved, gold, 5) == pytest.approx((1 / math.log2(4)) / (1 / math.log2(2)))
    # covered gold [5, 10) = 5 of 10 characters
    assert span_recall_at_k(retrieved, gold, 5) == pytest.approx(0.5)
    # retrieved union d:[5,15)+[20,30) = 20, e:[0,10) = 10 -> 30 characters, 5 gold -> 1/6
    assert span_precision_at_k(retrieved, gold, 5) == pytest.approx(5 / 30)
    # rank 1 is already in document d
    assert document_reciprocal_rank(retrieved, gold, 5) == 1.0


def test_k_cut_off_excludes_relevant_item():
    gold = [("d", 0, 10)]
    retrieved = [("d", 20, 30), ("e", 0, 10), ("d", 5, 15)]  # relevant at rank 3, k = 2
    m = all_retrieval_metrics(retrieved, gold, 2)
    assert m == {
        "hit": 0.0,
        "mrr": 0.0,
        "ndcg": 0.0,
        "span_recall": 0.0,
        "span_precision": 0.0,  # 20 retrieved characters, 0 gold
        "doc_mrr": 1.0,  # right document at rank 1, wrong passage
    }


def test_empty_gold_is_nan():
    m = all_retrieval_metrics([("d", 0, 10)], [], 5)
    assert set(m) == KEYS
    assert all(math.isnan(v) for v in m.values())
    assert all(math.isnan(v) for v in all_retrieval_metrics([], [], 5).values())


def test_empty_retrieved_is_zero():
    m = all_retrieval_metrics([], [EvidenceSpan("d", 0, 10)], 5)
    assert m == dict.fromkeys(KEYS, 0.0)


def test_adjacent_ranges_do_not_overlap():
    gold = [("d", 10, 20)]
    retrieved = [("d", 0, 10), ("d", 20, 30)]  # touch [10, 20) at both ends, share 0 characters
    m = all_retrieval_metrics(retrieved, gold, 2)
    assert m["hit"] == 0.0 and m["mrr"] == 0.0 and m["ndcg"] == 0.0
    assert m["span_recall"] == 0.0 and m["span_precision"] == 0.0
    assert m["doc_mrr"] == 1.0


def test_document_level_mrr():
    gold = [("b", 100, 200)]
    retrieved = [("a", 100, 200), ("c", 0, 50), ("b", 0, 50)]  # right document only at rank 3, wrong passage
    assert document_reciprocal_rank(retrieved, gold, 3) == pytest.approx(1 / 3)
    assert document_reciprocal_rank(retrieved, gold, 2) == 0.0
    assert reciprocal_rank(retrieved, gold, 3) == 0.0


def test_overlapping_gold_spans_for_span_recall():
    gold = [("d", 0, 60), ("d", 40, 100)]  # union [0, 100) = 100 characters (not 60 + 60 = 120)
    retrieved = [("d", 40, 60)]
    # covered 20 of 100 union characters -> 0.2 (per-span counting would give (20 + 20)/120 = 0.333)
    assert span_recall_at_k(retrieved, gold, 3) == pytest.approx(0.2)
    assert span_precision_at_k(retrieved, gold, 3) == pytest.approx(1.0)  # all 20 characters are gold
    # the chunk finds both spans at once: a gain of 2 at rank 1
    assert first_new_gold(retrieved, gold) == [2]
    # DCG = 2; IDCG = 1 + 1/log2 3 = 1.63093 -> 1.226, capped at 1: as good as two chunks at ranks 1 and 2
    assert ndcg_at_k(retrieved, gold, 3) == pytest.approx(1.0)
    assert ndcg_at_k([("d", 0, 50), ("d", 50, 100)], gold, 3) == pytest.approx(1.0)
    # found at rank 2 instead: DCG = 2/log2 3 = 1.26186 -> 1.26186 / 1.63093 = 0.77371
    assert ndcg_at_k([("x", 0, 5), ("d", 40, 60)], gold, 3) == pytest.approx(
        (2 / math.log2(3)) / (1 + 1 / math.log2(3))
    )


def test_duplicate_gold_spans_count_once():
    gold = [("d", 0, 10), ("d", 0, 10)]
    # IDCG uses 1 distinct span, so a perfect ranking scores 1
    assert ndcg_at_k([("d", 0, 10)], gold, 5) == pytest.approx(1.0)


def test_random_inputs_stay_in_unit_interval():
    rng = random.Random(1234)
    docs = ["a", "b", "c"]

    def rand_range():
        start = rng.randrange(0, 200)
        return (rng.choice(docs), start, start + rng.randrange(1, 60))

    for _ in range(500):
        gold = [EvidenceSpan(*rand_range()) for _ in range(rng.randrange(1, 5))]
        retrieved = [rand_range() for _ in range(rng.randrange(0, 10))]
        previous = None
        for k in range(1, 8):
            m = all_retrieval_metrics(retrieved, gold, k)
            for name, v in m.items():
                assert 0.0 <= v <= 1.0 + 1e-12, (name, v, retrieved, gold, k)
            if previous is not None:  # more context never loses a hit or gold characters
                assert m["hit"] >= previous["hit"]
                assert m["span_recall"] >= previous["span_recall"] - 1e-12
            previous = m


# --- bootstrap ---------------------------------------------------------------


def test_bootstrap_deterministic_for_seed():
    values = np.random.default_rng(7).random(300)
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    assert bootstrap_ci(values, seed=3) != bootstrap_ci(values, seed=4)


def test_bootstrap_ci_contains_mean():
    values = np.random.default_rng(11).normal(0.6, 0.2, 200)
    mean, low, high = bootstrap_ci(values, n_resamples=2000)
    assert mean == pytest.approx(values.mean())
    assert low < mean < high
    # roughly mean +- 1.96 * sd/sqrt(n) = +-0.028
    assert high - low == pytest.approx(2 * 1.96 * values.std(ddof=1) / math.sqrt(200), rel=0.2)


def test_bootstrap_constant_input_zero_width():
    assert bootstrap_ci([0.1] * 50) == (0.1, 0.1, 0.1)
    assert bootstrap_ci([0.7]) == (0.7, 0.7, 0.7)


def test_bootstrap_ignores_nans():
    values = [1.0, 0.0, 0.5, 1.0, 0.25]
    assert bootstrap_ci([math.nan, *values, math.nan], seed=5) == bootstrap_ci(values, seed=5)
    assert all(math.isnan(v) for v in bootstrap_ci([]))
    assert all(math.isnan(v) for v in bootstrap_ci([math.nan, math.nan]))


def test_bootstrap_large_input_is_chunked():
    values = np.random.default_rng(2).random(100_000)
    mean, low, high = bootstrap_ci(values, n_resamples=100)
    assert low <= mean <= high
    assert high - low < 0.01  # sd/sqrt(n) ~ 0.0009


def test_summarise_columns_and_counts():
    df = pd.DataFrame(
        {
            "config": ["x", "x", "x", "y", "y", "y"],
            "hit": [1.0, 0.0, 1.0, 1.0, 1.0, 1.0],
            "mrr": [1.0, math.nan, 0.5, 0.5, math.nan, math.nan],
        }
    )
    out = summarise(df, ["config"], ["hit", "mrr"], n_resamples=200, confidence=0.9, seed=0)
    assert list(out.columns) == [
        "config",
        "hit", "hit_lo", "hit_hi", "hit_n",
        "mrr", "mrr_lo", "mrr_hi", "mrr_n",
    ]  # fmt: skip
    assert list(out["config"]) == ["x", "y"]
    x, y = out.iloc[0], out.iloc[1]
    assert x["hit"] == pytest.approx(2 / 3) and x["hit_n"] == 3
    assert x["mrr"] == pytest.approx(0.75) and x["mrr_n"] == 2  # (1 + 0.5) / 2, NaN dropped
    assert x["hit_lo"] <= x["hit"] <= x["hit_hi"]
    assert (y["hit"], y["hit_lo"], y["hit_hi"]) == (1.0, 1.0, 1.0)
    assert y["mrr_n"] == 1
    pd.testing.assert_frame_equal(out, summarise(df, ["config"], ["hit", "mrr"], 200, 0.9, 0))
