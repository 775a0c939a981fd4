"""A sweep's search: trials on the validation questions, then the finalists on the test questions.

The sweep hands in ``stage1(configurations, questions)``, which plans and runs the stages for what the
journal lacks (answer, score) on its executor; this module decides which configurations it gets.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragsweep.errors import RagsweepError
from ragsweep.pipelines.grid import is_baseline
from ragsweep.run_dir import RunDir
from ragsweep.run_records import SearchRecord
from ragsweep.search.loop import Asking, Evaluate, Limits, run_search
from ragsweep.search.setup import SearchSetup
from ragsweep.search.space import SearchSpace
from ragsweep.search.study import SearchStudy
from ragsweep.search.summary import finalists as choose_finalists
from ragsweep.search.summary import search_record
from ragsweep.search.trials import directions as directions_of

if TYPE_CHECKING:
    from ragsweep.pipelines.run_state import RunState

DEFAULT_FRACTION = 0.2  # a search with no budget evaluates a fifth of the grid


@dataclass
class SearchRun:
    record: SearchRecord
    evaluated: list  # configurations with a trial (grid order)
    finalists: list  # configurations answered on the test questions (and the reference baselines, for stage 2)
    error: RagsweepError | None = None


class _Stopped(Exception):
    """A stage stopped the search (budget, refused key, lost cluster): the error is the run's."""

    def __init__(self, error: RagsweepError) -> None:
        super().__init__(str(error))
        self.error = error


def trial_limit(spec, n_configs: int) -> int | None:
    """The trial budget: the spec's ``trials``/``fraction``, or a fifth of the grid when no limit is set
    (the grid's: every configuration)."""
    budget = spec.search.budget
    if not spec.search.budgeted:
        return n_configs
    if budget.empty:
        return max(1, math.ceil(DEFAULT_FRACTION * n_configs))
    return budget.trial_limit(n_configs)


def search_key(spec, space: SearchSpace, seed: int, metric: str, validation: list[str]) -> str:
    """What the study's trials are a function of: a change starts a new study (or, in the same directory, errors)."""
    s = spec.search
    ident = [
        sorted(space.by_hash),
        s.strategy,
        s.objectives,
        s.order,
        seed,
        metric,
        sorted(validation),
        s.racing.model_dump() if s.racing is not None else None,
    ]
    return hashlib.sha256(json.dumps(ident).encode()).hexdigest()[:16]


def search(st: RunState, stage1, cached: set | None = None) -> SearchRun:
    """Search the run's configurations (``st.configs``); ``stage1(configurations, questions[, retry])`` answers and
    scores what the journal lacks; ``cached``: shared units (``cost.shared_units``) already in the cache."""
    setup, strategy = _setup(st)
    s, space, study = st.spec.search, setup.space, setup.study
    bar = st.bars.add(f"search ({s.strategy})", setup.limit or len(space)) if st.bars is not None else None

    evaluate = _evaluator(setup, st.journal, st.scorer_key, stage1)
    error = None
    try:
        batch = s.batch if s.budgeted else len(space)  # a raced grid: every configuration at once
        asking = Asking(
            batch,
            on_trial=bar.advance if bar is not None else None,
            questions=len(setup.validation),
            pool=4 if s.cost_aware else 1,
            done=cached,
        )
        stopped = run_search(
            study, space, strategy, Limits(setup.limit, s.budget.seconds, s.budget.usd), evaluate, asking
        )
    except _Stopped as stop:
        stopped, error = f"error: {stop.error}", stop.error
    trials = study.trials()
    chosen = set(choose_finalists(trials, s.finalists, s.objectives, setup.directions))
    final = [c for c in st.configs if c.config_hash in chosen]
    if error is None and final:
        error = stage1(final, setup.test)
    # the reference baselines are no trials: they answer every question once the search is done (the verdict
    # measures its pick against them on test; ``show`` gives their validation figures too)
    references = [c for c in st.configs if is_baseline(c)] if error is None and final else []
    if references:  # (none without a pick to measure: a search stopped, or every trial failed)
        error = stage1(references, setup.validation + setup.test)
    tried = {t.config_hash for t in trials if t.evaluated or t.state == "running"}
    record = search_record(setup, trials, stopped, [c.config_id for c in final])
    evaluated = [c for c in st.configs if c.config_hash in tried]
    return SearchRun(record, evaluated + references, final + references, error)


