"""Krippendorff's alpha across a judge's repeats (``evaluation/self_agreement.py``): the published worked example,
a judge that answers consistently, one that answers at random, and what is not pairable."""

from __future__ import annotations

import numpy as np
import pytest

from ragsweep.evaluation.self_agreement import self_agreement

N = None
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 coders x 12 units example (a value missing
# where a coder did not code): alpha 0.743 nominal, 0.849 interval
CODERS = (
    [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
)
ITEMS = [[c[i] for c in CODERS] for i in range(12)]


def test_the_published_example():
    nominal = self_agreement(ITEMS, nominal=True, n_boot=200)
    interval = self_agreement(ITEMS, nominal=False, n_boot=200)
    assert nominal.alpha == pytest.approx(0.743, abs=5e-4) and interval.alpha == pytest.approx(0.849, abs=5e-4)
    assert nominal.n_items == 11 and nominal.repeats == 4  # the unit with one value is not pairable
    assert nominal.lo <= nominal.alpha <= nominal.hi and nominal.flips == pytest.approx(3 / 11)


def test_a_consistent_judge_agrees_and_a_random_one_does_not():
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, 200)
    consistent = self_agreement([[t] * 3 for t in truth], nominal=False, seed=1)
    assert consistent.alpha == 1.0 and consistent.flips == 0.0 and not consistent.no_better_than_chance
    coin = self_agreement([list(rng.integers(0, 2, 3)) for _ in range(200)], nominal=True, seed=1)
    assert abs(coin.alpha) < 0.15 and coin.lo <= 0.0 <= coin.hi and coin.no_better_than_chance
    assert coin.flips == pytest.approx(0.75, abs=0.1)  # 1 - 2 / 8 of three fair coins disagree


def test_nothing_to_tell():
    one = self_agreement([[1.0, 1.0], [1.0, 1.0]], nominal=True)  # one value everywhere: alpha undefined
    assert one.alpha != one.alpha and one.no_better_than_chance
    alone = self_agreement([[4.0], [2.0, None]], nominal=False)  # no item with two values
    assert alone.n_items == 0 and alone.as_dict()["alpha"] is None
