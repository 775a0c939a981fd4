"""Prediction-powered inference of a mean: many judge labels, a few human labels, an honest CI (pure numpy/scipy).

A judge's mean over N answers is precise but biased by the judge's errors; the mean of n human labels is
unbiased but wide. PPI corrects the judge mean by the judge's average error on the human-labelled answers,
with a CI from both parts' variances (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023, "Prediction-
powered inference", Science 382). PPI++ weights the judge by the lambda that minimises the variance, so a
useless judge costs nothing: lambda -> 0 gives the human mean (Angelopoulos, Duchi & Zrnic 2023, "PPI++:
Efficient prediction-powered inference", arXiv:2311.01453). ARES applies it to RAG judges (Saad-Falcon et
al. 2024, NAACL).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PPIMean:
    estimate: float
    lo: float
    hi: float
    n_labelled: int
    n_unlabelled: int
    lam: float  # the judge's weight (1: classic PPI)
    human_mean: float  # the human labels alone, and their CI: what the judge adds is the narrowing
    human_lo: float
    human_hi: float


def ppi_mean(
    judge_unlabelled, judge_labelled, human_labelled, *, level: float = 0.95, power_tuning: bool = True
) -> PPIMean:
    """The mean of the human label over all answers, from the judge on the ``N`` unlabelled answers and the
    (judge, human) pairs of the ``n`` labelled ones; a normal CI at ``level``. Needs n >= 2."""
    from scipy.stats import norm

    f_u = np.asarray(judge_unlabelled, dtype=float)
    f_l = np.asarray(judge_labelled, dtype=float)
    y = np.asarray(human_labelled, dtype=float)
    if f_l.shape != y.shape:
        raise ValueError("judge_labelled and human_labelled must pair up (same length)")
    n, big_n = len(y), len(f_u)
    if n < 2:
        raise ValueError(f"PPI needs at least 2 human-labelled answers, got {n}")
    z = float(norm.ppf(0.5 + level / 2))
    h_mean, h_se = float(y.mean()), float(y.std(ddof=1) / np.sqrt(n))
    if big_n == 0:  # every answer is labelled: the human mean is the answer
        return PPIMean(
            h_mean, h_mean - z * h_se, h_mean + z * h_se, n, 0, 0.0, h_mean, h_mean - z * h_se, h_mean + z * h_se
        )
    lam = 1.0
    if power_tuning:
        f_all = np.concatenate([f_u, f_l])
        var_f = float(f_all.var(ddof=1)) if len(f_all) > 1 else 0.0
        cov = float(np.cov(y, f_l, ddof=1)[0, 1]) if n > 1 else 0.0
        lam = 0.0 if var_f == 0 else float(np.clip(cov / ((1 + n / big_n) * var_f), 0.0, 1.0))
    est = lam * float(f_u.mean()) + float(np.mean(y - lam * f_l))
    var = lam**2 * (float(f_u.var(ddof=1)) if big_n > 1 else 0.0) / big_n + float((y - lam * f_l).var(ddof=1)) / n
    se = float(np.sqrt(var))
    return PPIMean(est, est - z * se, est + z * se, n, big_n, lam, h_mean, h_mean - z * h_se, h_mean + z * h_se)
