"""A plan with stages added (``plan.RUN_STAGES`` patched for one test), for test_plan_run.py and test_ray.py.

Every declared run stage is wrapped to log its name when it runs in this process (Ray's score unit runs its own
way: it logs nothing), and two stages are added around the score unit: ``before_score`` and ``after_score``.
Each logs what the journal holds when it runs (answers, and how many of them have no score yet), so the order
shows in what they saw, whichever way an executor runs the stages between them.
"""

from __future__ import annotations

from dataclasses import replace

from ragsweep.components import load


def add_stages(monkeypatch) -> list[tuple]:
    """Patch ``RUN_STAGES`` (read when a plan is built); returns the log the stages append to."""
    from ragsweep.pipelines import plan

    log: list[tuple] = []

    def logged(stage):
        fn = load(stage.runs) if isinstance(stage.runs, str) else stage.runs

        def run(r, unit, **kw):
            log.append((stage.name, r.trial))
            return fn(r, unit, **kw)

        return replace(stage, runs=run)

    def seen(name):
        def run(r, _unit):
            journal = r.st.journal
            log.append((name, len(journal.done()), len(journal.unscored(r.st.scorer_key))))

        return run

    stages = [logged(s) for s in plan.RUN_STAGES]
    at = [s.name for s in stages].index("score")
    stages[at:at] = [plan.Stage("before_score", seen("before_score"))]
    stages.insert(at + 2, plan.Stage("after_score", seen("after_score"), after_stop=True))
    monkeypatch.setattr(plan, "RUN_STAGES", tuple(stages))
    return log


def check_order(log: list[tuple], answers: int, scored_here: bool = True) -> None:
    """The added stages ran once each, around the score unit: every answer journaled before either, none
    scored before it (a fresh run), all after it; baselines, generate and judge in their places."""
    names = [e[0] for e in log]
    expected = ["baselines", "generate", "before_score", "score", "after_score", "judge"]
    if not scored_here:
        expected.remove("score")
    assert names == expected, log
    assert log[names.index("before_score")][1:] == (answers, answers), log
    assert log[names.index("after_score")][1:] == (answers, 0), log
