"""The search loop: ask the strategy (or its sampler) for trials, evaluate them, tell the study, until
the budget is spent, the space is exhausted or the strategy has nothing more to try.

Evaluation is a callable (configurations -> ``Outcome`` per configuration hash), so the same loop
drives a sweep (the plan of stages on the validation questions) and the benchmark (a replay of a
full grid's records).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragsweep.search.cost import CostModel, features, shared_units
from ragsweep.search.strategies.base import SAMPLER
from ragsweep.search.trials import Outcome, Trial

if TYPE_CHECKING:
    from ragsweep.search.space import ConfigLike

MAX_REPEATS = 50  # a sampler proposing only evaluated configurations this often in a row has converged


@dataclass(frozen=True)
class Limits:
    """The budget: evaluated trials, compute seconds and LLM dollars (None: no limit)."""

    trials: int | None = None
    seconds: float | None = None
    usd: float | None = None

    def reached(self, trials: list[Trial]) -> str | None:
        """Why the search must stop now, or None."""
        done = [t for t in trials if t.evaluated]
        if self.trials is not None and len(done) >= self.trials:
            return f"budget: {self.trials} trials"
        if self.seconds is not None and sum(t.seconds for t in done) >= self.seconds:
            return f"budget: {self.seconds:g} s"
        if self.usd is not None and sum(t.usd for t in done) >= self.usd:
            return f"budget: ${self.usd:g}"
        return None

    def room(self, trials: list[Trial]) -> int | None:
        """Trials still allowed by the trial limit."""
        return None if self.trials is None else self.trials - sum(t.evaluated for t in trials)


@dataclass(frozen=True)
class Asking:
    """How the loop asks trials and reports them (the budget aside, ``Limits``): ``batch`` configurations per
    evaluation, each the cheapest of ``pool`` proposals by what it adds over ``questions`` questions given
    ``done`` (shared units cached before); ``on_trial(n)`` is called with the number of configurations each
    evaluation evaluated. One bundle for the sweep, the benchmark and the tests."""

    batch: int = 1
    on_trial: Callable[[int], None] | None = None
    questions: int = 1
    pool: int = 1
    done: set | None = None


Evaluate = Callable[[list], dict[str, Outcome]]


def run_search(study, space, strategy, limits: Limits, evaluate: Evaluate, asking: Asking = Asking()) -> str:
    """Resume the study's unfinished trials, then search as ``asking`` says; returns why it stopped. Each asked
    trial keeps what it adds (``cost.features`` over ``asking.questions`` questions, given the units evaluated
    trials computed and ``asking.done``: units cached before) and the seconds ``cost.CostModel`` predicts for it;
    with ``asking.pool`` > 1 (cost-aware) the cheapest of the pool's proposals is evaluated, the others skipped."""
    _resume(study, space, evaluate, asking.on_trial)
    repeats = 0
    while True:
        trials = study.trials()
        reason = limits.reached(trials)
        if reason is not None:
            return reason
        evaluated = {t.config_hash: t for t in trials if t.evaluated}
        if len(evaluated) >= len(space):
            return "every configuration evaluated"
        room = limits.room(trials)
        size = asking.batch if room is None else max(1, min(asking.batch, room))
        computed = set(asking.done or ()) | {u for h in evaluated for u in shared_units(space.by_hash[h])}
        model = CostModel([(t.features, t.seconds) for t in trials if t.evaluated and t.features])
        asked: list[tuple[int, ConfigLike]] = []
        echoes: list[tuple[int, str]] = []  # repeats of a configuration asked in this batch
        finished = False
        while len(asked) < size and not finished and repeats < MAX_REPEATS:
            candidates: list[tuple[int, ConfigLike]] = []
            while len(candidates) < asking.pool and repeats < MAX_REPEATS:
                pending = {c.config_hash for _, c in asked + candidates}
                if study.waiting():  # enqueued by a killed invocation: asked first, on its own parameters
                    number, config = study.ask(space, None, _batch_no(trials))
                else:
                    params = strategy.propose(space, trials, pending)
                    if params is None:
                        finished = True
                        break
                    number, config = study.ask(space, None if params == SAMPLER else params, _batch_no(trials))
                h = config.config_hash
                if h in evaluated or h in pending:
                    repeats += 1
                    if h in evaluated:
                        study.tell(number, _again(evaluated[h]), repeat_of=evaluated[h].number)
                    else:
                        echoes.append((number, h))
                    continue
                repeats = 0
                candidates.append((number, config))
            if not candidates:
                break
            adds = computed | {u for _, c in asked for u in shared_units(c)}
            feats = [features(c, adds, asking.questions) for _, c in candidates]
            costs = [model.predict(f) for f in feats]
            pick = min(
                range(len(candidates)),
                key=lambda i: (costs[i] if costs[i] is not None else CostModel.proxy(feats[i]), i),
            )
            for i, (number, config) in enumerate(candidates):
                if i != pick:
                    study.skip(number, f"cost-aware: {candidates[pick][1].config_id} was predicted cheaper")
            number, config = candidates[pick]
            study.annotate(number, features=feats[pick], predicted_seconds=costs[pick])
            asked.append((number, config))
        if not asked:
            _tell_echoes(study, echoes, {})
            return (
                "the sampler keeps proposing evaluated configurations"
                if repeats >= MAX_REPEATS
                else "the strategy has nothing more to try"
            )
        outcomes = evaluate([c for _, c in asked])
        numbers = {}
        for number, config in asked:
            study.tell(number, outcomes[config.config_hash])
            numbers[config.config_hash] = number
        _tell_echoes(study, echoes, numbers)
        if asking.on_trial is not None:
            asking.on_trial(len(asked))


def _resume(study, space, evaluate: Evaluate, on_trial) -> None:
    """Finish the trials a killed invocation left running, under their own numbers: those it had chosen to
    evaluate (``annotate`` marks them with what they add), each configuration once. The rest were proposals
    not yet chosen (a cost-aware pool, a repeat in a batch): skipped, as they would have been."""
    running = [t for t in study.trials() if t.state == "running"]
    chosen, seen = [], set()
    for t in running:
        if t.config_hash is None or t.config_hash not in space.by_hash:
            study.fail_unchosen(t.number, "interrupted before its configuration was chosen")
        elif t.features is None or t.config_hash in seen:
            study.skip(t.number, "interrupted before it was chosen for evaluation")
        else:
            seen.add(t.config_hash)
            chosen.append(t)
    if chosen:
        outcomes = evaluate([space.by_hash[t.config_hash] for t in chosen])
        for t in chosen:
            study.tell(t.number, outcomes[t.config_hash])
        if on_trial is not None:
            on_trial(len(chosen))


def _again(trial: Trial) -> Outcome:
    """A repeat's outcome: the earlier trial's values, nothing computed."""
    if trial.state == "failed":
        return Outcome(None, reason=f"repeat of failed trial {trial.number}")
    if trial.state == "pruned":
        return Outcome(dict(trial.values), dropped=trial.dropped)
    return Outcome(dict(trial.values))


def _tell_echoes(study, echoes: list[tuple[int, str]], numbers: dict[str, int]) -> None:
    if not echoes:
        return
    by_number = {t.number: t for t in study.trials()}
    for number, h in echoes:
        first = by_number.get(numbers.get(h, -1))
        if first is None:  # a repeat of a proposal the cost-aware choice skipped
            study.skip(number, "repeat of a proposal that was not evaluated")
        else:
            study.tell(number, _again(first), repeat_of=first.number)


def _batch_no(trials: list[Trial]) -> int:
    return 1 + max((t.batch or 0 for t in trials), default=0)
