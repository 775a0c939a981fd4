"""How much a judge disagrees with itself: Krippendorff's alpha across repeats of each judgement, with a bootstrap
CI over the judged items, and the share of items whose verdict flips (pure numpy).

Each item (a configuration's answer to a question) is a unit and each repeat of its judgement a coder.
Krippendorff's alpha = 1 - D_o / D_e, the disagreement observed within items over the disagreement expected
from all the values pooled (Krippendorff 2004, "Content Analysis", ch. 11; Hayes & Krippendorff 2007,
"Answering the call for a standard reliability measure for coding data", Communication Methods and Measures
1(1)); interval differences (v - w)^2 for a 1-5 score, nominal ones (v != w) for a YES/NO verdict. Items with
fewer than two values are not pairable and count for nothing. alpha is 1 when every item's repeats agree and
about 0 when they agree no more than values drawn at random from the judge's own distribution. The CI
resamples items (the unit bootstrap); an alpha whose CI reaches 0 means the judge cannot be told from a coin
with its own bias, so no verdict stands on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SelfAgreement:
    alpha: float  # NaN when undefined: fewer than two pairable items, or one value everywhere (nothing to tell)
    lo: float
    hi: float
    flips: float  # share of pairable items whose repeats are not all the same
    n_items: int  # pairable items (two values or more)
    repeats: int  # the most values an item has

    @property
    def no_better_than_chance(self) -> bool:
        """alpha's CI reaches 0 (or alpha is undefined): the judge's verdicts are not reproducible."""
        return not (self.lo == self.lo) or self.lo <= 0.0

    def as_dict(self) -> dict:
        return {k: (None if isinstance(v, float) and v != v else v) for k, v in self.__dict__.items()}


def _alpha(units: list[np.ndarray], nominal: bool) -> float:
    """Krippendorff's alpha of pairable ``units`` (arrays of two or more values each)."""
    if len(units) < 2:
        return float("nan")
    values = np.concatenate(units)
    n = values.size
    if nominal:
        observed = 0.0
        for u in units:
            _, counts = np.unique(u, return_counts=True)
            observed += (u.size**2 - float((counts**2).sum())) / (u.size - 1)
        _, counts = np.unique(values, return_counts=True)
        expected = (n**2 - float((counts**2).sum())) / (n * (n - 1))
    else:
        observed = sum(2.0 * (u.size * float((u**2).sum()) - float(u.sum()) ** 2) / (u.size - 1) for u in units)
        expected = 2.0 * (n * float((values**2).sum()) - float(values.sum()) ** 2) / (n * (n - 1))
    observed /= n
    if expected <= 1e-12:
        return float("nan")
    return 1.0 - observed / expected


def self_agreement(
    items: Sequence[Sequence[float | None]],
    *,
    nominal: bool,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> SelfAgreement:
    """Krippendorff's alpha of ``items`` (each: its repeats' values, None or NaN where a repeat was unmeasured),
    its percentile CI over ``n_boot`` resamples of the items, and the share of items that flip."""
    units = []
    for values in items:
        v = np.array([x for x in values if x is not None and x == x], dtype=float)
        if v.size >= 2:
            units.append(v)
    repeats = max((len(v) for v in items), default=0)
    nan = float("nan")
    if len(units) < 2:
        return SelfAgreement(nan, nan, nan, nan, len(units), repeats)
    alpha = _alpha(units, nominal)
    flips = float(np.mean([np.unique(u).size > 1 for u in units]))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        pick = rng.integers(0, len(units), len(units))
        a = _alpha([units[i] for i in pick], nominal)
        if a == a:
            draws.append(a)
    if not draws or alpha != alpha:
        return SelfAgreement(alpha, nan, nan, flips, len(units), repeats)
    tail = (1 - confidence) / 2
    lo, hi = (float(x) for x in np.quantile(draws, [tail, 1 - tail]))
    return SelfAgreement(float(alpha), lo, hi, flips, len(units), repeats)
