"""Embed and index: one Chroma collection per (corpus, splitter, embedding), built once and reopened after;
the parts built in memory (BM25, TF-IDF: ``config/retrievers.MEMORY_PARTS``) once per splitter and process. Each
is queried once per question at the largest top_k (``retrievers.memo.SharedResults``)."""

from __future__ import annotations

import json

from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.grid import Configuration
from ragsweep.pipelines.stages.chunk import chunk_digest
from ragsweep.pipelines.stats import Timer


def chroma_client(ctx: StageContext):
    """The vector store: the spec's Chroma server, else the embedded directory (the spec's or the cache's)."""
    from ragsweep.retrievers.chroma import client_for

    return client_for(ctx.spec.vector_store.path or ctx.cache.chroma, ctx.spec.vector_store.url)


def index_key(ctx: StageContext, config: Configuration, chunks) -> str:
    """What a collection holds: the corpus, the splitter's chunks, the embedding model."""
    from ragsweep.embeddings.factory import model_key

    assert config.embedding is not None, "a vector index needs an embedding"
    return json.dumps(
        [ctx.dataset.corpus_fingerprint(), config.chunk_key, chunk_digest(chunks), model_key(config.embedding)]
    )


def vector_index(ctx: StageContext, config: Configuration, chunks, client):
    """Open (or build, embedding what the cache lacks) the collection of ``config``'s splitter and
    embedding; returns its shared top-k_max results."""
    from llama_index.core.retrievers import VectorIndexRetriever

    from ragsweep.retrievers.chroma import open_or_build
    from ragsweep.retrievers.memo import SharedResults

    assert config.embedding is not None, "a vector index needs an embedding"
    embed_model = ctx.models(config.embedding)
    bar = ctx.bars.add(f"embedding {config.chunk_key} x {config.embedding.label()}", len(chunks))
    embed_model.set_progress(lambda n: ctx.bars.advance(bar, n))
    with Timer(ctx.stats, "embedding_and_indexing"):
        index, built = open_or_build(client, index_key(ctx, config, chunks), chunks, embed_model)
    embed_model.set_progress(None)
    ctx.bars.complete(bar)
    if built:
        ctx.stats.indexes_built += 1
    else:
        ctx.stats.indexes_reused += 1
    retriever = VectorIndexRetriever(
        index, similarity_top_k=max(1, min(ctx.k_max, len(chunks))), embed_model=embed_model
    )
    return SharedResults(retriever, ctx.k_max)


def memory_part(ctx: StageContext, chunks, name: str):
    """The part ``name`` built in memory over the chunks (BM25, TF-IDF: ``config.MEMORY_PARTS``), shared at k_max;
    the exception if it cannot be built."""
    from ragsweep.components import load
    from ragsweep.config import MEMORY_PARTS
    from ragsweep.retrievers.memo import SharedResults

    with Timer(ctx.stats, f"indexing_{name}"):
        try:
            return SharedResults(load(MEMORY_PARTS[name])(chunks, ctx.k_max), ctx.k_max)
        except Exception as exc:  # noqa: BLE001 - recorded against the configurations that search it
            return exc
