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
    baselines                        the reference baselines' answers, from contexts no retriever chose
                                        (``grid.is_baseline``: in no splitter's group)
    generate                         <- every answer: LLM-written answers (an LLM generator only)
    score                            <- every answer (and generate): BERTScore
    judge                            <- score: stage 2 (a spec with a stage2 section only)

Only pending work is planned: (configuration, question) pairs the journal already holds are not.
``units()`` is the one place the stage order is written. An executor (``ragsweep.executors``) runs the
units in that order (``executors.inprocess``) or as Ray tasks once their ``needs`` are met
(``Schedule``), and may split an answer unit by questions; it never looks inside a stage.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ragsweep.config import EmbeddingSpec
from ragsweep.datasets.types import Question
from ragsweep.pipelines.grid import Configuration

STAGES = ("chunk", "index", "queries", "graph", "answer", "baselines", "generate", "score", "judge")
ANSWERING = STAGES[: STAGES.index("generate") + 1]  # what ``Executor.answer`` runs; then the score unit, stage 2
RETRIEVING = ANSWERING[:-1]  # up to the extractive answers; the LLM generator's unit follows them


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

    @classmethod
    def build(
        cls,
        configs: list[Configuration],
        pending: dict[str, list[Question]],
        *,
        generate: bool = False,
        judge: bool = False,
    ) -> "SweepPlan":
        groups: dict[str, Group] = {}
        for c in configs:
            if pending[c.config_hash] and c.baseline is None:
                groups.setdefault(c.chunk_key, Group(c.chunk_key)).configs.append(c)
        return cls(configs, pending, groups, generate, judge)

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
        """Per embedding label: the model and the distinct pending question texts it embeds (sorted)."""
        out: dict[str, tuple[EmbeddingSpec, set[str]]] = {}
        for g in groups if groups is not None else self.groups.values():
            for label, emb in g.embeddings().items():
                texts = out.setdefault(label, (emb, set()))[1]
                texts.update(q.question for q in self.questions_of(g.with_embedding(label)))
        return {label: (emb, sorted(texts)) for label, (emb, texts) in out.items()}

    def units(self, stages: tuple[str, ...] = STAGES) -> list[Unit]:
        """Every unit of ``stages``, in an order that satisfies the dependencies (splitter by splitter)."""
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
        if self.baselines:
            out.append(Unit("baselines", ("baselines",)))
            answers.append(("baselines",))
        last: tuple[tuple[str, ...], ...] = tuple(answers)
        if self.generate:  # also with nothing left to retrieve here: a Ray run's workers retrieved it
            out.append(Unit("generate", ("generate",), last))
            last = (("generate",),)
        out.append(Unit("score", ("score",), last))
        if self.judge:
            out.append(Unit("judge", ("judge",), (("score",),)))
        return [u for u in out if u.stage in stages]

    def only(self, configs: list[Configuration]) -> "SweepPlan":
        """The plan of ``configs`` alone (a part of this one: the same pending questions)."""
        return SweepPlan.build(configs, self.pending, generate=self.generate, judge=self.judge)


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
