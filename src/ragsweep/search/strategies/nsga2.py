"""NSGA-II (Deb et al. 2002, "A Fast and Elitist Multiobjective Genetic Algorithm: NSGA-II", IEEE TEVC 6(2)),
Optuna's ``NSGAIISampler``: a multi-objective search for the Pareto front of quality, latency and cost."""

from __future__ import annotations

from ragsweep.search.strategies.base import SAMPLER, Strategy


class NSGA2Strategy(Strategy):
    name = "nsga2"

    def sampler(self):
        import optuna

        population = 50 if self.limit is None else max(4, min(50, self.limit // 4))
        return optuna.samplers.NSGAIISampler(seed=self.seed, population_size=population)

    def propose(self, space, trials: list, pending: set[str]):
        return SAMPLER
