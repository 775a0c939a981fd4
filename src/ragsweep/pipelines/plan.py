"""The plan of a sweep: which units of work exist and what each depends on.

A unit is one call of a stage (``pipelines.stages``) on a piece of the sweep:

    chunk(splitter)                  -> the splitter's chunks
    index(splitter, embedding)       <- chunk(splitter): a Chroma collection of the chunks
    queries(embedding)               the pending questions embedded once per model (timed)
    answer(splitter)                 <- chunk, every index of the splitter, their queries: retrieve and
                                        answer every pending (configuration, question) that needs no graph
    graph(splitter)                  <- chunk(splitter): the knowledge graphs its graph retrievers need
    answer(splitter, graph)          <- the same and graph(splitter): the graph configurations' answers
                                        (last, so that a budget stopping a graph's LLM extraction stops
                                        nothing else)
    baselines                        <- every answer: the reference baselines' answers, from contexts no
                                        retriever chose (``grid.is_baseline``: in no splitter's group)
    generate                         <- baselines: LLM-written answers (an LLM generator only)
    score                            <- generate: BERTScore (also after a stop: what was answered)
    judge                            <- score: stage 2 (a spec with a stage2 section only)

Only pending work is planned: (configuration, question) pairs the journal already holds are not.
``units()`` is the one place the stage order is written, and the driver runs all of them through an
executor (``ragsweep.executors``). The splitter's stages (``SPLITTER_STAGES``) run in order in one process
(``executors.inprocess``) or as Ray tasks once their ``needs`` are met (``Schedule``), an answer unit split by
questions. The run's stages after them are declared in ``RUN_STAGES``: a name, the function that runs its unit
(``pipelines.plan_run``), when it is planned, whether it runs after a stop, what memory goes back before it.
Adding or moving one of those is a line here and a function in its stage's module: every executor runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ragsweep.config import EmbeddingSpec
from ragsweep.datasets.types import Question
from ragsweep.pipelines.grid import Configuration

SPLITTER_STAGES = ("chunk", "index", "queries", "graph", "answer")  # per splitter, in one process or as Ray tasks


@dataclass(frozen=True)
class Stage:
    """A stage that runs once per plan, after every splitter's answers (and the stage before it).

    ``runs``: the function that runs its unit in the driver's process, ``fn(run: PlanRun, unit)``, or its
    ``"module:function"`` path (imported on first use); an executor may run it its own way (Ray's score blocks)
    but never skips it. ``planned``: whether a plan has the unit (None: always). ``after_stop``: it still runs
    when an earlier unit stopped the plan (a budget, a lost cluster): what was answered is scored. ``frees``:
    what goes back before it (``PlanRun.free``): the answering models, or the executor (Ray, a Chroma server).
    ``timing``: the ``stats.timings`` entry its time is added to (a search's trials count to the search's)."""

    name: str
    runs: str | Callable[..., Any]
    planned: Callable[["SweepPlan"], bool] | None = None
    after_stop: bool = False
    frees: Literal["", "models", "executor"] = ""
    timing: str = ""


RUN_STAGES: tuple[Stage, ...] = (
    Stage("baselines", "ragsweep.pipelines.stages.baselines:run_unit", planned=lambda p: bool(p.baselines)),
    Stage("generate", "ragsweep.pipelines.stages.generate:run_unit", planned=lambda p: p.generate),
    Stage("score", "ragsweep.pipelines.stages.score:run_unit", after_stop=True, frees="models", timing="scoring"),
    Stage(
        "judge",
        "ragsweep.pipelines.stages.judge:run_unit",
        planned=lambda p: p.judge,
        frees="executor",
        timing="stage2",
    ),
)


@dataclass(frozen=True)
class Unit:
    """One unit of work: ``stage`` applied to the piece ``key`` names; ``needs`` are the keys it waits for."""

    stage: str
    key: tuple[str, ...]
    needs: tuple[tuple[str, ...], ...] = ()

    @property
    def chunk_key(self) -> str:
        """The splitter of a chunk, index, graph or answer unit."""
        return self.key[1]

    @property
    def label(self) -> str:
        """The embedding of an index (or queries) unit."""
        return self.key[-1]

    @property
    def for_graphs(self) -> bool:
        """An answer unit of the graph configurations."""
        return self.key[-1] == "graph"


def with_embedding(configs: list[Configuration], label: str) -> list[Configuration]:
    """The configurations of ``configs`` that search with the embedding ``label``."""
    return [c for c in configs if c.embedding is not None and c.embedding.label() == label]


@dataclass
class Group:
    """The pending configurations that share one splitter's chunks (``chunk_key``)."""

    chunk_key: str
    configs: list[Configuration] = field(default_factory=list)

    @property
    def splitter(self) -> Configuration:
        """The configuration whose splitter (and chunk embedding) makes the group's chunks."""
        return self.configs[0]

    def embeddings(self) -> dict[str, EmbeddingSpec]:
        """The group's embeddings by label, in configuration order."""
        return {c.embedding.label(): c.embedding for c in self.configs if c.embedding is not None}

    def with_embedding(self, label: str) -> list[Configuration]:
        return with_embedding(self.configs, label)

    def graph_configs(self) -> list[Configuration]:
        return [c for c in self.configs if c.retriever.uses_graph]

    def answered_by(self, unit: Unit) -> list[Configuration]:
        """The configurations an answer unit answers: those without a graph, or (``for_graphs``) those with."""
        return [c for c in self.configs if c.retriever.uses_graph == unit.for_graphs]


@dataclass
class SweepPlan:
    """The units of one invocation, over the configurations and the questions each still has to answer."""

    configs: list[Configuration]
    pending: dict[str, list[Question]]  # configuration hash -> questions not answered yet
    groups: dict[str, Group]
    generate: bool = False
    judge: bool = False
    run_stages: tuple[Stage, ...] = RUN_STAGES

    @classmethod
    def build(
        cls,
        configs: list[Configuration],
        pending: dict[str, list[Question]],
        *,
        generate: bool = False,
        judge: bool = False,
        run_stages: tuple[Stage, ...] | None = None,
    ) -> "SweepPlan":
        """``run_stages``: the stages after the answers (``RUN_STAGES``, read when the plan is built)."""
        groups: dict[str, Group] = {}
        for c in configs:
            if pending[c.config_hash] and c.baseline is None:
                groups.setdefault(c.chunk_key, Group(c.chunk_key)).configs.append(c)
        return cls(configs, pending, groups, generate, judge, RUN_STAGES if run_stages is None else run_stages)

    def stage(self, name: str) -> Stage:
        """The declaration of the run stage ``name``."""
        return next(s for s in self.run_stages if s.name == name)

    @property
    def baselines(self) -> list[Configuration]:
        """The reference baselines with questions pending."""
        return [c for c in self.configs if c.baseline is not None and self.pending[c.config_hash]]

    @property
    def total(self) -> int:
        """(configuration, question) pairs to answer (``pending`` may be shared with a larger plan: ``only``)."""
        return sum(len(self.pending[c.config_hash]) for c in self.configs)

    def questions_of(self, configs: list[Configuration]) -> list[Question]:
        """The questions any of ``configs`` still has to answer, once each, in question order."""
        seen: dict[str, Question] = {}
        for c in configs:
            for q in self.pending[c.config_hash]:
                seen.setdefault(q.qid, q)
        return list(seen.values())

    def query_embeddings(self, groups: list[Group] | None = None) -> dict[str, tuple[EmbeddingSpec, list[str]]]:
        """Per embedding label: the model and the distinct pending question texts it embeds (sorted): the questions,
        and what an offline history mode searches a follow-up with (an LLM's rewrite is embedded when written)."""
        from ragsweep.history.base import query_texts

        out: dict[str, tuple[EmbeddingSpec, set[str]]] = {}
        for g in groups if groups is not None else self.groups.values():
            for label, emb in g.embeddings().items():
                texts = out.setdefault(label, (emb, set()))[1]
                for c in g.with_embedding(label):
                    texts.update(t for q in self.pending[c.config_hash] for t in query_texts(c.history, q))
        return {label: (emb, sorted(texts)) for label, (emb, texts) in out.items()}

    def units(self, stages: tuple[str, ...] | None = None) -> list[Unit]:
        """Every unit (or those of ``stages``), in an order that satisfies the dependencies: splitter by splitter,
        then the run stages, each after the one before it."""
        out: list[Unit] = []
        queried: set[str] = set()
        answers: list[tuple[str, ...]] = []
        for key, g in self.groups.items():
            chunk: tuple[str, ...] = ("chunk", key)
            out.append(Unit("chunk", chunk))
            needs: list[tuple[str, ...]] = [chunk]
            for label in g.embeddings():
                out.append(Unit("index", ("index", key, label), (chunk,)))
                if label not in queried:
                    out.append(Unit("queries", ("queries", label)))
                    queried.add(label)
                needs += [("index", key, label), ("queries", label)]
            if len(g.graph_configs()) < len(g.configs):
                out.append(Unit("answer", ("answer", key), tuple(needs)))
                answers.append(("answer", key))
            if g.graph_configs():
                out.append(Unit("graph", ("graph", key), (chunk,)))
                out.append(Unit("answer", ("answer", key, "graph"), (*needs, ("graph", key))))
                answers.append(("answer", key, "graph"))
        last: tuple[tuple[str, ...], ...] = tuple(answers)
        for stage in self.run_stages:  # generate also with nothing retrieved here: a Ray run's workers did
            if stage.planned is None or stage.planned(self):
                out.append(Unit(stage.name, (stage.name,), last))
                last = ((stage.name,),)
        return [u for u in out if stages is None or u.stage in stages]

    def only(self, configs: list[Configuration]) -> "SweepPlan":
        """The plan of ``configs`` alone (a part of this one: the same pending questions)."""
        return SweepPlan.build(
            configs, self.pending, generate=self.generate, judge=self.judge, run_stages=self.run_stages
        )


class Schedule:
    """Which units may start: those whose ``needs`` are finished (the Ray executor starts them as they are)."""

    def __init__(self, units: list[Unit]) -> None:
        self.waiting = list(units)
        self.finished: set[tuple[str, ...]] = set()

    def ready(self) -> list[Unit]:
        """The units that may start now, in plan order; each is returned once."""
        out = [u for u in self.waiting if self.finished.issuperset(u.needs)]
        self.waiting = [u for u in self.waiting if u not in out]
        return out

    def finish(self, unit: Unit) -> None:
        self.finished.add(unit.key)

    @property
    def done(self) -> bool:
        return not self.waiting
