"""The plan of a sweep: which units of work exist and what each depends on.

A unit is one call of a stage (``pipelines.stages``) on a piece of the sweep:

    chunk(splitter)                  -> the splitter's chunks
    index(splitter, embedding)       <- chunk(splitter): a Chroma collection of the chunks
    queries(embedding)               the pending questions embedded once per model (timed)
    graph(splitter)                  <- chunk(splitter): the knowledge graphs its graph retrievers need
    answer(splitter)                 <- chunk, graph, every index of the splitter, their queries:
                                        retrieve and answer every pending (configuration, question)
    generate                         <- every answer: LLM-written answers (an LLM generator only)
    score                            <- every answer (and generate): BERTScore
    judge                            <- score: stage 2 (a spec with a stage2 section only)

Only pending work is planned: (configuration, question) pairs the journal already holds are not.
An executor (``ragsweep.executors``) runs the units in an order the dependencies allow, in this
process or as Ray tasks, and may split an answer unit by questions; it never looks inside a stage.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ragsweep.config import EmbeddingSpec
from ragsweep.datasets.types import Question
from ragsweep.pipelines.grid import Configuration
from ragsweep.pipelines.stages.graph import USES_GRAPH
from ragsweep.pipelines.stages.index import USES_BM25

STAGES = ("chunk", "graph", "index", "queries", "answer", "generate", "score", "judge")


@dataclass(frozen=True)
class Unit:
    """One unit of work: ``stage`` applied to the piece ``key`` names; ``needs`` are the keys it waits for."""

    stage: str
    key: tuple[str, ...]
    needs: tuple[tuple[str, ...], ...] = ()


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
        return [c for c in self.configs if c.embedding is not None and c.embedding.label() == label]

    def graph_configs(self) -> list[Configuration]:
        return [c for c in self.configs if c.retriever.kind in USES_GRAPH]

    @property
    def uses_bm25(self) -> bool:
        return any(c.retriever.kind in USES_BM25 for c in self.configs)


@dataclass
class SweepPlan:
    """The units of one invocation, over the configurations and the questions each still has to answer."""

    configs: list[Configuration]
    pending: dict[str, list[Question]]  # configuration hash -> questions not answered yet
    groups: dict[str, Group]
    generate: bool = False
    judge: bool = False

    @classmethod
    def build(cls, configs: list[Configuration], pending: dict[str, list[Question]], *, generate: bool = False,
              judge: bool = False) -> "SweepPlan":
        groups: dict[str, Group] = {}
        for c in configs:
            if pending[c.config_hash]:
                groups.setdefault(c.chunk_key, Group(c.chunk_key)).configs.append(c)
        return cls(configs, pending, groups, generate, judge)

    @property
    def total(self) -> int:
        """(configuration, question) pairs to answer."""
        return sum(len(v) for v in self.pending.values())

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

    def units(self) -> list[Unit]:
        """Every unit, in an order that satisfies the dependencies (splitter by splitter)."""
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
            if g.graph_configs():
                out.append(Unit("graph", ("graph", key), (chunk,)))
                needs.append(("graph", key))
            out.append(Unit("answer", ("answer", key), tuple(needs)))
            answers.append(("answer", key))
        last: tuple[tuple[str, ...], ...] = tuple(answers)
        if self.generate and answers:
            out.append(Unit("generate", ("generate",), last))
            last = (("generate",),)
        out.append(Unit("score", ("score",), last))
        if self.judge:
            out.append(Unit("judge", ("judge",), (("score",),)))
        return out
