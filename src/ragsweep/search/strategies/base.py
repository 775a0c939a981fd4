"""What a search strategy is: it proposes the next configuration, or lets its Optuna sampler choose.

A strategy is rebuilt by every invocation and holds no state of its own: what it proposes is a
function of the space and the trials so far (read back from the study), so a killed search resumes
with the same proposals (random, greedy) or the sampler's view of the same trials (tpe, nsga2).
"""

from __future__ import annotations

SAMPLER = "sampler"  # propose(): let the study's sampler choose the next configuration


class Strategy:
    """Base of every strategy. ``propose`` returns the next configuration's parameters
    (``space.params``), ``SAMPLER``, or None when the strategy has nothing more to evaluate."""

    name = "base"

    def __init__(self, spec, seed: int, limit: int | None, lower_is_better: bool) -> None:
        self.spec, self.seed, self.limit, self.lower_is_better = spec, seed, limit, lower_is_better

    def sampler(self):
        """The Optuna sampler that chooses when ``propose`` says ``SAMPLER`` (a seeded random one by default,
        for trials an earlier invocation enqueued)."""
        import optuna

        return optuna.samplers.RandomSampler(seed=self.seed)

    def propose(self, space, trials: list, pending: set[str]):
        """The next configuration's parameters; ``trials``: the study's trials so far; ``pending``: hashes of
        configurations asked in this batch and not yet evaluated."""
        raise NotImplementedError
