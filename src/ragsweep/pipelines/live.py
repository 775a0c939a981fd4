"""One configuration built once over a cache, then asked any number of questions: ``ragsweep ask``, an exported
pipeline (``ragsweep.load_pipeline``) and ``serve`` share it.

It opens what the sweep opened for the configuration (its chunks, BM25 index, Chroma collection, knowledge
graph), builds the same query engine (``stages.answer.build_engine``: tuned weights, reranker, transform,
abstention) and answers each question through the sweep's own path (``stages.answer.answer_question``), at the
run's retrieval depth: a question of the run gets the sources, offsets and scores the run recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ragsweep import tracing
from ragsweep.cache_dir import CacheDir
from ragsweep.config import SweepSpec
from ragsweep.datasets.types import Dataset, Question, Turn
from ragsweep.errors import RagsweepError, short_reason
from ragsweep.pipelines.answer_record import AnswerRecord, Outlet, Retrieved
from ragsweep.pipelines.grid import Configuration


class Chosen(NamedTuple):
    """What a run chose for a configuration on its validation questions, for a pipeline built again to answer as
    it did: the fusion weights (the manifest's ``tuned_weights``) and the abstention threshold
    (``abstain_thresholds``). None: chosen again, on the questions at hand."""

    tuned: dict | None = None
    threshold: dict | None = None


class LivePipeline:
    """``config`` of ``spec`` over ``dataset``'s corpus and the cache at ``cache``; ``chosen``: what the run chose on
    its validation questions (else chosen again here); ``export_root``: where its embedding model's ONNX export is
    kept (default: the cache)."""

    def __init__(
        self,
        spec: SweepSpec,
        config: Configuration,
        dataset: Dataset,
        cache: CacheDir,
        *,
        chosen: Chosen = Chosen(),
        export_root: Path | None = None,
    ) -> None:
        from ragsweep.embeddings.cache import EmbeddingCache
        from ragsweep.pipelines.context import Models, StageContext

        self.spec, self.config, self.dataset = spec, config, dataset
        self.config_id = config.config_id
        self._made = (chosen, export_root)
        tuned, threshold = chosen
        self._closers: list[Callable[[], object]] = []
        self.ctx = StageContext(
            spec=spec,
            dataset=dataset,
            cache=cache,
            models=Models(lambda: EmbeddingCache(cache.embeddings), export_root or cache.root),
        )
        if tuned:
            self.ctx.tuned_weights[config.config_hash] = tuned
        if threshold:
            self.ctx.abstain_thresholds[config.config_hash] = threshold
        self.clients: Any = None
        self._chroma: Any = None
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        from ragsweep.llm.clients import LLMClients, check_llms, llms_in_use
        from ragsweep.pipelines.stages import answer, chunk, graph, index
        from ragsweep.retrievers.factory import IndexRetrievers

        ctx, config = self.ctx, self.config
        if config.baseline is not None:
            raise RagsweepError(
                f"{config.config_id}: a reference baseline answers from a question's gold evidence, which a new "
                "question does not have; open one of the configurations it is compared with"
            )
        self.on_close(tracing.start(self.spec.tracing, self.spec.name, session="live"))  # ask, serve: off unless named
        if llms_in_use(self.spec, with_stage2=False):
            check_llms(self.spec, None)
            self.clients = LLMClients(self.spec, ctx.cache.llm_calls, run_id="ask")
            ctx.llm = self.clients.get(self.spec.llm) if self.spec.llm is not None else None
            ctx.llm_for = self.clients.get  # chunk contexts an LLM writes, when the cache lacks them
        self.chunks = chunk.chunk(ctx, config)
        parts = {name: index.memory_part(ctx, self.chunks, name) for name in config.retriever.memory_parts}
        for built in parts.values():
            if isinstance(built, Exception):
                raise built
        graphs = None
        if config.retriever.uses_graph:
            ctx.neo4j = graph.neo4j_connection(self.spec, [config])
            graphs = graph.chunk_graphs(ctx, config, self.chunks)
        vector = None
        if config.embedding is not None:
            self._chroma = index.chroma_client(ctx)
            vector = index.vector_index(ctx, config, self.chunks, self._chroma)
        self.retrievers = IndexRetrievers(
            parts, vector, llm=ctx.llm, graphs=graphs, rerankers=ctx.rerankers, transform_memo=ctx.transform_memo
        )
        self.built = answer.build_engine(ctx, config, self.retrievers)
        self._texts = {c.node_id: c.text for c in self.chunks}

    def twin(self) -> LivePipeline:
        """Another pipeline of the same configuration over the same cache, with its own connections and models:
        one per worker thread of a pool (``serve``). Close each twin before this pipeline, which may own the
        cache's folder."""
        chosen, export_root = self._made
        return LivePipeline(
            self.spec, self.config, self.dataset, self.ctx.cache, chosen=chosen, export_root=export_root
        )

    @property
    def engine(self) -> Any:
        """``RetrieverQueryEngine`` over the configuration's retriever, its postprocessors (windows, merges,
        cutoffs, order) as node postprocessors and its generator as the response synthesizer."""
        from ragsweep.pipelines.live_engine import query_engine

        return query_engine(self)

    @property
    def chat_engine(self) -> Any:
        """LlamaIndex's chat engine where the configuration's history mode is one (``condense``:
        ``CondenseQuestionChatEngine``; ``condense_plus_context``: ``CondensePlusContextChatEngine``); other modes
        answer with ``engine``, a query engine."""
        from ragsweep.pipelines.live_engine import chat_engine

        return chat_engine(self)

    @property
    def retriever(self) -> Any:
        """The configuration's LlamaIndex retriever (top_k, tuned weights, transform and reranker applied)."""
        return self.built.retriever

    def ask(
        self,
        question: str,
        *,
        answer: bool = True,
        stream: Callable[[str], None] | None = None,
        history: Sequence[Turn] = (),
    ) -> AnswerRecord:
        """The answer payload of ``question`` (its sources with their text), as the sweep would record it;
        ``history``: the conversation before it (``Turn``s, oldest first), used as the configuration's history mode
        says (a configuration without one answers the question alone);
        ``answer=False``: retrieval only (no call to an LLM generator; the extractive answer costs nothing);
        ``stream``: called, on this thread, with each piece of an LLM generator's answer as its server writes it
        (a reply from the cache comes as one piece; an extractive answer is not streamed: the payload has it). A
        ``stream`` that raises fails the question; the reply is still read to its end and cached."""
        from ragsweep.pipelines.stages.generate import streamed_to

        histories = [tuple(history)]
        if stream is None:
            return self.ask_many([question], answer=answer, histories=histories)[0]
        with streamed_to(stream):
            return self.ask_many([question], answer=answer, histories=histories)[0]

    def ask_many(
        self, questions: list[str], *, answer: bool = True, histories: list[tuple[Turn, ...]] | None = None
    ) -> list[AnswerRecord]:
        """``ask`` for each question (with its conversation in ``histories``, if given), in order: the questions
        embedded first, an LLM generator's answers written concurrently (as the sweep does). A question that fails
        raises its one-line reason."""
        asked = [
            Question(qid=f"ask-{i}", question=text, history=tuple(histories[i]) if histories else ())
            for i, text in enumerate(questions)
        ]
        try:
            return self._ask_many(asked, answer)
        finally:  # nothing is kept per question: a served pipeline's memory stays flat
            self.retrievers.forget()
            self.ctx.rerankers.forget()

    def _ask_many(self, asked: list[Question], answer: bool) -> list[AnswerRecord]:
        from ragsweep.history.base import query_texts
        from ragsweep.pipelines.journal import MemorySink
        from ragsweep.pipelines.progress import NullBar
        from ragsweep.pipelines.stages import answer as answer_stage
        from ragsweep.pipelines.stages import generate, queries

        ctx, config = self.ctx, self.config
        texts = [t for q in asked for t in query_texts(config.history, q)]  # as the sweep embeds them
        query_ms = (
            queries.embed_questions(ctx, config.embedding, list(dict.fromkeys(texts)))
            if config.embedding is not None
            else {}
        )
        sink, gen_items = MemorySink(), list[Retrieved]()
        for q in asked:
            try:
                answer_stage.answer_question(ctx, config, self.built, q, Outlet(sink, None, gen_items), query_ms)
            except RagsweepError:
                raise
            except Exception as exc:  # noqa: BLE001 - the caller gets one line naming the configuration
                raise RagsweepError(f"{config.config_id}: {short_reason(exc)}") from exc
        if gen_items and not answer:
            payloads = {item.question.qid: item.record for item in gen_items}
        else:
            if gen_items:
                stop = generate.generate_all(self.spec, gen_items, sink, self.clients, ctx.stats, NullBar())
                if stop is not None:
                    raise stop
            payloads = {row[1]: row[3] for row in sink.rows}
        return [self._with_texts(payloads[q.qid]) for q in asked]

    def _with_texts(self, payload: AnswerRecord) -> AnswerRecord:
        """The payload, or its error as a one-line exception; each source with its text."""
        if payload.get("error"):
            raise RagsweepError(f"{self.config.config_id}: {payload['error']}")
        for s in payload["sources"]:
            s["text"] = self._texts.get(s["node_id"], "")
            if s.get("merged_from"):  # a postprocessor's window or parent: its own range of the document
                s["text"] = self.dataset.document(s["doc_id"]).text[s["start"] : s["end"]]
        return payload

    def on_close(self, closer: Callable[[], object]) -> None:
        """Call ``closer`` once this pipeline is closed (an exported folder's private copy is removed so)."""
        self._closers.append(closer)

    def close(self) -> None:
        try:
            if self.clients is not None:
                self.clients.close()
            if self.ctx.neo4j is not None:
                self.ctx.neo4j.close()
            self.ctx.models.close()
            close_chroma = getattr(self._chroma, "close", None)  # its database closes with the last client
            if close_chroma is not None:
                close_chroma()
        finally:
            while self._closers:
                self._closers.pop()()

    def __enter__(self) -> LivePipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
