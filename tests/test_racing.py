"""Racing (``search.racing``): the looks, and the elimination rule on simulated sweeps of 40 configurations,
with no difference (a given configuration, any of which is a best, is dropped in at most alpha of the races)
and with a real one (it must drop the worse configurations and keep the best)."""

from __future__ import annotations

import numpy as np
import pytest

from ragsweep.search.racing import RaceRule, drop, looks, race


def test_looks_grow_from_the_first_fraction_to_every_question():
    assert looks(100, 0.2, 2.0) == [20, 40, 80, 100]
    assert looks(30, 0.2, 2.0) == [10, 20, 30]  # at least 10 at the first look
    assert looks(8, 0.2, 2.0) == [8]
    assert looks(100, 1.0, 2.0) == [100]


def _race(means, n, rng, alpha=0.05, incumbent=None):
    truth = {f"c{i:02d}": m for i, m in enumerate(means)}
    question = rng.normal(0, 1, n)  # question difficulty: shared by every configuration (paired data)
    data = {h: question + m + rng.normal(0, 1, n) for h, m in truth.items()}
    asked = []

    def values_at(hashes, k):
        asked.append(k)
        return {h: data[h][:k] for h in hashes}

    contenders = [h for h in truth if h != incumbent]
    return race(contenders, looks(n, 0.2, 2.0), values_at, RaceRule(True, alpha), incumbent=incumbent), truth


def test_with_no_difference_a_race_rarely_drops_a_best_configuration():
    rng = np.random.default_rng(0)
    runs = 200
    results = [_race([0.0] * 40, 100, rng)[0] for _ in range(runs)]
    for h in ("c00", "c17", "c39"):  # each is a best: each must survive all but alpha of the races
        assert sum(h in r.dropped for r in results) / runs <= 0.05
    assert sum(len(r.dropped) for r in results) / (40 * runs) <= 0.05


def test_with_a_real_difference_a_race_drops_the_worse_and_keeps_the_best():
    rng = np.random.default_rng(1)
    for _ in range(20):
        means = [0.5] + [0.45] * 9 + [-0.5] * 30  # one best, nine close to it, thirty clearly worse
        result, truth = _race(means, 100, rng)
        assert "c00" in result.survivors
        worse = {h for h, m in truth.items() if m < 0}
        assert len(worse & set(result.dropped)) >= 27
        full = sum(100 for _ in truth)
        assert sum(result.pairs.values()) <= 0.7 * full  # the worse ones stop by the second look


def test_an_incumbent_leads_and_is_never_dropped():
    rng = np.random.default_rng(2)
    result, truth = _race([1.0, -1.0], 100, rng, incumbent="c00")
    assert result.dropped["c01"][2] == "c00" and result.survivors == []
    assert result.pairs == {"c01": 20}
    result, _ = _race([-1.0, 1.0], 100, rng, incumbent="c00")
    assert result.survivors == ["c01"] and not result.dropped  # a better contender is not dropped by a worse leader


def test_unmeasured_values_are_left_out_of_the_pairs():
    values = {"a": np.array([1.0, 1.0, np.nan] * 10), "b": np.array([0.0, 0.0, -5.0] * 10)}
    assert "b" in drop(values, True, 0.05)
    assert drop({"a": np.array([np.nan] * 5), "b": np.zeros(5)}, True, 0.05) == {}


@pytest.mark.parametrize("higher", [True, False])
def test_direction_follows_the_metric(higher):
    good, bad = np.linspace(0.6, 0.9, 30), np.linspace(0.1, 0.4, 30)
    values = {"good": good, "bad": bad} if higher else {"good": bad, "bad": good}
    assert set(drop(values, higher, 0.05)) == {"bad"}