def _setup(st: RunState):
    """The search's metric (one it can optimise), questions (validation and test: both needed), space, seed,
    budget, strategy and study (with the strategy's sampler)."""
    from ragsweep.evaluation.verdict import LOWER_IS_BETTER
    from ragsweep.pipelines.outputs.columns import SELECTABLE_METRICS
    from ragsweep.search.strategies.registry import strategy_class

    spec, split = st.spec, st.split
    s = spec.search
    metric = s.metric or spec.scoring.metric
    if metric not in SELECTABLE_METRICS:
        raise RagsweepError(
            f"search.metric: {metric!r} is not a metric a search can optimise; use one of "
            f"{', '.join(SELECTABLE_METRICS)}"
        )
    validation = [q for q in st.questions if split.get(q.qid) == "validation"]
    test = [q for q in st.questions if split.get(q.qid) == "test"]
    if not validation or not test:
        raise RagsweepError(
            "search: needs validation and test questions (it optimises on one and reports on the "
            "other); the split gave "
            f"{len(validation)} and {len(test)}: add questions or use search: grid"
        )
    space = SearchSpace([c for c in st.configs if not is_baseline(c)], s.order)  # baselines are never searched
    seed = s.seed if s.seed is not None else spec.seed
    lower = metric in LOWER_IS_BETTER
    directions = directions_of(s.objectives, lower)
    limit = trial_limit(spec, len(space))
    strategy = strategy_class(s.strategy)(s, seed, limit, lower)
    study = SearchStudy(
        RunDir(st.run_dir).search,
        search_key(spec, space, seed, metric, [q.qid for q in validation]),
        s.objectives,
        directions,
        strategy.sampler(),
    )
    return SearchSetup(spec, space, study, validation, test, split, metric, lower, directions, seed, limit), strategy


def race_order(questions: list, seed: int) -> list:
    """The validation questions in the race's order (``racing.question_order``)."""
    from ragsweep.search.racing import question_order

    by_id = {q.qid: q for q in questions}
    return [by_id[qid] for qid in question_order(list(by_id), seed)]


def _evaluator(setup: SearchSetup, journal, scorer_key: str, stage1) -> Evaluate:
    """``evaluate(configurations) -> {hash: Outcome}`` for the search loop: ``stage1`` on the validation
    questions (all at once, or look by look when racing), objectives from the records."""
    import numpy as np

    from ragsweep.pipelines.outputs.records import build_records, question_rows
    from ragsweep.search.objectives import outcomes
    from ragsweep.search.racing import RaceRule, looks, race
    from ragsweep.search.summary import ranked

    s, space, study, split, validation = setup.spec.search, setup.space, setup.study, setup.split, setup.validation
    metric, lower, seed = setup.metric, setup.lower, setup.seed
    ordered = race_order(validation, seed)
    tried: set[str] = set()  # configurations stage 1 ran this invocation: their failed answers are not retried

    def answered(batch: list, questions: list):
        fresh = [c for c in batch if c.config_hash not in tried]
        again = [c for c in batch if c.config_hash in tried]
        for group, retry in ((fresh, True), (again, False)):
            error = stage1(group, questions, retry) if group else None
            if error is not None:
                raise _Stopped(error)
        tried.update(c.config_hash for c in batch)
        labels = [c.labels() for c in batch]
        return build_records(question_rows(questions, split), labels, journal, scorer_key, sources=False)

    def values_at(hashes: list[str], n: int) -> dict:
        qs = ordered[:n]
        records = answered([space.by_hash[h] for h in hashes], qs)
        out = {}
        for h in hashes:
            r = records[records["config_hash"] == h].set_index("qid")
            col = r[metric] if metric in r.columns else None
            out[h] = np.array([float(col.get(q.qid, np.nan)) if col is not None else np.nan for q in qs])
        return out

    def evaluate(batch: list) -> dict:
        t0 = time.perf_counter()
        dropped: dict[str, dict] = {}
        if s.racing is None:
            records = answered(batch, validation)
        else:
            best = ranked(study.trials(), lower)
            incumbent = best[0].config_hash if best and best[0].config_hash in space.by_hash else None
            if incumbent is not None:  # evaluated in full before: its journal rows are what it is compared on
                tried.add(incumbent)
            sizes = looks(len(ordered), s.racing.first, s.racing.growth, s.racing.minimum)
            rule = RaceRule(not lower, s.racing.alpha, seed, family=s.racing.family)
            result = race([c.config_hash for c in batch], sizes, values_at, rule, incumbent)
            for h, (at, p, leader) in result.dropped.items():
                dropped[h] = {"at": at, "p": p, "leader": space.by_hash[leader].config_id}
            seen = {h: result.pairs.get(h, len(ordered)) for h in (c.config_hash for c in batch)}
            labels = [c.labels() for c in batch]
            records = build_records(question_rows(validation, split), labels, journal, scorer_key, sources=False)
            keep = {(h, q.qid) for h, n in seen.items() for q in ordered[:n]}
            records = records[[(h, q) in keep for h, q in zip(records["config_hash"], records["qid"])]]
        return outcomes(records, batch, s.objectives, metric, time.perf_counter() - t0, dropped)

    return evaluate
