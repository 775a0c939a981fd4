"""A plan's splitter units (``plan.SPLITTER_STAGES``) run one after another in this process: the local executor's,
and a Ray answering task's on a worker (over a slice of the questions, with the chunks, vectors and graphs the
driver sends it). LLM-written answers are left in ``gen_items`` for the generate unit.

``SweepPlan.units()`` orders them splitter by splitter, so one splitter's chunks and indexes are held at a time.
A unit that fails records its configurations' questions as failed with its reason (``chunking failed: ...``,
``indexing failed: ...``) and the rest go on; a budget or a refused key stops the stage (the exception rises).
"""

from __future__ import annotations

from ragsweep.errors import short_reason
from ragsweep.pipelines.answer_record import AnswerSink, Outlet, Retrieved
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.grid import Configuration
from ragsweep.pipelines.plan import SweepPlan, Unit, with_embedding
from ragsweep.pipelines.stages import answer


class InProcess:
    """Runs splitter units of ``plan`` in this process; what one splitter's units made is kept until the next chunk
    unit. ``chunks``: a splitter's chunks made elsewhere (by chunk key), used instead of chunking again."""

    def __init__(
        self,
        plan: SweepPlan,
        ctx: StageContext,
        sink: AnswerSink,
        bar,
        gen_items: list[Retrieved],
        chunks: dict[str, list] | None = None,
    ) -> None:
        self.plan, self.ctx, self.sink, self.bar = plan, ctx, sink, bar
        self.gen_items, self.given = gen_items, chunks or {}
        self.texts = plan.query_embeddings()  # embedding label -> (model, the question texts it embeds)
        self.query_ms: dict[str, dict[str, float]] = {}  # latencies per embedding label, once per model
        self.failed_queries: dict[str, str] = {}  # embedding label -> why its questions could not be embedded
        self.failed: set[str] = set()  # configuration hashes recorded as failed
        self._start("", None)

    def _start(self, key: str, chunks) -> None:
        self.key, self.chunks, self._client = key, chunks, None
        self.found = answer.GroupIndexes(query_ms=self.query_ms)  # question latencies: the run's, per model

    def run(self, units: list[Unit]) -> "InProcess":
        for unit in units:
            getattr(self, unit.stage)(unit)
        return self

    # ------------------------------------------------------------------ helpers
    def _fail(self, configs: list[Configuration], reason: str) -> None:
        configs = [c for c in configs if c.config_hash not in self.failed]
        self.failed.update(c.config_hash for c in configs)
        answer.record_failures(configs, self.plan.pending, self.sink, self.ctx.stats, self.bar, reason)

    def _active(self) -> list[Configuration]:
        """The current splitter's configurations not failed so far (none when its chunks could not be made)."""
        if self.chunks is None:
            return []
        return [c for c in self.plan.groups[self.key].configs if c.config_hash not in self.failed]

    # ------------------------------------------------------------------ one method per stage
    def chunk(self, unit: Unit) -> None:
        from ragsweep.llm.budget import BudgetExhausted
        from ragsweep.llm.engine import LLMFatalError
        from ragsweep.pipelines.stages import chunk

        g = self.plan.groups[unit.chunk_key]
        self._start(unit.chunk_key, self.given.get(unit.chunk_key))
        if self.chunks is not None:
            return
        try:
            self._start(unit.chunk_key, chunk.chunk(self.ctx, g.splitter))
        except (BudgetExhausted, LLMFatalError):
            raise  # LLM-written chunk contexts: the stage stops, a later run goes on
        except Exception as exc:  # noqa: BLE001 - one splitter failing must not lose the others
            self._fail(g.configs, f"chunking failed: {short_reason(exc)}")

    def index(self, unit: Unit) -> None:
        """The splitter's vector index of one embedding (built, or reopened)."""
        from ragsweep.pipelines.stages import index
        from ragsweep.pipelines.stats import UnitTimer

        configs = with_embedding(self._active(), unit.label)
        if not configs:
            return
        if unit.label in self.failed_queries:
            self._fail(configs, self.failed_queries[unit.label])
            return
        try:
            if self._client is None:
                self._client = index.chroma_client(self.ctx)
            with UnitTimer(self.ctx.stats, f"index:{unit.chunk_key}@{unit.label}"):
                self.found.vectors[unit.label] = index.vector_index(self.ctx, configs[0], self.chunks, self._client)
        except Exception as exc:  # noqa: BLE001 - an embedding/index failure loses only its configurations
            self._fail(configs, f"indexing failed: {short_reason(exc)}")

    def queries(self, unit: Unit) -> None:
        """Every pending question embedded once by the model (timed); a failure fails the model's configurations."""
        from ragsweep.pipelines.stages import queries

        users = with_embedding(
            [c for g in self.plan.groups.values() for c in g.configs if c.config_hash not in self.failed], unit.label
        )
        if not users:
            return  # every configuration of this model has failed already
        emb, texts = self.texts[unit.label]
        try:
            self.query_ms[unit.label] = queries.embed_questions(self.ctx, emb, texts)
        except Exception as exc:  # noqa: BLE001 - as an index failure: the model's configurations fail
            self.failed_queries[unit.label] = f"indexing failed: {short_reason(exc)}"  # later splitters: at index
            self._fail(with_embedding(self._active(), unit.label), self.failed_queries[unit.label])

    def graph(self, unit: Unit) -> None:
        """The splitter's knowledge graphs (built when not cached); a failing graph fails its retrievers."""
        from ragsweep.pipelines.stages import graph

        configs = [c for c in self._active() if c.retriever.uses_graph]
        if not configs:
            return
        self.found.graphs = graph.chunk_graphs(self.ctx, configs[0], self.chunks)
        for spec_json, reason in graph.build_graphs(self.found.graphs, configs).items():
            self._fail([c for c in configs if c.retriever.model_dump_json() == spec_json], reason)

    def answer(self, unit: Unit) -> None:
        """Answer the unit's configurations (those left) from what the splitter's earlier units opened."""
        from ragsweep.pipelines.stages import index

        active = self._active()
        if not active:
            return
        for name in dict.fromkeys(p for c in active for p in c.retriever.memory_parts):
            if name not in self.found.parts:  # once per splitter, for all its units
                built = index.memory_part(self.ctx, self.chunks, name)
                if isinstance(built, Exception):
                    reason = f"{name.upper()} index failed: {short_reason(built)}"
                    self._fail([c for c in active if name in c.retriever.memory_parts], reason)
                else:
                    self.found.parts[name] = built
        mine = {c.config_hash for c in self.plan.groups[self.key].answered_by(unit)}
        configs = [c for c in active if c.config_hash in mine and c.config_hash not in self.failed]
        answer.answer_group(
            self.ctx, configs, self.found, self.plan.pending, Outlet(self.sink, self.bar, self.gen_items)
        )
