"""Tree-structured Parzen Estimator (Bergstra et al. 2011, "Algorithms for Hyper-Parameter Optimization",
NeurIPS; Watanabe 2023, "Tree-Structured Parzen Estimator: Understanding Its Algorithm Components",
arXiv:2304.11127), Optuna's ``TPESampler``: multivariate, grouped by the conditional axes, with a
constant liar for batches and cost-aware pools (proposals asked before any is told); with several
objectives it is MOTPE (Ozaki et al. 2020, GECCO)."""

from __future__ import annotations

from ragsweep.search.strategies.base import SAMPLER, Strategy


class TPEStrategy(Strategy):
    name = "tpe"

    def sampler(self):
        import warnings

        import optuna

        startup = 10 if self.limit is None else max(3, min(10, self.limit // 3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.samplers.TPESampler(
                seed=self.seed,
                n_startup_trials=startup,
                multivariate=True,
                group=True,
                constant_liar=self.spec.batch > 1 or self.spec.cost_aware,
            )

    def propose(self, space, trials: list, pending: set[str]):
        return SAMPLER
