"""Percentile-bootstrap confidence intervals for per-question metric means."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

# Upper bound on resampled indices held at once (~32 MiB of int64), so n = 10^5 stays bounded.
_MAX_CHUNK_ELEMENTS = 1 << 22


def bootstrap_ci(
    values: Iterable[float],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Return ``(mean, low, high)``: the sample mean and its percentile-bootstrap interval.

    Efron & Tibshirani 1993, "An Introduction to the Bootstrap", ch. 13. NaNs
    (undefined per-question metrics) are dropped first. No values give NaNs;
    a constant sample (including one value) gives a zero-width interval.
    Resamples are drawn in row chunks to bound memory; the result depends only
    on ``values``, ``n_resamples``, ``confidence`` and ``seed``.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if not isinstance(values, (np.ndarray, pd.Series, Sequence)):
        values = list(values)  # a one-shot iterable
    x = np.asarray(values, dtype=float).ravel()
    x = x[~np.isnan(x)]
    n = x.size
    if n == 0:
        nan = float("nan")
        return (nan, nan, nan)
    if np.all(x == x[0]):  # exact, with no floating-point drift from averaging copies
        v = float(x[0])
        return (v, v, v)
    rng = np.random.default_rng(seed)
    rows = max(1, _MAX_CHUNK_ELEMENTS // n)
    means = np.empty(n_resamples)
    for lo in range(0, n_resamples, rows):
        hi = min(lo + rows, n_resamples)
        means[lo:hi] = x[rng.integers(0, n, size=(hi - lo, n))].mean(axis=1)
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return (float(x.mean()), float(low), float(high))


def nested_bootstrap_ci(
    groups: Sequence[Sequence[float]], n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """``(mean, low, high)`` of the mean of per-question means when each question has several measurements (a
    judge's repeats): each resample draws the questions with replacement, then each drawn question's repeats with
    replacement (the two-stage bootstrap; Davison & Hinkley 1997, "Bootstrap Methods and their Application",
    sec. 3.8), so the interval carries the judge's own noise beside the questions'. NaNs are dropped; a question
    with no value is left out."""
    qs = [x[~np.isnan(x)] for x in (np.asarray(g, dtype=float).ravel() for g in groups)]
    qs = [x for x in qs if x.size]
    if not qs:
        nan = float("nan")
        return (nan, nan, nan)
    mean = float(np.mean([x.mean() for x in qs]))
    if all(np.all(x == qs[0][0]) for x in qs):
        return (mean, mean, mean)
    rng = np.random.default_rng(seed)
    n = len(qs)
    sizes = np.array([x.size for x in qs])
    width = int(sizes.max())
    padded = np.full((n, width), np.nan)
    for i, x in enumerate(qs):
        padded[i, : x.size] = x
    means = np.empty(n_resamples)
    for b in range(n_resamples):
        pick = rng.integers(0, n, n)
        draws = np.floor(rng.random((n, width)) * sizes[pick][:, None]).astype(int)
        values = padded[pick[:, None], draws]
        used = np.arange(width)[None, :] < sizes[pick][:, None]
        means[b] = float((np.where(used, values, 0.0).sum(axis=1) / sizes[pick]).mean())
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return (mean, float(low), float(high))


def summarise(
    df: pd.DataFrame,
    group_cols: Sequence[str],
    metric_cols: Sequence[str],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per group: for each metric ``m`` the columns ``m``, ``m_lo``, ``m_hi``, ``m_n``.

    ``m`` is the mean over non-NaN values, ``m_lo``/``m_hi`` its bootstrap
    interval, ``m_n`` the count of non-NaN values. Every group and metric uses
    the same ``seed``, so groups of equal size share resampling indices
    (common random numbers), and the output is deterministic; groups are sorted.
    """
    group_cols = list(group_cols)
    metric_cols = list(metric_cols)
    columns = group_cols + [f"{m}{suffix}" for m in metric_cols for suffix in ("", "_lo", "_hi", "_n")]
    if group_cols:
        groups = [
            (key if isinstance(key, tuple) else (key,), frame)
            for key, frame in df.groupby(group_cols, sort=True, dropna=False)
        ]
    else:
        groups = [((), df)] if len(df) else []
    records = []
    for key, frame in groups:
        row: dict[str, object] = dict(zip(group_cols, key))
        for m in metric_cols:
            vals = pd.to_numeric(frame[m], errors="coerce").to_numpy(dtype=float)
            mean, low, high = bootstrap_ci(vals, n_resamples, confidence, seed)
            row[m], row[f"{m}_lo"], row[f"{m}_hi"] = mean, low, high
            row[f"{m}_n"] = int(np.count_nonzero(~np.isnan(vals)))
        records.append(row)
    return pd.DataFrame.from_records(records, columns=columns)
