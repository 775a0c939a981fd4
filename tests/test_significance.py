"""Paired tests (sign-flip, sign test, t-test), Holm adjustment, paired difference and compare-to-best."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ragsweep.evaluation import paired_tests
from ragsweep.evaluation.paired_tests import PairedTest, paired_permutation_test, paired_test
from ragsweep.evaluation.significance import (
    COMPARE_COLUMNS,
    PAIRWISE_COLUMNS,
    PairedDifference,
    cohens_dz,
    compare_pair,
    compare_to_best,
    holm,
    paired_difference,
    pairwise_tests,
)
from ragsweep.evaluation.test_options import TestOptions

A5 = [0.9, 0.7, 0.8, 0.4, 0.6]
B5 = [0.5, 0.8, 0.3, 0.4, 0.1]  # differences 0.4, -0.1, 0.5, 0.0, 0.5


def _enumerated_p(d: np.ndarray) -> tuple[float, float]:
    """(p_greater, p_less) by listing all 2^n sign flips of d, by hand."""
    obs = d.mean()
    null = [np.mean(np.array(s) * d) for s in itertools.product([-1, 1], repeat=d.size)]
    greater = sum(v >= obs - 1e-12 for v in null) / len(null)
    less = sum(v <= obs + 1e-12 for v in null) / len(null)
    return greater, less


def test_exact_sign_flip_matches_enumeration_and_scipy():
    d = np.subtract(A5, B5)
    greater, less = _enumerated_p(d)
    # 0.0 difference doubles every sign vector; the mean 0.26 is beaten or equalled by 4 of 32.
    assert greater == pytest.approx(4 / 32)
    assert paired_permutation_test(A5, B5, "greater") == pytest.approx(greater)
    assert paired_permutation_test(A5, B5, "less") == pytest.approx(less)
    assert paired_permutation_test(A5, B5) == pytest.approx(min(1.0, 2 * min(greater, less)))
    for alt in ("two-sided", "greater", "less"):
        ref = stats.permutation_test(
            (np.array(A5), np.array(B5)),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            alternative=alt,
            n_resamples=10_000,
        )
        assert paired_permutation_test(A5, B5, alt) == pytest.approx(ref.pvalue)


def test_randomized_test_close_to_scipy_and_deterministic():
    rng = np.random.default_rng(3)
    a = rng.normal(0.5, 0.2, 40)
    b = a - rng.normal(0.05, 0.2, 40)
    p = paired_permutation_test(a, b, n_resamples=4000, seed=1)
    assert p == paired_permutation_test(a, b, n_resamples=4000, seed=1)
    ref = stats.permutation_test(
        (a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples", n_resamples=4000, rng=0
    ).pvalue
    assert abs(p - ref) < 0.04
    assert p > 0  # (hits + 1) / (n + 1)
    assert paired_permutation_test(a + 1.0, a, "greater", n_resamples=999) == pytest.approx(1 / 1000)


def test_sign_flip_direction_and_edge_cases():
    a = np.linspace(0.5, 1.0, 12)
    b = a - 0.1
    assert paired_permutation_test(a, b, "greater") == pytest.approx(1 / 2**12)
    assert paired_permutation_test(a, b, "less") == 1.0
    assert paired_permutation_test(a, a) == 1.0  # all differences zero
    assert math.isnan(paired_permutation_test([], []))
    assert math.isnan(paired_permutation_test([1.0, np.nan], [np.nan, 2.0]))
    with pytest.raises(ValueError):
        paired_permutation_test(a, b, "bigger")
    with pytest.raises(ValueError):
        paired_permutation_test([1.0], [1.0, 2.0])


def test_nan_pairs_are_dropped():
    a = A5 + [np.nan, 0.3]
    b = B5 + [0.2, np.nan]
    assert paired_permutation_test(a, b) == paired_permutation_test(A5, B5)
    assert paired_difference(a, b) == paired_difference(A5, B5)


def test_holm_known_values():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([]) == []
    out = holm([0.01, np.nan, 0.04])  # m = 2
    assert out[0] == pytest.approx(0.02) and math.isnan(out[1]) and out[2] == pytest.approx(0.04)
    p = [0.2, 0.001, 0.03, 0.03, 0.5]
    adj = holm(p)
    ordered = [adj[i] for i in np.argsort(p, kind="stable")]
    assert ordered == sorted(ordered)  # monotone in the raw p-values
    assert all(a >= b for a, b in zip(adj, p))


def test_cohens_dz_by_hand():
    d = [1.0, 2.0, 3.0]  # mean 2, sd 1
    assert cohens_dz(d) == pytest.approx(2.0)
    assert cohens_dz([0.0, 0.0, 0.0]) == 0.0
    assert math.isnan(cohens_dz([0.4]))
    assert cohens_dz([0.5, 0.5]) == math.inf
    assert cohens_dz([-0.5, -0.5]) == -math.inf
    base = np.random.default_rng(0).uniform(0, 1, 20)
    assert cohens_dz((base + 0.3) - (base + 0.2)) == math.inf  # a constant shift, up to rounding


def test_paired_difference_ci_contains_shift():
    rng = np.random.default_rng(0)
    b = rng.uniform(0, 1, 200)
    a = b + 0.1 + rng.normal(0, 0.05, 200)
    res = paired_difference(a, b, seed=4)
    assert isinstance(res, PairedDifference)
    assert res.n == 200
    assert res.diff_lo < 0.1 < res.diff_hi
    assert res.diff == pytest.approx(a.mean() - b.mean())
    assert res.mean_a == pytest.approx(a.mean()) and res.mean_b == pytest.approx(b.mean())
    d = a - b
    assert res.d_z == pytest.approx(d.mean() / d.std(ddof=1))
    assert res == paired_difference(a, b, seed=4)
    empty = paired_difference([np.nan], [1.0])
    assert empty.n == 0 and math.isnan(empty.diff) and math.isnan(empty.mean_a) and math.isnan(empty.d_z)


def _long(columns: dict[str, list[float]]) -> pd.DataFrame:
    rows = [{"config_id": c, "qid": f"q{i:02d}", "ndcg": v} for c, vals in columns.items() for i, v in enumerate(vals)]
    return pd.DataFrame(rows)


def test_compare_to_best():
    rng = np.random.default_rng(1)
    base = rng.uniform(0.3, 0.7, 30)
    values = _long(
        {
            "good": list(base + 0.2),
            "twin": list(base + 0.2 + rng.normal(0, 0.01, 30)),
            "bad": list(base),
            "empty": [np.nan] * 30,
        }
    )
    out = compare_to_best(values, "ndcg", tests=TestOptions(n_resamples=2000, n_boot=200))
    assert list(out.columns) == COMPARE_COLUMNS
    assert set(out["best"]) == {out["best"].iloc[0]} and out["best"].iloc[0] in {"good", "twin"}
    assert list(out["other"].iloc[-1:]) == ["empty"]  # NaN mean last
    row = out.set_index("other").loc["bad"]
    assert row["significant"] and row["diff"] == pytest.approx(0.2) and row["diff_lo"] > 0 and row["n"] == 30
    (runner_up,) = {"good", "twin"} - {out["best"].iloc[0]}
    twin = out.set_index("other").loc[runner_up]
    assert not twin["significant"]
    empty = out.set_index("other").loc["empty"]
    assert empty["n"] == 0 and math.isnan(empty["p_value"]) and not empty["significant"]
    # Holm over the two measured comparisons only
    assert out["p_holm"].iloc[:2].tolist() == pytest.approx(holm(out["p_value"].iloc[:2].tolist()))
    # row order of the input does not matter
    shuffled = values.sample(frac=1.0, random_state=0)
    pd.testing.assert_frame_equal(
        out, compare_to_best(shuffled, "ndcg", tests=TestOptions(n_resamples=2000, n_boot=200))
    )


def test_compare_to_best_given_best_lower_is_better_and_empty():
    values = _long({"a": [0.1, 0.2, 0.3], "b": [0.3, 0.4, 0.5], "c": [0.2, 0.3, 0.4]})
    out = compare_to_best(values, "ndcg", higher_is_better=False)
    assert out["best"].iloc[0] == "a" and list(out["other"]) == ["c", "b"]
    assert out["diff"].tolist() == pytest.approx([-0.1, -0.2])
    out = compare_to_best(values, "ndcg", best="c")
    assert list(out["other"]) == ["b", "a"]
    with pytest.raises(ValueError):
        compare_to_best(values, "ndcg", best="zzz")
    assert list(compare_to_best(values.iloc[:0], "ndcg").columns) == COMPARE_COLUMNS
    single = compare_to_best(values[values.config_id == "a"], "ndcg")
    assert single.empty and list(single.columns) == COMPARE_COLUMNS


def test_cached_sign_flips_give_the_uncached_p_values():
    """The sign-flip matrix of a (question count, resamples, seed) is drawn once and reused by the next
    tests; the p-values are those of drawing it afresh, and reuse does not change it."""
    from ragsweep.evaluation import paired_tests as sig

    rng = np.random.default_rng(3)
    n, resamples = 40, 3000
    pairs = [(rng.normal(0.1 * k, 1, n), rng.normal(0, 1, n)) for k in range(4)]

    def uncached(a, b):
        d = a - b
        observed, gamma = d.mean(), abs(d.mean()) * np.finfo(float).eps * 100
        null = np.concatenate([s @ d / n for s in sig._sign_chunks(n, resamples, 0)])
        less, greater = np.sum(null <= observed + gamma), np.sum(null >= observed - gamma)
        return min(1.0, 2 * min((less + 1) / (resamples + 1), (greater + 1) / (resamples + 1)))

    sig._cached_sign_chunks.cache_clear()
    first = [paired_permutation_test(a, b, n_resamples=resamples) for a, b in pairs]
    assert sig._cached_sign_chunks.cache_info().hits == len(pairs) - 1
    again = [paired_permutation_test(a, b, n_resamples=resamples) for a, b in pairs]
    assert first == again == pytest.approx([uncached(a, b) for a, b in pairs], abs=0)
    assert len({round(p, 12) for p in first}) > 1  # the pairs differ, so the shared null is not a constant answer
    assert not any(c.flags.writeable for c in sig._cached_sign_chunks(n, resamples, 0))


# --------------------------------------------------------------------------- paired_test
ALTS = ("two-sided", "greater", "less")


def test_exact_path_drops_zeros_and_matches_full_enumeration():
    """Zeros flip to themselves: enumerating only the k non-zero differences gives the p-value of all 2^n
    flips, and a run with many zeros is now exact where 2^n flips were too many to list."""
    d = np.subtract(A5, B5)  # one zero
    greater, less = _enumerated_p(d)
    for alt, ref in (("greater", greater), ("less", less), ("two-sided", min(1.0, 2 * min(greater, less)))):
        t = paired_test(A5, B5, alt)
        assert t == PairedTest(pytest.approx(ref), "exact sign-flip")
        assert t.p_value == paired_permutation_test(A5, B5, alt)
    rng = np.random.default_rng(5)
    b = rng.uniform(0, 1, 60)
    a = b.copy()
    a[:8] += rng.normal(0.1, 0.1, 8)  # 8 non-zero differences of 60
    greater, less = _enumerated_p((a - b)[:8])
    assert paired_test(a, b, "greater") == PairedTest(pytest.approx(greater), "exact sign-flip")
    assert paired_test(a, b, "less").p_value == pytest.approx(less)


def test_chunked_enumeration_gives_the_same_p_values(monkeypatch):
    rng = np.random.default_rng(8)
    a, b = rng.normal(0.2, 1, 12), rng.normal(0, 1, 12)
    whole = [paired_permutation_test(a, b, alt) for alt in ALTS]
    monkeypatch.setattr(paired_tests, "_MAX_CHUNK_ELEMENTS", 40)  # blocks of 2^3 sign vectors
    assert [paired_permutation_test(a, b, alt) for alt in ALTS] == pytest.approx(whole, rel=1e-12)


def test_sign_test_path_equals_exact_enumeration_for_binary_metrics():
    rng = np.random.default_rng(2)
    for _ in range(20):
        a, b = rng.integers(0, 2, 24).astype(float), rng.integers(0, 2, 24).astype(float)
        k = int(np.count_nonzero(a != b))
        for alt in ALTS:
            sign = paired_test(a, b, alt, tests=TestOptions(n_resamples=2))  # 2^k > 2: the binomial path
            exact = paired_test(a, b, alt, tests=TestOptions(n_resamples=2**k))  # every sign flip listed
            assert (sign.method, exact.method) == ("exact sign test", "exact sign-flip")
            assert sign.p_value == pytest.approx(exact.p_value, rel=1e-9)
            ref = stats.binomtest(int(np.sum(a > b)), k, 0.5, alternative=alt).pvalue
            assert sign.p_value == pytest.approx(ref, rel=1e-9)


def test_t_test_path_equals_scipy_ttest_rel():
    rng = np.random.default_rng(4)
    a = rng.uniform(0, 1, 80)
    b = np.clip(a - rng.normal(0.03, 0.1, 80), 0, 1)
    a[3], b[7] = np.nan, np.nan  # pairs with a NaN are dropped, as scipy's nan_policy="omit" does
    for alt in ALTS:
        t = paired_test(a, b, alt)
        ref = stats.ttest_rel(a, b, alternative=alt, nan_policy="omit").pvalue
        assert t.method == "paired t-test" and t.p_value == pytest.approx(ref, rel=1e-9)
    assert paired_test(a, b, "greater").p_value < 0.05 < paired_test(a, b, "less").p_value  # a is higher


def test_p_values_reach_holm_thresholds_of_a_435_pair_family():
    """Where 10,000 fixed resamples stop at 2 / 10,001 (two-sided), every path goes below .05 / 435."""
    b = np.zeros(100)
    a = b.copy()
    a[:20] = 1.0  # hit: 20 questions found by a only
    bound = 0.05 / 435
    old = paired_permutation_test(a, b, n_resamples=10_000)
    assert old == pytest.approx(2 / 10_001) and old > bound
    assert paired_test(a, b) == PairedTest(pytest.approx(2 / 2**20), "exact sign test")
    scaled = paired_test(a, b, family_size=435, tests=TestOptions(method="permutation"))
    assert scaled == PairedTest(pytest.approx(2 / 87_001), "sign-flip, 87000 resamples") and scaled.p_value < bound
    cont = np.random.default_rng(0).uniform(0, 1, 100)
    assert paired_test(cont + np.random.default_rng(1).normal(0.1, 0.1, 100), cont).p_value < bound


def test_permutation_resamples_scale_with_the_family():
    rng = np.random.default_rng(6)
    a, b = rng.normal(0.1, 1, 50), rng.normal(0, 1, 50)
    assert paired_tests.family_resamples(10_000, 1, 0.05) == 10_000
    assert paired_tests.family_resamples(10_000, 435, 0.05) == 87_000  # 1 / (B + 1) ten times below .05 / 435
    assert paired_tests.family_resamples(100, 29, 0.01) == 29_000
    t = paired_test(a, b, family_size=29, tests=TestOptions(method="permutation"))
    assert t.method == "sign-flip, 10000 resamples"  # 10 * 29 / .05 = 5,800 < the 10,000 asked for
    assert t.p_value == paired_permutation_test(a, b, n_resamples=10_000)
    t = paired_test(a, b, family_size=1000, tests=TestOptions(method="permutation"))
    assert t.method == "sign-flip, 200000 resamples"
    assert t.p_value == paired_permutation_test(a, b, n_resamples=200_000)
    assert paired_test(A5, B5, family_size=1000, tests=TestOptions(method="permutation")).method == "exact sign-flip"


def test_paired_test_conventions():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no scipy warning on zero variance
        base = np.random.default_rng(0).uniform(0, 1, 50)
        shift = paired_test(base + 0.3, base + 0.2, "greater")  # constant non-zero difference, up to rounding
        assert shift == PairedTest(pytest.approx(2.0**-50), "exact sign test")
        mixed = paired_test(np.r_[base, base] + 0.1, np.r_[base, base + 0.2])  # +-0.1, no variance in |d|
        assert mixed == PairedTest(1.0, "exact sign test")
        assert paired_test(base, base) == PairedTest(1.0, "exact sign-flip")
    assert paired_test([], []).method == "none" and math.isnan(paired_test([], []).p_value)
    assert math.isnan(paired_test([1.0, np.nan], [np.nan, 2.0]).p_value)
    for bad in ({"method": "wilcoxon"}, {"alpha": 0.0}, {"n_resamples": 0}):
        with pytest.raises(ValueError):
            paired_test(A5, B5, tests=TestOptions(**bad))
    with pytest.raises(ValueError):
        paired_test(A5, B5, family_size=0)
    with pytest.raises(ValueError):
        paired_test(A5, B5, "bigger")


def test_families_use_paired_test_and_name_it():
    rng = np.random.default_rng(9)
    base = rng.uniform(0.2, 0.8, 40)
    cols = {f"k{i}": base + 0.02 * i + rng.normal(0, 0.05, 40) for i in range(5)}
    values = _long(cols)
    out = compare_to_best(values, "ndcg", tests=TestOptions(n_boot=50))
    assert out.attrs["family"] == "k4 vs each of 4 other(s)"
    assert set(out["test"]) == {"paired t-test"}
    for r in out.itertuples():
        assert r.p_value == paired_test(cols["k4"], cols[r.other]).p_value
    pairs = pairwise_tests(values, "ndcg", tests=TestOptions(n_boot=50))
    assert list(pairs.columns) == PAIRWISE_COLUMNS and PAIRWISE_COLUMNS[-1] == "test" and len(pairs) == 10
    assert pairs.attrs["family"] == "all 10 pairs of 5 configurations (exploratory)"
    assert pairs["p_holm"].tolist() == pytest.approx(holm(pairs["p_value"].tolist()))
    perm = pairwise_tests(values, "ndcg", tests=TestOptions(n_boot=50, method="permutation"))
    assert set(perm["test"]) == {"sign-flip, 10000 resamples"}  # 10 * 10 / .05 = 2,000 < 10,000
    one = compare_pair(cols["k4"], cols["k0"], TestOptions(n_boot=0))
    assert one["test"] == "paired t-test" and math.isnan(one["diff_lo"]) and one["diff"] > 0


def test_test_options_are_the_specs_and_refuse_what_no_test_can_use():
    """One bundle, built once from the spec: its scoring's alpha, bootstrap resamples and confidence, and its seed;
    a level outside (0, 1), an unknown method or no resamples is refused where the bundle is made."""
    from ragsweep.config import parse_spec

    spec = parse_spec(
        {
            "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
            "splitters": [{"kind": "token"}],
            "retrievers": [{"kind": "bm25"}],
            "scoring": {"alpha": 0.01, "bootstrap_samples": 500, "confidence": 0.9},
            "seed": 11,
        }
    )
    tests = TestOptions.of(spec)
    assert (tests.alpha, tests.n_boot, tests.confidence, tests.seed) == (0.01, 500, 0.9, 11)
    assert tests.at(0.1) == TestOptions(alpha=0.1, n_boot=500, confidence=0.9, seed=11)
    for bad in ({"alpha": 1.0}, {"alpha": 0}, {"method": "ttest"}, {"n_resamples": 0}):
        with pytest.raises(ValueError):
            TestOptions(**bad)
