"""Paired significance tests and effect sizes for comparing configurations on the same questions.

Every configuration answers the same questions, so comparisons are paired per question: the
question-to-question variance, usually the largest, cancels out (Smucker, Allan & Carterette
2007, "A Comparison of Statistical Significance Tests for Information Retrieval Evaluation",
CIKM, recommend the paired randomization test for this).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ragsweep.evaluation.bootstrap import bootstrap_ci

if TYPE_CHECKING:
    import pandas as pd

ALTERNATIVES = ("two-sided", "greater", "less")
COMPARE_COLUMNS = [
    "metric",
    "best",
    "other",
    "n",
    "mean_best",
    "mean_other",
    "diff",
    "diff_lo",
    "diff_hi",
    "d_z",
    "p_value",
    "p_holm",
    "significant",
]
# Upper bound on sign-flip matrix elements held at once (~32 MiB of float64).
_MAX_CHUNK_ELEMENTS = 1 << 22
# Sign-flip matrices up to this size (~128 MiB of float64; 10,000 x 1,600 questions) are kept for reuse.
_MAX_CACHED_ELEMENTS = 1 << 24


@dataclass(frozen=True)
class PairedDifference:
    """Means of two paired samples, the mean difference ``a - b`` with its CI, and Cohen's d_z."""

    n: int
    mean_a: float
    mean_b: float
    diff: float
    diff_lo: float
    diff_hi: float
    d_z: float


