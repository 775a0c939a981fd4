"""How a run's paired tests and confidence intervals are made: one frozen bundle, built once from the spec.

The significance level, the resamples behind a test's p-value and behind an interval, the intervals' level, the
seed every comparison of a family shares (common random numbers) and the test method were threaded by hand through
the verdict, the summary's comparisons, the significance matrix and stage 2's selection; a caller that forgot one
got the default silently. They travel together now (``TestOptions.of(spec)``), as a ``Study`` carries a study.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

# paired_tests.paired_test's choices: "auto" picks the exact test its p-values need, "permutation" always flips signs
METHODS = ("auto", "permutation")


@dataclass(frozen=True)
class TestOptions:
    """``alpha``: the family-wise significance level (Holm); ``n_resamples``: sign-flip resamples behind a
    paired test (``paired_tests.paired_test``, at least what the family's smallest Holm threshold needs);
    ``n_boot``: bootstrap resamples behind every confidence interval (0: none); ``confidence``: the intervals'
    level; ``seed``: shared by every comparison and interval; ``method``: ``METHODS``."""

    __test__ = False  # not a pytest class, whatever its name says

    alpha: float = 0.05
    n_resamples: int = 10_000
    n_boot: int = 1000
    confidence: float = 0.95
    seed: int = 0
    method: str = "auto"

    def __post_init__(self) -> None:
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.n_resamples < 1:
            raise ValueError(f"n_resamples must be at least 1, got {self.n_resamples}")

    @classmethod
    def of(cls, spec) -> TestOptions:
        """A run's: ``scoring.alpha``, ``bootstrap_samples`` and ``confidence``, and its seed."""
        s = spec.scoring
        return cls(alpha=s.alpha, n_boot=s.bootstrap_samples, confidence=s.confidence, seed=spec.seed)

    def at(self, alpha: float) -> TestOptions:
        """The same at another significance level (stage 2's selection, a race's)."""
        return replace(self, alpha=alpha)


DEFAULT = TestOptions()
