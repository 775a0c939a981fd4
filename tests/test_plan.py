"""The plan of a sweep (``pipelines.plan``): the units both executors run, in an order their needs allow.

The local executor runs ``units()`` in order; the Ray executor starts each unit once ``Schedule`` says its needs
are finished. Whether they then give the same records is checked end to end (test_ray.py, test_sweep.py)."""

from __future__ import annotations

from ragsweep.config import SweepSpec
from ragsweep.datasets.types import Question
from ragsweep.pipelines.grid import expand
from ragsweep.pipelines.plan import SPLITTER_STAGES, Schedule, SweepPlan

ANSWERING = (*SPLITTER_STAGES, "generate")

DEMO = {"corpus": {"format": "demo"}, "questions": {"format": "demo"}}
SENTENCE = {"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}
PATTERN = {"kind": "pattern", "pattern": "\n(?=§)"}
QUESTIONS = [Question("q1", "What is the notice period?"), Question("q2", "Who pays the deposit?")]


def _plan(pending_of=lambda c: QUESTIONS, **kw) -> SweepPlan:
    spec = SweepSpec(
        **{
            "name": "plan",
            "dataset": DEMO,
            "splitters": [SENTENCE, PATTERN],
            "embeddings": [{"model": "minilm"}, {"model": "bge-small", "name": "bge"}],
            "retrievers": [{"kind": "bm25"}, {"kind": "vector"}, {"kind": "hybrid_kg"}],
            "top_k": [3],
            **kw,
        }
    )
    configs = expand(spec)
    return SweepPlan.build(configs, {c.config_hash: pending_of(c) for c in configs}, generate=True, judge=True)


def _keys(units) -> list[tuple[str, ...]]:
    return [u.key for u in units]


def test_units_are_ordered_splitter_by_splitter_with_graph_answers_last():
    plan = _plan()
    sentence, pattern = plan.groups
    assert _keys(plan.units()) == [
        ("chunk", sentence),
        ("index", sentence, "minilm"),
        ("queries", "minilm"),
        ("index", sentence, "bge"),
        ("queries", "bge"),
        ("answer", sentence),
        ("graph", sentence),
        ("answer", sentence, "graph"),
        ("chunk", pattern),
        ("index", pattern, "minilm"),
        ("index", pattern, "bge"),  # each model embeds the questions once
        ("answer", pattern),
        ("graph", pattern),
        ("answer", pattern, "graph"),
        ("generate",),
        ("score",),
        ("judge",),
    ]


def test_every_unit_comes_after_what_it_needs():
    units = _plan().units()
    seen: set = set()
    for u in units:
        assert seen.issuperset(u.needs), u
        seen.add(u.key)
    answer = {u.key: u for u in units}
    sentence = units[0].chunk_key
    assert set(answer[("answer", sentence)].needs) == {
        ("chunk", sentence),
        ("index", sentence, "minilm"),
        ("queries", "minilm"),
        ("index", sentence, "bge"),
        ("queries", "bge"),
    }
    assert set(answer[("answer", sentence, "graph")].needs) == set(answer[("answer", sentence)].needs) | {
        ("graph", sentence)
    }
    assert set(answer[("generate",)].needs) == {u.key for u in units if u.stage == "answer"}


def test_each_answer_unit_answers_its_own_configurations():
    plan = _plan()
    g = next(iter(plan.groups.values()))
    plain, graphs = [u for u in plan.units() if u.stage == "answer" and u.chunk_key == g.chunk_key]
    assert {c.retriever.kind for c in g.answered_by(plain)} == {"bm25", "vector"}
    assert {c.retriever.kind for c in g.answered_by(graphs)} == {"hybrid_kg"}
    assert len(g.answered_by(plain)) + len(g.answered_by(graphs)) == len(g.configs)


def test_only_pending_work_is_planned_and_a_part_plans_itself():
    plan = _plan(lambda c: [] if c.splitter.kind == "pattern" or c.retriever.kind == "hybrid_kg" else QUESTIONS)
    (sentence,) = plan.groups
    assert _keys(plan.units(ANSWERING)) == [
        ("chunk", sentence),
        ("index", sentence, "minilm"),
        ("queries", "minilm"),
        ("index", sentence, "bge"),
        ("queries", "bge"),
        ("answer", sentence),
        ("generate",),
    ]
    bm25 = plan.only([c for c in plan.configs if c.retriever.kind == "bm25"])
    assert _keys(bm25.units(ANSWERING)) == [("chunk", sentence), ("answer", sentence), ("generate",)]
    assert bm25.total == len(QUESTIONS)
    nothing = plan.only([])
    assert _keys(nothing.units()) == [("generate",), ("score",), ("judge",)]  # a Ray run's workers answered


def test_schedule_releases_each_unit_once_when_its_needs_finish():
    units = _plan().units(ANSWERING)
    schedule = Schedule(units)
    first = schedule.ready()
    assert {u.stage for u in first} == {"chunk", "queries"}  # nothing else can start before the chunks exist
    started = list(first)
    while not schedule.done:
        unit = started.pop(0)
        schedule.finish(unit)
        ready = schedule.ready()
        assert all(u.key not in {s.key for s in started} for u in ready)
        started += ready
    for unit in started:
        schedule.finish(unit)
    assert schedule.ready() == [] and schedule.finished == {u.key for u in units}