def paired_values(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of ``a`` and ``b`` where both are measured (NaN marks an unmeasured value)."""
    x = np.asarray(a, dtype=float).ravel()
    y = np.asarray(b, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired samples must have equal lengths, got {x.size} and {y.size}")
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def paired_permutation_test(
    a: Sequence[float],
    b: Sequence[float],
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> float:
    """p-value for H0 "mean(a - b) = 0" by flipping the signs of the paired differences.

    Fisher 1935, "The Design of Experiments", sec. 21; Good 2005, "Permutation, Parametric and
    Bootstrap Tests of Hypotheses", 3rd ed. Under H0 each difference is as likely
    positive as negative. All ``2**n`` sign vectors are enumerated when ``2**n <= n_resamples``
    (exact test); otherwise ``n_resamples`` random ones are drawn and the p-value is
    ``(hits + 1) / (n_resamples + 1)``, never zero (Phipson & Smyth 2010, "Permutation P-values
    Should Never Be Zero", SAGMB 9(1)). "greater" means a is better (higher) than b; two-sided
    is twice the smaller one-sided p-value, capped at 1. Conventions match
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
    gamma = abs(observed) * np.finfo(float).eps * 100
    exact = n < 63 and 2**n <= n_resamples
    if exact:
        null = _all_sign_flips(n) @ d / n
        less, greater = np.sum(null <= observed + gamma), np.sum(null >= observed - gamma)
        total, adjust = null.size, 0
    else:
        chunks = (_cached_sign_chunks(n, n_resamples, seed) if n * n_resamples <= _MAX_CACHED_ELEMENTS
                  else _sign_chunks(n, n_resamples, seed))
        less = greater = 0
        for signs in chunks:
            null = signs @ d / n
            less += int(np.sum(null <= observed + gamma))
            greater += int(np.sum(null >= observed - gamma))
        total, adjust = n_resamples, 1
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


def _all_sign_flips(n: int) -> np.ndarray:
    """Every one of the ``2**n`` vectors in {-1, +1}^n, one per row."""
    bits = (np.arange(2**n)[:, None] >> np.arange(n)) & 1
    return bits * 2.0 - 1.0


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, controlling the family-wise error rate.

    Holm 1979, "A Simple Sequentially Rejective Multiple Test Procedure", Scand. J. Statist.
    6(2). The i-th smallest of m p-values becomes ``max_{j<=i} min(1, (m - j + 1) p_(j))``,
    so the adjusted values keep the order of the raw ones. NaNs stay in place and do not
    count towards m.
    """
    p = np.asarray(pvalues, dtype=float).ravel()
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(~np.isnan(p))
    m = idx.size
    if m:
        order = idx[np.argsort(p[idx], kind="stable")]
        scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
        out[order] = np.maximum.accumulate(scaled)
    return [float(v) for v in out]


def cohens_dz(differences: Sequence[float]) -> float:
    """Cohen's d for paired samples: ``mean(d) / sd(d)`` with ``ddof=1``.

    Cohen 1988, "Statistical Power Analysis for the Behavioral Sciences", 2nd ed.;
    Lakens 2013, "Calculating and reporting effect sizes to facilitate cumulative science",
    Front. Psychol. 4:863. NaNs are dropped. Fewer than two differences give NaN; all
    zero give 0; a constant non-zero difference (up to rounding) gives an infinity of its sign.
    """
    d = np.asarray(differences, dtype=float).ravel()
    d = d[~np.isnan(d)]
    if d.size < 2:
        return float("nan")
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    # A constant shift computed in floating point leaves rounding noise in sd; treat it as zero.
    if sd <= 100 * np.finfo(float).eps * float(np.max(np.abs(d))):
        return 0.0 if mean == 0 else math.copysign(math.inf, mean)
    return mean / sd


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """Means, mean difference ``a - b`` with its percentile-bootstrap CI, and d_z, over pairs both measured.

    The CI resamples whole pairs (Efron & Tibshirani 1993, "An Introduction to the Bootstrap",
    ch. 13), which for a mean difference is resampling the differences, so it reuses
    ``bootstrap_ci``. No pairs give NaNs with ``n = 0``.
    """
    x, y = paired_values(a, b)
    d = x - y
    diff, lo, hi = bootstrap_ci(d, n_resamples, confidence, seed)
    nan = float("nan")
    return PairedDifference(
        n=int(d.size),
        mean_a=float(x.mean()) if d.size else nan,
        mean_b=float(y.mean()) if d.size else nan,
        diff=diff,
        diff_lo=lo,
        diff_hi=hi,
        d_z=cohens_dz(d),
    )


def compare_pair(a: Sequence[float], b: Sequence[float], n_resamples: int = 10_000, n_boot: int = 1000,
              confidence: float = 0.95, seed: int = 0) -> dict:
    """One paired comparison, ``a - b``: ``paired_difference`` (n, means, difference with CI, d_z) and the
    two-sided ``paired_permutation_test`` p-value, as a dict."""
    pair = paired_difference(a, b, n_boot, confidence, seed)
    return {"n": pair.n, "mean_a": pair.mean_a, "mean_b": pair.mean_b, "diff": pair.diff, "diff_lo": pair.diff_lo,
            "diff_hi": pair.diff_hi, "d_z": pair.d_z,
            "p_value": paired_permutation_test(a, b, "two-sided", n_resamples, seed) if pair.n else float("nan")}


def question_matrix(values: pd.DataFrame, metric: str) -> pd.DataFrame:
    """``values`` (config_id, qid, metric; one row each) as a qid × config_id matrix, both axes sorted.

    Sorting makes every test independent of row order. Duplicate (config_id, qid) rows raise.
    """
    import pandas as pd

    missing = {"config_id", "qid", metric} - set(values.columns)
    if missing:
        raise ValueError(f"values lacks the column(s) {sorted(missing)}")
    if values.duplicated(["config_id", "qid"]).any():
        raise ValueError("values has more than one row for some (config_id, qid)")
    frame = values.assign(_v=pd.to_numeric(values[metric], errors="coerce").astype(float))
    wide = frame.pivot(index="qid", columns="config_id", values="_v")
    return wide.sort_index(axis=0).sort_index(axis=1)


def rank_configs(matrix: pd.DataFrame, higher_is_better: bool = True) -> list[str]:
    """Config ids of ``matrix`` best mean first; ties and unmeasured (NaN mean) configs ordered by id."""
    means = matrix.mean(axis=0, skipna=True)
    sign = -1.0 if higher_is_better else 1.0

    def key(config: str) -> tuple[bool, float, str]:
        m = float(means[config])
        return (math.isnan(m), 0.0 if math.isnan(m) else sign * m, str(config))

    return sorted(matrix.columns, key=key)


def compare_to_best(
    values: pd.DataFrame,
    metric: str,
    *,
    best: str | None = None,
    higher_is_better: bool = True,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Compare the best configuration with every other on the questions both measured.

    ``values`` has columns config_id, qid and ``metric`` (NaN = unmeasured). The best is
    ``best`` or the configuration with the best mean. Each comparison is a two-sided paired
    permutation test (``paired_permutation_test``) with Holm-adjusted p-values across the
    comparisons (``holm``), plus ``paired_difference`` of best − other. All comparisons share
    ``seed`` (common random numbers). One row per other configuration (columns
    ``COMPARE_COLUMNS``), sorted by ``mean_other`` (its mean on the shared questions) best
    first, ties by id; empty for fewer than two configurations.
    """
    import pandas as pd

    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    empty = pd.DataFrame(columns=COMPARE_COLUMNS)
    if values.empty:
        return empty
    matrix = question_matrix(values, metric)
    ranked = rank_configs(matrix, higher_is_better)
    if best is None:
        best = ranked[0]
    elif best not in matrix.columns:
        raise ValueError(f"best configuration {best!r} is not in values")
    others = [c for c in ranked if c != best]
    if not others:
        return empty
    records = []
    for other in others:
        t = compare_pair(matrix[best].to_numpy(), matrix[other].to_numpy(), n_resamples, n_boot, confidence, seed)
        records.append({"metric": metric, "best": best, "other": other, "n": t["n"], "mean_best": t["mean_a"],
                        "mean_other": t["mean_b"], **{k: t[k] for k in ("diff", "diff_lo", "diff_hi", "d_z", "p_value")}})
    sign = -1.0 if higher_is_better else 1.0
    records.sort(key=lambda r: (math.isnan(r["mean_other"]), sign * np.nan_to_num(r["mean_other"]), str(r["other"])))
    return pd.DataFrame.from_records(_holm_rows(records, alpha), columns=COMPARE_COLUMNS)


PAIRWISE_COLUMNS = ["metric", "a", "b", "n", "mean_a", "mean_b", "diff", "diff_lo", "diff_hi", "d_z", "p_value",
                    "p_holm", "significant"]


def pairwise_tests(
    values: pd.DataFrame,
    metric: str,
    *,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Every pair of configurations in ``values`` (config_id, qid, metric): the same paired test,
    difference CI and effect size as ``compare_to_best``, Holm-adjusted across all pairs (the
    family is the whole matrix, so a cell's star survives looking at every cell).

    One row per unordered pair, ``a`` ranked above ``b`` (best mean first), ``diff = a - b``.
    """
    import pandas as pd

    if values.empty:
        return pd.DataFrame(columns=PAIRWISE_COLUMNS)
    matrix = question_matrix(values, metric)
    ranked = rank_configs(matrix)
    rows = []
    for i, a in enumerate(ranked):
        for b in ranked[i + 1:]:
            rows.append({"metric": metric, "a": a, "b": b,
                         **compare_pair(matrix[a].to_numpy(), matrix[b].to_numpy(), n_resamples, n_boot, confidence, seed)})
    return pd.DataFrame.from_records(_holm_rows(rows, alpha), columns=PAIRWISE_COLUMNS)


def _holm_rows(rows: list[dict], alpha: float) -> list[dict]:
    """Add ``p_holm`` (Holm over the rows' ``p_value``s: one family) and ``significant`` to each row."""
    for r, p in zip(rows, holm([r["p_value"] for r in rows])):
        r["p_holm"] = p
        r["significant"] = bool(p < alpha)
    return rows
