"""Paired significance tests and effect sizes for comparing configurations on the same questions.

Every configuration answers the same questions, so comparisons are paired per question: the
question-to-question variance, usually the largest, cancels out (Smucker, Allan & Carterette
2007, "A Comparison of Statistical Significance Tests for Information Retrieval Evaluation",
CIKM, recommend the paired randomization test for this). The tests themselves live in
``paired_tests`` (``paired_test`` picks one whose p-values can reach Holm's thresholds at any grid
size); this module adds effect sizes, confidence intervals and the families of comparisons.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ragsweep.evaluation.bootstrap import bootstrap_ci
from ragsweep.evaluation.paired_tests import mean_of, paired_test_measured, paired_values
from ragsweep.evaluation.test_options import DEFAULT, TestOptions

if TYPE_CHECKING:
    import pandas as pd

_RTOL = 100 * np.finfo(float).eps  # rounding noise, relative to the values' magnitude

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
    "test",
]


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
    return _dz(d[~np.isnan(d)])


def _dz(d: np.ndarray) -> float:
    """``cohens_dz`` of differences without NaN."""
    if d.size < 2:
        return float("nan")
    mean = mean_of(d)
    centred = d - mean
    sd = math.sqrt(float(centred @ centred) / (d.size - 1))
    # A constant shift computed in floating point leaves rounding noise in sd; treat it as zero.
    if sd <= _RTOL * float(np.abs(d).max()):
        return 0.0 if mean == 0 else math.copysign(math.inf, mean)
    return mean / sd


def paired_difference(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """Means, mean difference ``a - b`` with its percentile-bootstrap CI, and d_z, over pairs both measured.

    The CI resamples whole pairs (Efron & Tibshirani 1993, "An Introduction to the Bootstrap",
    ch. 13), which for a mean difference is resampling the differences, so it reuses
    ``bootstrap_ci``. ``n_resamples=0`` skips the CI (NaN bounds), for when only the test is
    wanted (simulations, very large grids). No pairs give NaNs with ``n = 0``.
    """
    x, y = paired_values(a, b)
    return _difference(x, y, n_resamples, confidence, seed)


def _difference(x: np.ndarray, y: np.ndarray, n_resamples: int, confidence: float, seed: int) -> PairedDifference:
    """``paired_difference`` of pairs both measured."""
    d = x - y
    nan = float("nan")
    if n_resamples == 0:
        diff, lo, hi = (mean_of(d) if d.size else nan), nan, nan
    else:
        diff, lo, hi = bootstrap_ci(d, n_resamples, confidence, seed)
    return PairedDifference(
        n=int(d.size),
        mean_a=mean_of(x) if d.size else nan,
        mean_b=mean_of(y) if d.size else nan,
        diff=diff,
        diff_lo=lo,
        diff_hi=hi,
        d_z=_dz(d),
    )


def compare_pair(a: Sequence[float], b: Sequence[float], tests: TestOptions = DEFAULT, family_size: int = 1) -> dict:
    """One paired comparison, ``a - b``: ``paired_difference`` (n, means, difference with CI, d_z) and the
    two-sided ``paired_test`` p-value with the name of its test (``test``), as a dict. ``family_size``:
    how many comparisons share the multiple-comparison correction this p-value enters."""
    x, y = paired_values(a, b)  # once: both parts below take the measured pairs as they are
    pair = _difference(x, y, tests.n_boot, tests.confidence, tests.seed)
    t = paired_test_measured(x, y, "two-sided", tests=tests, family_size=family_size)
    return {
        "n": pair.n,
        "mean_a": pair.mean_a,
        "mean_b": pair.mean_b,
        "diff": pair.diff,
        "diff_lo": pair.diff_lo,
        "diff_hi": pair.diff_hi,
        "d_z": pair.d_z,
        "p_value": t.p_value,
        "test": t.method,
    }


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
    tests: TestOptions = DEFAULT,
) -> pd.DataFrame:
    """Compare the best configuration with every other on the questions both measured.

    ``values`` has columns config_id, qid and ``metric`` (NaN = unmeasured). The best is
    ``best`` or the configuration with the best mean. Each comparison is a two-sided
    ``paired_test`` (its name in ``test``) in a family of the n - 1 comparisons, Holm-adjusted
    across them (``holm``; Holm 1979), plus ``paired_difference`` of best − other. All
    comparisons share ``tests.seed`` (common random numbers). A best picked on these same questions
    makes the p-values optimistic (the winner's curse): pass a ``best`` chosen on other questions
    for a confirmatory verdict. One row per other configuration (columns ``COMPARE_COLUMNS``),
    sorted by ``mean_other`` (its mean on the shared questions) best first, ties by id;
    ``attrs["family"]`` names the family. Empty for fewer than two configurations.
    """
    import pandas as pd

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
    columns = {c: matrix[c].to_numpy() for c in ranked}
    records = []
    for other in others:
        t = compare_pair(columns[best], columns[other], tests, family_size=len(others))
        records.append(
            {
                "metric": metric,
                "best": best,
                "other": other,
                "n": t["n"],
                "mean_best": t["mean_a"],
                "mean_other": t["mean_b"],
                **{k: t[k] for k in ("diff", "diff_lo", "diff_hi", "d_z", "p_value", "test")},
            }
        )
    sign = -1.0 if higher_is_better else 1.0
    records.sort(key=lambda r: (math.isnan(r["mean_other"]), sign * np.nan_to_num(r["mean_other"]), str(r["other"])))
    out = pd.DataFrame.from_records(_holm_rows(records, tests.alpha), columns=COMPARE_COLUMNS)
    out.attrs["family"] = f"{best} vs each of {len(others)} other(s)"
    return out


PAIRWISE_COLUMNS = [
    "metric",
    "a",
    "b",
    "n",
    "mean_a",
    "mean_b",
    "diff",
    "diff_lo",
    "diff_hi",
    "d_z",
    "p_value",
    "p_holm",
    "significant",
    "test",
]


def pairwise_tests(values: pd.DataFrame, metric: str, *, tests: TestOptions = DEFAULT) -> pd.DataFrame:
    """Every pair of configurations in ``values`` (config_id, qid, metric): the same paired test,
    difference CI and effect size as ``compare_to_best``, Holm-adjusted across all C(n, 2) pairs
    (the family is the whole matrix, so a cell's star survives looking at every cell).

    Exploratory: it answers "which differences stand out?", not "is the chosen configuration
    better?" (that is ``compare_to_best`` with a best picked on other questions). Its family grows
    with the square of the grid, so only ``paired_test`` p-values, which can go below
    ``alpha / C(n, 2)``, keep it able to reject. One row per unordered pair, ``a`` ranked above
    ``b`` (best mean first), ``diff = a - b``; ``attrs["family"]`` names the family.
    """
    import pandas as pd

    if values.empty:
        return pd.DataFrame(columns=PAIRWISE_COLUMNS)
    matrix = question_matrix(values, metric)
    ranked = rank_configs(matrix)
    columns = {c: matrix[c].to_numpy() for c in ranked}
    family = len(ranked) * (len(ranked) - 1) // 2
    rows = []
    for i, a in enumerate(ranked):
        for b in ranked[i + 1 :]:
            rows.append(
                {
                    "metric": metric,
                    "a": a,
                    "b": b,
                    **compare_pair(columns[a], columns[b], tests, family_size=max(family, 1)),
                }
            )
    out = pd.DataFrame.from_records(_holm_rows(rows, tests.alpha), columns=PAIRWISE_COLUMNS)
    out.attrs["family"] = f"all {family} pairs of {len(ranked)} configurations (exploratory)"
    return out


def _holm_rows(rows: list[dict], alpha: float) -> list[dict]:
    """Add ``p_holm`` (Holm over the rows' ``p_value``s: one family) and ``significant`` to each row."""
    for r, p in zip(rows, holm([r["p_value"] for r in rows])):
        r["p_holm"] = p
        r["significant"] = bool(p < alpha)
    return rows
