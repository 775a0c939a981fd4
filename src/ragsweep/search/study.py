"""The search's trials in an Optuna study on SQLite (``search.sqlite`` in the run directory).

Optuna's RDB storage writes every ask and tell as it happens, so a killed invocation leaves its
trials behind: complete ones are kept, a trial asked but not told (``RUNNING``) is evaluated again
under its own number by the next invocation (the journal keeps the answers it had, so only the rest
are computed), and an enqueued one not yet asked (``WAITING``) is asked next. No trial is lost and
none is repeated.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragsweep.errors import RagsweepError
from ragsweep.search.trials import Direction, Outcome, Trial

STUDY = "search"


class SearchStudy:
    """One run directory's Optuna study; ``key`` identifies the search (space, strategy, objectives, seed)."""

    def __init__(
        self, path: Path | None, key: str, objectives: Sequence[str], directions: Sequence[Direction], sampler
    ) -> None:
        """``path`` None: in memory (the benchmark's replays), nothing to resume."""
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        storage: optuna.storages.BaseStorage
        if path is None:
            storage = optuna.storages.InMemoryStorage()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            storage = optuna.storages.RDBStorage(f"sqlite:///{path}")
        self.objectives = objectives
        if STUDY in optuna.get_all_study_names(storage):
            self.study = optuna.load_study(study_name=STUDY, storage=storage, sampler=sampler)
            old = self.study.user_attrs.get("key")
            if old != key:
                raise RagsweepError(
                    f"{path}: holds a search with other settings (another space, strategy, objectives "
                    "or seed); pass --fresh to start over or change the spec's name"
                )
        else:
            self.study = optuna.create_study(study_name=STUDY, storage=storage, sampler=sampler, directions=directions)
            self.study.set_user_attr("key", key)
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                self.study.set_metric_names(list(objectives))

    def trials(self) -> list[Trial]:
        """Every trial, in order, as ``Trial``s."""
        from optuna.trial import TrialState

        out = []
        for t in self.study.get_trials(deepcopy=False):
            a = t.user_attrs
            again = a.get("repeat_of") is not None
            failed = "skipped" if a.get("skipped") else "repeat" if again else "failed"
            state = {
                TrialState.COMPLETE: "repeat" if again else "complete",
                TrialState.FAIL: failed,
                TrialState.PRUNED: "repeat" if again else "pruned",
                TrialState.RUNNING: "running",
                TrialState.WAITING: "waiting",
            }[t.state]
            values = dict(zip(self.objectives, t.values)) if t.values is not None else dict(a.get("partial") or {})
            out.append(
                Trial(
                    t.number,
                    a.get("config_hash"),
                    a.get("config_id"),
                    state,
                    values,
                    float(a.get("seconds", 0.0)),
                    float(a.get("usd", 0.0)),
                    a.get("repeat_of"),
                    a.get("reason"),
                    a.get("batch"),
                    int(a.get("questions", 0)),
                    a.get("dropped"),
                    a.get("features"),
                    a.get("predicted_seconds"),
                )
            )
        return out

    def waiting(self) -> bool:
        """An enqueued trial not yet asked (left by a killed invocation): the next ``ask`` takes it."""
        return any(t.state == "waiting" for t in self.trials())

    def ask(self, space, params: dict[str, str] | None, batch: int):
        """A new trial (on ``params`` when given, else the sampler's choice): (number, configuration)."""
        if params is not None:
            self.study.enqueue_trial(params)
        trial = self.study.ask()
        config = space.walk(trial.suggest_categorical)
        trial.set_user_attr("config_hash", config.config_hash)
        trial.set_user_attr("config_id", config.config_id)
        trial.set_user_attr("batch", batch)
        return trial.number, config

    def _trial(self, number: int):
        import optuna

        frozen = self.study.get_trials(deepcopy=False)[number]
        return optuna.trial.Trial(self.study, frozen._trial_id)  # a trial asked by an earlier invocation

    def tell(self, number: int, outcome: Outcome, repeat_of: int | None = None) -> None:
        """Record ``outcome`` on trial ``number``: its values, or a failure with its reason."""
        from optuna.trial import TrialState

        trial = self._trial(number)
        trial.set_user_attr("seconds", round(outcome.seconds, 3))
        trial.set_user_attr("usd", outcome.usd)
        trial.set_user_attr("questions", outcome.questions)
        if outcome.failed_questions:
            trial.set_user_attr("failed_questions", outcome.failed_questions)
        if repeat_of is not None:
            trial.set_user_attr("repeat_of", repeat_of)
        if outcome.dropped is not None:  # racing stopped it: its means so far, and when and why
            trial.set_user_attr("dropped", outcome.dropped)
            trial.set_user_attr("partial", outcome.values)
            if len(self.objectives) == 1 and outcome.values:
                trial.report(outcome.values["quality"], step=outcome.dropped["at"])
            self.study.tell(number, state=TrialState.PRUNED)
        elif outcome.values is None:
            trial.set_user_attr("reason", outcome.reason or "failed")
            self.study.tell(number, state=TrialState.FAIL)
        else:
            self.study.tell(number, [outcome.values[o] for o in self.objectives])

    def annotate(self, number: int, **attrs) -> None:
        """Keep ``attrs`` on a trial (what it adds, the predicted seconds)."""
        trial = self._trial(number)
        for k, v in attrs.items():
            trial.set_user_attr(k, v)

    def skip(self, number: int, reason: str) -> None:
        """A cost-aware search's proposal left for a cheaper one: not evaluated, not counted, proposable again."""
        from optuna.trial import TrialState

        self.annotate(number, skipped=True, reason=reason)
        self.study.tell(number, state=TrialState.FAIL)

    def fail_unchosen(self, number: int, reason: str) -> None:
        """A trial killed before its configuration was chosen: failed, with nothing computed."""
        from optuna.trial import TrialState

        self._trial(number).set_user_attr("reason", reason)
        self.study.tell(number, state=TrialState.FAIL)
