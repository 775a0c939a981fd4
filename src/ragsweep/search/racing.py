"""Racing: evaluate configurations on growing batches of validation questions and drop those
significantly worse than the leader, so the budget goes to the contenders (Maron & Moore 1994,
"Hoeffding Races: Accelerating Model Selection Search for Classification and Function
Approximation", NeurIPS; Birattari et al. 2002, "A Racing Algorithm for Configuring
Metaheuristics", GECCO, with paired tests in place of Hoeffding bounds).

At each look but the last, every contender is compared with the leader (the best mean so far, an
already evaluated incumbent included) by a one-sided paired test (``evaluation.paired_tests.paired_test``)
on the questions both have. What a race must not do is drop the best configuration, and the best is
dropped only when one of the m - 1 others is declared better than it, whichever of them leads; so each
test is at alpha / (m - 1) and the looks share alpha (Bonferroni over the comparisons and the looks,
as Hoeffding races bound theirs): the chance of ever dropping the best stays below alpha. Holm over
every pair would also protect configurations tied with each other below the best, which a choice
does not need, at a threshold m / 2 times smaller: on LegalBench-RAG privacy_qa it saved 6 % of the
answers, where this saves more (BENCHMARKS.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field


def question_order(qids: Sequence[str], seed: int) -> list[str]:
    """The race's question order: by a seeded hash of each id, so it does not depend on the order the dataset
    lists them in (question types mix in every look)."""
    import hashlib

    return sorted(qids, key=lambda q: (hashlib.sha256(f"race:{seed}:{q}".encode()).hexdigest(), q))


def looks(n: int, first: float, growth: float, minimum: int = 10) -> list[int]:
    """Questions seen at each look: ``first`` of ``n`` (at least ``minimum``), growing by ``growth``, ending at n."""
    size = min(n, max(minimum, math.ceil(first * n)))
    out = []
    while size < n:
        out.append(size)
        size = max(size + 1, math.ceil(size * growth))
    return out + [n]


@dataclass
class RaceResult:
    """Who survived every look, who was dropped (hash -> (questions seen, Bonferroni-adjusted p-value, leader)), and the
    (configuration, question) pairs evaluated."""

    survivors: list[str]
    dropped: dict[str, tuple[int, float, str]] = field(default_factory=dict)
    pairs: dict[str, int] = field(default_factory=dict)


def _mean(values) -> float:
    import numpy as np

    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    return float(v.mean()) if v.size else math.nan


def drop(
    values: dict[str, Sequence[float]],
    higher: bool,
    alpha: float,
    protected: AbstractSet[str] = frozenset(),
    seed: int = 0,
    family: bool = True,
) -> dict[str, tuple[float, str]]:
    """The configurations significantly worse than the leader on these values (hash -> aligned per-question
    values, NaN unmeasured): hash -> (Bonferroni-adjusted p, leader). Each is compared with the leader (the best
    mean) by a one-sided paired test on the questions both measured, at ``alpha / (m - 1)``: the best
    configuration is dropped only if some other one is declared better than it, and there are m - 1 of
    those comparisons, whichever leads. Configurations tied with each other below the best may be dropped
    (a choice does not need them). ``protected`` ones (an incumbent evaluated in full) may lead, but are
    never dropped. ``family=False`` tests each at ``alpha`` (the race's alpha already shared by the looks; as Optuna's
    ``WilcoxonPruner`` tests each trial alone): the benchmark
    shows what that saves and what it risks."""
    # paired_test picks an exact test where one exists (few differing questions, or 0/1 metrics); for a
    # continuous metric on more than 13 differing questions it is the paired t-test, whose far tail at these
    # small levels is an approximation
    from ragsweep.evaluation.paired_tests import paired_test
    from ragsweep.evaluation.test_options import TestOptions

    means = {h: _mean(v) for h, v in values.items()}
    ranked = [h for h in values if not math.isnan(means[h])]
    if len(ranked) < 2:
        return {}
    sign = 1.0 if higher else -1.0
    leader = max(ranked, key=lambda h: sign * means[h])  # ties: the first listed
    m = len(ranked) if family else 2
    out: dict[str, tuple[float, str]] = {}
    for h in ranked:
        if h == leader or h in protected:
            continue
        p = paired_test(
            values[leader],
            values[h],
            "greater" if higher else "less",
            tests=TestOptions(alpha=alpha, seed=seed),
            family_size=m - 1,
        ).p_value
        adjusted = min(1.0, p * (m - 1))
        if adjusted < alpha:
            out[h] = (adjusted, leader)
    return out


@dataclass(frozen=True)
class RaceRule:
    """How a race drops configurations, the same at every look: ``higher`` (the metric is better higher), the
    ``alpha`` its looks share, the ``seed`` of its paired tests and ``family`` (``drop``'s: alpha split over the
    comparisons). One bundle for the search, the benchmark and the tests."""

    higher: bool
    alpha: float
    seed: int = 0
    family: bool = True


def race(
    contenders: list[str],
    sizes: list[int],
    values_at: Callable[[list[str], int], dict[str, Sequence[float]]],
    rule: RaceRule,
    incumbent: str | None = None,
) -> RaceResult:
    """Run a race over ``sizes`` looks by ``rule``. ``values_at(hashes, n)`` evaluates those configurations on the
    first n questions of the race's order and returns their per-question values on them (it is also asked for the
    incumbent, whose values exist already)."""
    alive = list(contenders)
    result = RaceResult([], {}, {})
    interim = max(1, len(sizes) - 1)
    for i, n in enumerate(sizes):
        values = values_at(alive + ([incumbent] if incumbent is not None else []), n)
        for h in alive:
            result.pairs[h] = n
        if i == len(sizes) - 1:
            break
        gone = drop(
            {h: values[h] for h in values},
            rule.higher,
            rule.alpha / interim,
            protected={incumbent} if incumbent is not None else set(),
            seed=rule.seed,
            family=rule.family,
        )
        for h, (p, leader) in gone.items():
            if h in alive:
                result.dropped[h] = (n, p, leader)
        alive = [h for h in alive if h not in result.dropped]
    result.survivors = alive
    return result
