"""What a search did, from its trials: the finalists, the Pareto front, best-so-far against compute,
and the record the manifest keeps (``search``; ``pipelines/outputs/search_text.py`` prints it). Pure functions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

from ragsweep.run_records import SearchRecord
from ragsweep.search.pareto import front
from ragsweep.search.setup import SearchSetup
from ragsweep.search.trials import Trial, finite


def ranked(trials: list[Trial], lower_is_better: bool) -> list[Trial]:
    """The evaluated, successful trials by validation quality, best first (ties: the earlier trial)."""
    done = [t for t in trials if t.state == "complete" and finite(t.values.get("quality"))]
    sign = 1.0 if lower_is_better else -1.0
    return sorted(done, key=lambda t: (sign * t.values["quality"], t.number))


def pareto(trials: list[Trial], objectives: Sequence[str], directions: Sequence[str]) -> list[Trial]:
    """The complete trials on the Pareto front of the objectives (by quality, best first)."""
    done = [t for t in trials if t.state == "complete" and all(finite(t.values.get(o)) for o in objectives)]
    idx = front([[t.values[o] for o in objectives] for t in done], directions)
    return [done[i] for i in idx]


def finalists(trials: list[Trial], n: int, objectives: Sequence[str], directions: Sequence[str]) -> list[str]:
    """Configuration hashes answered on the test questions: the ``n`` best by validation quality and, with
    several objectives, the Pareto front's members (at most ``2 n`` in all, the best first)."""
    lower = directions[objectives.index("quality")] == "minimize"
    order = ranked(trials, lower)
    out = [t.config_hash for t in order[:n]]
    if len(objectives) > 1:
        on_front = {t.config_hash for t in pareto(trials, objectives, directions)}
        out += [t.config_hash for t in order if t.config_hash in on_front and t.config_hash not in out]
    # complete trials only (ranked, pareto): each was asked, and ``SearchStudy.ask`` records its hash
    return cast("list[str]", list(dict.fromkeys(out))[: 2 * n if len(objectives) > 1 else n])


def best_so_far(trials: list[Trial], lower_is_better: bool) -> list[dict]:
    """After each evaluated trial: compute spent so far (seconds) and the best validation quality yet."""
    out, spent, best = [], 0.0, math.nan
    for t in sorted((t for t in trials if t.evaluated), key=lambda t: t.number):
        spent += t.seconds
        q = t.values.get("quality") if t.state == "complete" else None
        if finite(q) and (math.isnan(best) or (q < best if lower_is_better else q > best)):
            best = q
        out.append({"trial": t.number, "seconds": round(spent, 3), "best": None if math.isnan(best) else best})
    return out


def search_record(setup: SearchSetup, trials: list[Trial], stopped: str, finalist_ids: list[str]) -> SearchRecord:
    """The manifest's ``search``: settings, budget used, every trial, finalists, front and curve."""
    s, directions, seed, metric = setup.spec.search, setup.directions, setup.seed, setup.metric
    n_configs, trial_limit, n_validation, n_test = len(setup.space), setup.limit, len(setup.validation), len(setup.test)
    lower = directions[s.objectives.index("quality")] == "minimize"
    done = [t for t in trials if t.evaluated]
    record: SearchRecord = {
        "strategy": s.strategy + (" (auto)" if s.chosen_by == "auto" else ""),
        "seed": seed,
        "objectives": s.objectives,
        "directions": list(directions),
        "metric": metric,
        "order": s.order,
        "batch": s.batch,
        "budget": {k: v for k, v in s.budget.model_dump().items() if v is not None},
        "trial_limit": trial_limit,
        "space": n_configs,
        "validation_questions": n_validation,
        "test_questions": n_test,
        "stopped": stopped,
        "racing": s.racing.model_dump() if s.racing is not None else None,
        "used": {
            "trials": len(done),
            "failed": sum(t.state == "failed" for t in done),
            "pruned": sum(t.state == "pruned" for t in done),
            "repeats": sum(t.state == "repeat" for t in trials),
            "skipped": sum(t.state == "skipped" for t in trials),
            "pairs": sum(t.questions for t in done),
            "seconds": round(sum(t.seconds for t in done), 3),
            "usd": sum(t.usd for t in done),
        },
        "not_evaluated": n_configs - len({t.config_hash for t in done}),
        "cost_aware": s.cost_aware,
        "trials": [
            {
                "number": t.number,
                "config_id": t.config_id,
                "state": t.state,
                "values": t.values,
                "seconds": t.seconds,
                "usd": t.usd,
                "questions": t.questions,
                **({"predicted_seconds": t.predicted} if t.predicted is not None else {}),
                **({"adds": t.features} if t.features else {}),
                **({"dropped": t.dropped} if t.dropped is not None else {}),
                **({"repeat_of": t.repeat_of} if t.repeat_of is not None else {}),
                **({"reason": t.reason} if t.reason else {}),
            }
            for t in trials
            if t.state != "skipped"
        ],
        "finalists": finalist_ids,
        "best_so_far": best_so_far(trials, lower),
    }
    if s.multi_objective:
        record["pareto"] = [t.config_id for t in pareto(trials, s.objectives, directions) if t.config_id]
    return record
