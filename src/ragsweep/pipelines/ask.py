"""``ragsweep ask``: one free-form question through one configuration, with the sweep's stages and caches."""

from __future__ import annotations

from pathlib import Path

from ragsweep.cache_dir import DEFAULT_CACHE, CacheDir
from ragsweep.config import SweepSpec
from ragsweep.datasets.types import Dataset, Question
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.answer_record import AnswerRecord, Retrieved
from ragsweep.pipelines.grid import Configuration


def answer_question(
    spec: SweepSpec,
    config: Configuration,
    dataset: Dataset,
    question: str,
    cache_dir: Path | None = None,
    tuned: dict | None = None,
) -> AnswerRecord:
    """The answer payload (sources with their text) of ``question`` under ``config``, reusing the caches
    (it may build a missing index, so it holds the cache's lock while it runs); ``tuned``: the fusion
    weights the run chose on its validation questions (its manifest's ``tuned_weights`` entry)."""
    from ragsweep.pipelines.lock import writer_locks

    cache = CacheDir(Path(cache_dir or spec.cache_dir or DEFAULT_CACHE))
    with writer_locks(spec, None, cache.root):
        return _answer(spec, config, dataset, question, cache, tuned)


def _answer(
    spec: SweepSpec, config: Configuration, dataset: Dataset, question: str, cache: CacheDir, tuned: dict | None = None
) -> AnswerRecord:
    from ragsweep.embeddings.cache import EmbeddingCache
    from ragsweep.llm.clients import LLMClients, check_llms, llms_in_use
    from ragsweep.pipelines.context import Models, StageContext
    from ragsweep.pipelines.journal import MemorySink
    from ragsweep.pipelines.progress import NullBar
    from ragsweep.pipelines.stages import answer, chunk, generate, graph, index, queries
    from ragsweep.retrievers.factory import IndexRetrievers

    clients = None
    spec = spec.model_copy(update={"top_k": [config.top_k]})  # retrieve at this configuration's k only
    ctx = StageContext(
        spec=spec, dataset=dataset, cache=cache, models=Models(lambda: EmbeddingCache(cache.embeddings), cache.root)
    )
    if tuned:
        ctx.tuned_weights[config.config_hash] = tuned
    try:
        if llms_in_use(spec, with_stage2=False):
            check_llms(spec, None)
            clients = LLMClients(spec, cache.llm_calls, run_id="ask")
            ctx.llm = clients.get(spec.llm) if spec.llm is not None else None
            ctx.llm_for = clients.get  # chunk contexts an LLM writes, when the run has not cached them
        chunks = chunk.chunk(ctx, config)
        bm25 = index.bm25_index(ctx, chunks) if config.retriever.uses_bm25 else None
        if isinstance(bm25, Exception):
            raise bm25
        graphs = None
        if config.retriever.uses_graph:
            ctx.neo4j = graph.neo4j_connection(spec, [config])
            graphs = graph.chunk_graphs(ctx, config, chunks)
        vector, query_ms = None, {}
        if config.embedding is not None:
            vector = index.vector_index(ctx, config, chunks, index.chroma_client(ctx))
            query_ms = queries.embed_questions(ctx, config.embedding, [question])
        sink, bar, gen_items = MemorySink(), NullBar(), list[Retrieved]()
        q = Question(qid="ask", question=question)
        retrievers = IndexRetrievers(bm25, vector, llm=ctx.llm, graphs=graphs, rerankers=ctx.rerankers)
        answer.answer_config(ctx, config, retrievers, [q], sink, bar, query_ms, gen_items)
        if gen_items:
            stop = generate.generate_all(spec, gen_items, sink, clients, ctx.stats, bar)
            if stop is not None:
                raise stop
        payload = sink.rows[0][3]
        if payload.get("error"):
            raise RagsweepError(f"{config.config_id}: {payload['error']}")
        texts = {c.node_id: c.text for c in chunks}
        for s in payload["sources"]:
            s["text"] = texts.get(s["node_id"], "")
            if s.get("merged_from"):  # a postprocessor's window or parent: its own range of the document
                s["text"] = dataset.document(s["doc_id"]).text[s["start"] : s["end"]]
        return payload
    finally:
        if clients is not None:
            clients.close()
        if ctx.neo4j is not None:
            ctx.neo4j.close()
        ctx.models.close()
