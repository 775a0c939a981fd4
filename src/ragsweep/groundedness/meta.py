"""Meta-evaluation of detectors against human labels (pure numpy/scipy).

Items are split into a dev and a test part (seeded, stratified by label and category). A detector's
threshold is tuned on dev for macro-F1 and applied on test, as in Thomson Reuters' groundedness study
(thresholds tuned on a dev split, macro-F1 reported on test against latency). On test: macro-F1 (mean of
the two classes' F1), Cohen's kappa (Cohen 1960, "A coefficient of agreement for nominal scales"), AUROC
(threshold-free; Hanley & McNeil 1982), Spearman's rho of the score with the grounded label and with the
correctness label, each with a percentile-bootstrap CI over test items (Efron & Tibshirani 1993); the
threshold is held fixed in the resamples, so its own dev-split uncertainty is not in the CIs. Latency is
the median per item over all items, cost the mean USD per item.

A detector is flagged *no better than chance* when its outputs on test are constant (every item the same
score, or the same decision at the tuned threshold: it tells nothing about the item) or kappa's CI reaches 0
(agreement beyond chance not shown); its other figures are then no evidence that it detects anything.
Items without a score (unparseable replies, failed calls) are counted, with the first one's reason.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ragsweep.errors import shorten

PASS = 4.0  # a correctness label (1-5) at or above this counts as a pass


@dataclass
class Estimate:
    value: float
    lo: float
    hi: float


@dataclass
class DetectorRow:
    detector: str
    label: str  # grounded | correctness (what the binary target is: grounded, or correctness >= PASS)
    n_dev: int
    n_test: int
    unscored: int
    threshold: float
    macro_f1: Estimate
    kappa: Estimate
    auroc: Estimate
    spearman_grounded: Estimate
    spearman_correctness: Estimate
    ms_per_item: Estimate
    usd_per_item: Estimate | None  # None: a model without a price
    per_category: dict[str, float] = field(default_factory=dict)  # test share judged grounded, per category
    n_items: int = 0  # every labelled item (``unscored`` of them got no score)
    unmeasured_example: str | None = None  # the reason of the first unscored item, shortened
    no_better_than_chance: bool = False
    chance_reason: str | None = None  # why it is flagged
    self_agreement: dict | None = None  # with repeats: Krippendorff's alpha across them, its CI, the items that flip


class LabelledSplit(NamedTuple):
    """The labelled items and their dev/test split (``split``'s indices into ``items``): what every detector's row
    is measured on, made once and passed whole to ``evaluate`` for each detector."""

    items: list
    dev: list[int]
    test: list[int]


def unmeasured(scored) -> tuple[int, str | None]:
    """How many items got no score, and the first one's reason (shortened; None when none is recorded)."""
    missing = [s for s in scored if s.score is None]
    reason = next((s.error for s in missing if s.error), None)
    return len(missing), None if reason is None else shorten(reason)


def constant_output(scores: np.ndarray, decisions: np.ndarray) -> str | None:
    """Why outputs that do not vary say nothing about the items: one score, or one decision; None if they vary."""
    if len(scores) and np.all(scores == scores[0]):
        return f"every test item scored {scores[0]:g}"
    if len(decisions) and np.all(decisions == decisions[0]):
        return f"every test item judged {'grounded' if decisions[0] else 'not grounded'} at the threshold"
    return None


def chance_reason(scores: np.ndarray, decisions: np.ndarray, k: Estimate) -> str | None:
    """Why a detector is no better than chance on test (constant outputs, or kappa's CI reaching 0); None if not."""
    constant = constant_output(scores, decisions)
    if constant is not None:
        return constant
    if k.lo == k.lo and k.lo <= 0:
        where = "includes 0" if k.hi >= 0 else "is below 0"
        return f"kappa's 95% CI [{k.lo:.3f}, {k.hi:.3f}] {where}"
    return None


def split(items, dev_fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """Indices of dev and test items: each (grounded, category, correctness pass) stratum split alike."""
    strata: dict[tuple, list[int]] = {}
    for i, it in enumerate(items):
        key = (it.grounded, it.category, None if it.correctness is None else it.correctness >= PASS)
        strata.setdefault(key, []).append(i)
    rng = random.Random(seed)
    dev, test = [], []
    for key in sorted(strata, key=str):
        idx = strata[key][:]
        rng.shuffle(idx)
        k = int(round(len(idx) * dev_fraction))
        dev += idx[:k]
        test += idx[k:]
    return sorted(dev), sorted(test)


def macro_f1(y: np.ndarray, pred: np.ndarray) -> float:
    """Mean F1 of the positive and the negative class (a class with no true and no predicted members: 1)."""
    out = []
    for cls in (True, False):
        tp = np.sum((pred == cls) & (y == cls))
        denom = np.sum(pred == cls) + np.sum(y == cls)
        out.append(1.0 if denom == 0 else 2 * tp / denom)
    return float(np.mean(out))


def kappa(y: np.ndarray, pred: np.ndarray) -> float:
    po = float(np.mean(y == pred))
    py, pp = float(np.mean(y)), float(np.mean(pred))
    pe = py * pp + (1 - py) * (1 - pp)
    return float("nan") if pe == 1 else (po - pe) / (1 - pe)


def auroc(y: np.ndarray, s: np.ndarray) -> float:
    """Probability a positive item outscores a negative one (ties half): the Mann-Whitney form."""
    from scipy.stats import rankdata

    pos, n_pos = y.astype(bool), int(y.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    r = rankdata(s)
    return float((r[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import rankdata

    if len(a) < 3 or np.all(a == a[0]) or np.all(b == b[0]):
        return float("nan")
    ra, rb = rankdata(a), rankdata(b)
    return float(np.corrcoef(ra, rb)[0, 1])


def tune_threshold(scores: np.ndarray, y: np.ndarray) -> float:
    """The threshold (score >= t: grounded) with the best dev macro-F1; ties: the lowest."""
    values = np.unique(scores)
    cands = np.concatenate([[values[0] - 1e-9], (values[:-1] + values[1:]) / 2, [values[-1] + 1e-9]])
    f1 = [macro_f1(y, scores >= t) for t in cands]
    return float(cands[int(np.argmax(f1))])


def _boot(stat, n: int, n_boot: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    vals = np.array([stat(rng.integers(0, n, n)) for _ in range(n_boot)], dtype=float)
    vals = vals[~np.isnan(vals)]
    if not vals.size:
        return float("nan"), float("nan")
    lo, hi = np.quantile(vals, [0.025, 0.975])
    return float(lo), float(hi)


def _estimate(stat, n: int, n_boot: int, seed: int) -> Estimate:
    value = stat(np.arange(n))
    lo, hi = _boot(stat, n, n_boot, seed) if value == value else (float("nan"), float("nan"))
    return Estimate(float(value), lo, hi)


def evaluate(
    name: str, label: str, labelled: LabelledSplit, scored, *, n_boot: int = 1000, seed: int = 0
) -> DetectorRow:
    """One detector's row: ``scored`` holds its ``Scored`` per item (same order as ``labelled.items``)."""
    items, dev, test = labelled

    def target(it) -> float | None:
        if label == "correctness":
            return None if it.correctness is None else float(it.correctness >= PASS)
        return None if it.grounded is None else float(it.grounded)

    def usable(idx: list[int]) -> list[int]:
        return [i for i in idx if scored[i].score is not None and target(items[i]) is not None]

    d, t = usable(dev), usable(test)
    nan = Estimate(float("nan"), float("nan"), float("nan"))
    ms = np.array([s.ms for s in scored], dtype=float)
    costs = [s.cost_usd for s in scored if s.score is not None]
    usd = None
    if costs and not any(c is None for c in costs):
        cost = np.array(costs, dtype=float)
        usd = _estimate(lambda i: float(cost[i].mean()), len(cost), n_boot, seed)
    ms_est = _estimate(lambda i: float(np.median(ms[i])), len(ms), n_boot, seed)
    unscored, example = unmeasured(scored)
    if not d or not t:
        return DetectorRow(
            name,
            label,
            len(d),
            len(t),
            unscored,
            float("nan"),
            nan,
            nan,
            nan,
            nan,
            nan,
            ms_est,
            usd,
            n_items=len(items),
            unmeasured_example=example,
        )
    s_dev = np.array([scored[i].score for i in d])
    y_dev = np.array([target(items[i]) for i in d]).astype(bool)
    thr = tune_threshold(s_dev, y_dev)
    s = np.array([scored[i].score for i in t], dtype=float)
    y = np.array([target(items[i]) for i in t]).astype(bool)
    g = np.array([np.nan if items[i].grounded is None else float(items[i].grounded) for i in t])
    c = np.array([np.nan if items[i].correctness is None else items[i].correctness for i in t])

    def corr(other: np.ndarray):
        def stat(i):
            keep = ~np.isnan(other[i])
            return spearman(s[i][keep], other[i][keep]) if keep.sum() >= 3 else float("nan")

        return stat

    n = len(t)
    row = DetectorRow(
        name,
        label,
        len(d),
        n,
        unscored,
        thr,
        macro_f1=_estimate(lambda i: macro_f1(y[i], s[i] >= thr), n, n_boot, seed),
        kappa=_estimate(lambda i: kappa(y[i], s[i] >= thr), n, n_boot, seed),
        auroc=_estimate(lambda i: auroc(y[i], s[i]), n, n_boot, seed),
        spearman_grounded=_estimate(corr(g), n, n_boot, seed) if not np.isnan(g).all() else nan,
        spearman_correctness=_estimate(corr(c), n, n_boot, seed) if not np.isnan(c).all() else nan,
        ms_per_item=ms_est,
        usd_per_item=usd,
        n_items=len(items),
        unmeasured_example=example,
    )
    row.chance_reason = chance_reason(s, s >= thr, row.kappa)
    row.no_better_than_chance = row.chance_reason is not None
    cats = sorted({items[i].category for i in t if items[i].category})
    row.per_category = {
        cat: float(np.mean([scored[i].score >= thr for i in t if items[i].category == cat])) for cat in cats
    }
    return row
