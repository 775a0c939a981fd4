"""How well predicted classes agree with the labels: macro-F1 with a percentile-bootstrap CI, and the
confusion matrix.

Macro-F1 is the mean of the per-class F1 over the classes present in the labels or the predictions
(scikit-learn's ``f1_score(average="macro")``), the measure HyPA-RAG reports for its classifier. Its
CI resamples questions with replacement (Efron & Tibshirani 1993, ch. 13, as
``evaluation.bootstrap``), recomputing macro-F1 on each resample; a resample in which a class is
absent from both labels and predictions averages over the classes it has.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def _codes(truth: Sequence[str], pred: Sequence[str], classes: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    index = {c: i for i, c in enumerate(classes)}
    return np.array([index[t] for t in truth], dtype=np.int64), np.array([index[p] for p in pred], dtype=np.int64)


def _macro_f1(counts: np.ndarray) -> np.ndarray:
    """Macro-F1 per row of ``counts`` (rows x K x K confusion counts, truth by prediction)."""
    tp = np.diagonal(counts, axis1=1, axis2=2).astype(float)
    support = counts.sum(axis=2) + counts.sum(axis=1)  # 2tp + fp + fn
    present = support > 0
    f1 = np.divide(2 * tp, support, out=np.zeros_like(tp), where=present)
    return f1.sum(axis=1) / np.maximum(present.sum(axis=1), 1)


def macro_f1(truth: Sequence[str], pred: Sequence[str], classes: Sequence[str]) -> float:
    if not len(truth):
        return float("nan")
    return float(_macro_f1(np.array([confusion(truth, pred, classes)]))[0])


def confusion(truth: Sequence[str], pred: Sequence[str], classes: Sequence[str]) -> list[list[int]]:
    """Counts, a row per true class and a column per predicted class, both in ``classes`` order."""
    t, p = _codes(truth, pred, classes)
    k = len(classes)
    return np.bincount(t * k + p, minlength=k * k).reshape(k, k).tolist()


def macro_f1_ci(
    truth: Sequence[str],
    pred: Sequence[str],
    classes: Sequence[str],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """``(macro-F1, low, high)``; NaNs without questions. Depends only on its arguments."""
    n = len(truth)
    if n == 0:
        nan = float("nan")
        return (nan, nan, nan)
    t, p = _codes(truth, pred, classes)
    k = len(classes)
    cell = t * k + p
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(n_resamples, n))
    rows = np.repeat(np.arange(n_resamples), n) * (k * k) + cell[draws].ravel()
    counts = np.bincount(rows, minlength=n_resamples * k * k).reshape(n_resamples, k, k)
    stats = _macro_f1(counts)
    alpha = 1.0 - confidence
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return (macro_f1(truth, pred, classes), float(low), float(high))
