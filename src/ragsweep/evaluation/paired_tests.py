"""Paired tests of "mean(a - b) = 0" whose p-values reach the level a multiple-comparison family needs.

A Monte Carlo sign-flip test with B resamples cannot give a p-value below ``1 / (B + 1)``, two-sided
``2 / (B + 1)`` (Phipson & Smyth 2010), so with B = 10,000 Holm over the C(30, 2) = 435 pairs of a
30-configuration sweep (strictest threshold .05 / 435 = 1.1e-4) can never reject, however large the
difference.
``paired_test`` therefore uses a test exact at any size where one exists (sign-flip enumeration;
the binomial sign test for binary metrics) and the paired t-test otherwise, or, on request, a
sign-flip test with resamples scaled to the family.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragsweep.evaluation.test_options import DEFAULT, TestOptions

ALTERNATIVES = ("two-sided", "greater", "less")
EXACT_SIGN_FLIP = "exact sign-flip"
SIGN_TEST = "exact sign test"
T_TEST = "paired t-test"
NO_PAIRS = "none"
# Upper bound on sign-flip matrix elements held at once (~32 MiB of float64).
_MAX_CHUNK_ELEMENTS = 1 << 22
# Sign-flip matrices up to this size (~128 MiB of float64; 10,000 x 1,600 questions) are kept for reuse.
_MAX_CACHED_ELEMENTS = 1 << 24
# Relative tolerance under which two floats count as equal (ties, equal |differences|, zero variance).
_RTOL = 100 * np.finfo(float).eps


@dataclass(frozen=True)
class PairedTest:
    """A p-value and the test that gave it (e.g. "exact sign test", "sign-flip, 87000 resamples")."""

    p_value: float
    method: str


def paired_values(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of ``a`` and ``b`` where both are measured (NaN marks an unmeasured value)."""
    x = np.asarray(a, dtype=float).ravel()
    y = np.asarray(b, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired samples must have equal lengths, got {x.size} and {y.size}")
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def mean_of(v: np.ndarray) -> float:
    """The mean of a non-empty float array, to the bit what ``ndarray.mean`` gives (the same pairwise sum, divided
    by the count) without its per-call overhead, which a matrix of comparisons pays four times per pair."""
    return float(np.add.reduce(v)) / v.size


def family_resamples(n_resamples: int, family_size: int, alpha: float) -> int:
    """Sign-flip resamples for a test in a family: ``max(n_resamples, ceil(10 * family_size / alpha))``.

    The smallest Monte Carlo p-value is ``1 / (B + 1)`` (Phipson & Smyth 2010), so this B puts it
    10x below Holm's strictest threshold ``alpha / family_size`` (Holm 1979).
    """
    if family_size < 1:
        raise ValueError(f"family_size must be at least 1, got {family_size}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return max(n_resamples, math.ceil(10 * family_size / alpha))


def paired_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    alternative: str = "two-sided",
    *,
    tests: TestOptions = DEFAULT,
    family_size: int = 1,
) -> PairedTest:
    """p-value for H0 "mean(a - b) = 0" over the pairs both measured, by a test that can reach ``alpha / family_size``.

    Zero differences carry no information about the sign under H0, so only the k non-zero ones
    decide the exact tests. ``method="auto"``:

    - ``2**k <= n_resamples``: every sign flip of the non-zero differences is enumerated
      (Fisher 1935, "The Design of Experiments", sec. 21), the exact ``paired_permutation_test``.
    - the non-zero ``|differences|`` all equal (binary metrics such as hit): the sign-flip
      distribution of the mean is then the binomial, so the exact sign test (the tails of
      ``scipy.stats.binomtest``, p = 1/2) is that same test at any k (Conover 1999, "Practical
      Nonparametric Statistics", 3rd ed., sec. 3.4).
    - otherwise (continuous metrics, many questions) the paired t-test (Student 1908), computed as
      ``scipy.stats.ttest_rel`` does: Smucker, Allan & Carterette 2007 (CIKM) found it agrees with
      the randomization test on IR evaluations, and Urbano, Lima & Hanjalic 2019 ("Statistical
      Significance Testing in Information Retrieval: An Empirical Analysis of Type I, Type II and
      Type III Errors", SIGIR) found its error rates well behaved.

    ``method="permutation"``: the sign-flip test with ``family_resamples`` random flips (exact
    when ``2**k`` is no more). "greater" means a is better (higher) than b; two-sided is twice the
    smaller one-sided p-value, capped at 1, in every test. No pairs give NaN, all-zero differences 1.
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    x, y = paired_values(a, b)
    return paired_test_measured(x, y, alternative, tests=tests, family_size=family_size)


def paired_test_measured(
    x: np.ndarray,
    y: np.ndarray,
    alternative: str = "two-sided",
    *,
    tests: TestOptions = DEFAULT,
    family_size: int = 1,
) -> PairedTest:
    """``paired_test`` of float arrays already restricted to the pairs both measured (``paired_values``), its
    options already checked: what a matrix of comparisons calls once per pair (``significance.compare_pair``)."""
    n_resamples, seed = tests.n_resamples, tests.seed
    resamples = family_resamples(n_resamples, family_size, tests.alpha)
    if x.size == 0:
        return PairedTest(float("nan"), NO_PAIRS)
    d = x - y
    nonzero = d[d != 0]
    k = nonzero.size
    if tests.method == "permutation":
        p = paired_permutation_test(x, y, alternative, resamples, seed)
        return PairedTest(p, EXACT_SIGN_FLIP if _enumerable(k, resamples) else f"sign-flip, {resamples} resamples")
    if _enumerable(k, n_resamples):
        return PairedTest(paired_permutation_test(x, y, alternative, n_resamples, seed), EXACT_SIGN_FLIP)
    size = np.abs(nonzero)
    if size.max() - size.min() <= _RTOL * max(np.abs(x).max(), np.abs(y).max()):
        return PairedTest(_sign_test(int(np.count_nonzero(nonzero > 0)), k, alternative), SIGN_TEST)
    return PairedTest(_t_test(d, alternative), T_TEST)


def _enumerable(k: int, n_resamples: int) -> bool:
    """Whether the ``2**k`` sign vectors of k non-zero differences fit in ``n_resamples``."""
    return k < 63 and 2**k <= n_resamples


def _sign_test(positive: int, k: int, alternative: str) -> float:
    """Exact binomial sign test of ``positive`` of ``k`` non-zero differences (p = 1/2): the binomial tails
    ``scipy.stats.binomtest`` gives, from ``scipy.special.bdtr``/``bdtrc`` without its per-call overhead
    (a matrix of tests makes thousands of calls). Two-sided is twice the smaller tail, capped at 1, which
    for this symmetric null is also binomtest's two-sided p-value."""
    from scipy.special import bdtr, bdtrc

    p_less = float(bdtr(positive, k, 0.5))  # P(S <= positive)
    p_greater = float(bdtrc(positive - 1, k, 0.5)) if positive else 1.0  # P(S >= positive)
    p = {"less": p_less, "greater": p_greater, "two-sided": 2 * min(p_less, p_greater)}[alternative]
    return min(p, 1.0)


def _t_test(d: np.ndarray, alternative: str) -> float:
    """The paired t-test p-value of differences ``d`` (with non-zero variance), as ``scipy.stats.ttest_rel``
    computes it (t = mean / (sd / sqrt(n)), n - 1 degrees of freedom), without its per-call overhead."""
    from scipy.special import stdtr

    n = d.size
    mean = mean_of(d)
    centred = d - mean
    t = mean / math.sqrt(float(centred @ centred) / (n - 1) / n)
    p_greater, p_less = float(stdtr(n - 1, -t)), float(stdtr(n - 1, t))
    p = {"less": p_less, "greater": p_greater, "two-sided": 2 * min(p_less, p_greater)}[alternative]
    return min(p, 1.0)


def paired_permutation_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> float:
    """p-value for H0 "mean(a - b) = 0" by flipping the signs of the paired differences.

    Fisher 1935, "The Design of Experiments", sec. 21; Good 2005, "Permutation, Parametric and
    Bootstrap Tests of Hypotheses", 3rd ed. Under H0 each difference is as likely positive as
    negative. All ``2**k`` sign vectors of the k non-zero differences are enumerated when
    ``2**k <= n_resamples`` (exact test; zeros flip to themselves, so leaving them out changes
    nothing but the cost); otherwise ``n_resamples`` random ones are drawn and the p-value is
    ``(hits + 1) / (n_resamples + 1)``, never zero (Phipson & Smyth 2010, "Permutation P-values
    Should Never Be Zero", SAGMB 9(1)): in a family, use ``paired_test``, which scales the
    resamples. "greater" means a is better (higher) than b; two-sided is twice the smaller
    one-sided p-value, capped at 1. Conventions match
    ``scipy.stats.permutation_test(..., permutation_type="samples")``, including its relative
    tolerance for ties, but a direct matrix product is several times faster. Pairs with a NaN
    are dropped; no pairs give NaN and all-zero differences give 1.
    """
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    x, y = paired_values(a, b)
    d = x - y
    n = d.size
    if n == 0:
        return float("nan")
    if not np.any(d):
        return 1.0
    observed = d.mean()
    gamma = abs(observed) * _RTOL
    nonzero = d[d != 0]
    if _enumerable(nonzero.size, n_resamples):
        nulls, total, adjust = _exact_nulls(nonzero), 2**nonzero.size, 0
    else:
        chunks = (
            _cached_sign_chunks(n, n_resamples, seed)
            if n * n_resamples <= _MAX_CACHED_ELEMENTS
            else _sign_chunks(n, n_resamples, seed)
        )
        nulls, total, adjust = (signs @ d for signs in chunks), n_resamples, 1
    less = greater = 0
    for null in nulls:
        null = null / n
        less += int(np.sum(null <= observed + gamma))
        greater += int(np.sum(null >= observed - gamma))
    p_less = (less + adjust) / (total + adjust)
    p_greater = (greater + adjust) / (total + adjust)
    p = {"less": p_less, "greater": p_greater, "two-sided": 2 * min(p_less, p_greater)}[alternative]
    return float(min(p, 1.0))


def _sign_chunks(n: int, n_resamples: int, seed: int):
    """The ``n_resamples`` random sign vectors of a seed, in row chunks that bound memory."""
    rng = np.random.default_rng(seed)
    rows = max(1, _MAX_CHUNK_ELEMENTS // n)
    for lo in range(0, n_resamples, rows):
        yield rng.integers(0, 2, size=(min(rows, n_resamples - lo), n)) * 2.0 - 1.0


@functools.lru_cache(maxsize=1)
def _cached_sign_chunks(n: int, n_resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    """The same sign vectors, kept for the next test on as many pairs with the same seed: comparing
    many configurations on the same questions (a significance matrix, the best against each other)
    draws the identical matrix every time, and drawing it costs ~25x the test itself."""
    chunks = tuple(_sign_chunks(n, n_resamples, seed))
    for c in chunks:
        c.flags.writeable = False
    return chunks


def _exact_nulls(d: np.ndarray):
    """The sums ``s @ d`` over all ``2**k`` sign vectors s, in blocks that bound memory: the signs of the
    last coordinates are fixed per block and those of the first ``j`` enumerated within it."""
    k = d.size
    j = k
    while j > 1 and 2**j * j > _MAX_CHUNK_ELEMENTS:
        j -= 1
    low = _all_sign_flips(j) @ d[:j]
    for high in range(2 ** (k - j)):
        signs = ((high >> np.arange(k - j)) & 1) * 2.0 - 1.0
        yield low + float(signs @ d[j:])


@functools.lru_cache(maxsize=24)
def _all_sign_flips(n: int) -> np.ndarray:
    """Every one of the ``2**n`` vectors in {-1, +1}^n, one per row (read-only, cached: a matrix of
    tests enumerates the same few sizes over and over; ``_exact_nulls`` keeps n small)."""
    bits = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
    flips = bits * 2.0 - 1.0
    flips.flags.writeable = False
    return flips
