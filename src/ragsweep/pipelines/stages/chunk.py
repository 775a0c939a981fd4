"""Chunk: split the corpus with one splitter, once per corpus and settings (cached on disk)."""

from __future__ import annotations

import hashlib
import json

from ragsweep.config import uses_llm
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.grid import Configuration
from ragsweep.pipelines.stats import Timer, UnitTimer
from ragsweep.splitters.build import Chunk
from ragsweep.splitters.chunk_store import load_chunks, save_chunks


def splitter_versions() -> list[str]:
    """The splitter libraries' versions: a new version may cut differently, so it is part of the key."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for pkg in ("llama-index-core", "langchain-text-splitters", "langchain-experimental"):
        try:
            out.append(f"{pkg}=={version(pkg)}")
        except PackageNotFoundError:
            out.append(f"{pkg}==?")
    return out


def chunks_key(config: Configuration, corpus_fingerprint: str) -> str:
    """What the cached chunks of a splitter depend on: its settings, the corpus, the splitter libraries."""
    from ragsweep import __version__

    return json.dumps([config.chunk_identity(), corpus_fingerprint, splitter_versions(), __version__], sort_keys=True)


def splitter_key(config: Configuration) -> str:
    """What one document's chunks depend on beside the document: the splitter's settings and libraries, and its
    label (the chunks' node ids carry it)."""
    from ragsweep import __version__

    return json.dumps([config.chunk_identity(), config.chunk_key, splitter_versions(), __version__], sort_keys=True)


def chunk_digest(chunks: list[Chunk]) -> str:
    """A hash of the chunks' ids, spans and texts: part of the keys of everything built on them."""
    h = hashlib.sha256()
    for c in chunks:
        h.update(f"{c.node_id}\0{c.start}\0{c.end}\0".encode())
        h.update(c.text.encode())
        if c.context is not None:  # contextual chunks index other texts: never the plain chunks' collection
            h.update(f"\0context\0{c.context}".encode())
    return h.hexdigest()[:16]


def cached_chunks_path(cache, config: Configuration, dataset):
    """Where the splitter's chunks are (or will be) cached."""
    return cache.chunks_path(chunks_key(config, dataset.corpus_fingerprint()))


def cached_chunks(ctx: StageContext, config: Configuration) -> list[Chunk] | None:
    """The splitter's chunks if the cache has them."""
    return load_chunks(cached_chunks_path(ctx.cache, config, ctx.dataset))


def store_chunks(ctx: StageContext, config: Configuration, chunks: list[Chunk]) -> None:
    save_chunks(cached_chunks_path(ctx.cache, config, ctx.dataset), chunks)


def count(ctx: StageContext, config: Configuration, chunks: list[Chunk]) -> None:
    ctx.stats.chunks[config.chunk_key] = len(chunks)
    ctx.stats.unique_chunk_texts[config.chunk_key] = len({c.text for c in chunks})


def count_cached(stats, cache, dataset, configs: list[Configuration]) -> None:
    """The chunk counts of the splitters this invocation did not chunk (a re-run with nothing left to answer for
    them), read from the chunk cache: a verdict's index sizes do not depend on which invocation chunked what."""
    first = {c.chunk_key: c for c in reversed(configs) if c.baseline is None}
    for key, config in first.items():
        if key not in stats.chunks:
            chunks = load_chunks(cached_chunks_path(cache, config, dataset))
            if chunks:
                stats.chunks[key] = len(chunks)
                stats.unique_chunk_texts[key] = len({c.text for c in chunks})


def chunk(ctx: StageContext, config: Configuration) -> list[Chunk]:
    """Chunks of the corpus for ``config``'s splitter: from the cache, else computed once and stored."""
    chunks = cached_chunks(ctx, config)
    if chunks is None:
        chunks = _split(ctx, config)
        if not chunks:
            raise RagsweepError(f"splitter {config.chunk_key}: produced no chunks; is the corpus empty?")
        if uses_llm(config.splitter.context):  # the situating sentence an LLM writes per chunk
            from ragsweep.pipelines.stages.chunk_context import llm_contexts

            chunks = llm_contexts(ctx, config, chunks)
        store_chunks(ctx, config, chunks)
    count(ctx, config, chunks)
    return chunks


def _split(ctx: StageContext, config: Configuration) -> list[Chunk]:
    """The splitter's chunks, with their offline context prefix if any: each document's from the per-document
    store when it has them (``splitters/doc_chunks.py``), the others split now and stored."""
    from ragsweep.splitters.build import make_parser, split_corpus
    from ragsweep.splitters.doc_chunks import DocumentChunks

    with Timer(ctx.stats, "chunking"), UnitTimer(ctx.stats, f"chunk:{config.chunk_key}"):
        documents = ctx.dataset.documents
        bar = ctx.bars.add(f"chunking {config.chunk_key}", len(documents))
        store = DocumentChunks(ctx.cache.doc_chunks, splitter_key(config))
        try:
            found = store.get(documents)  # documents split before, in this corpus or another
            ctx.bars.advance(bar, len(found))
            todo = [d for d in documents if d.doc_id not in found]
            if todo:
                lc_emb = None
                if config.chunk_embedding is not None:
                    from ragsweep.embeddings.cached import LangChainEmbeddingAdapter

                    lc_emb = LangChainEmbeddingAdapter(ctx.models(config.chunk_embedding))
                parser = make_parser(config.splitter, lc_emb)
                made = split_corpus(todo, parser, config.chunk_key, progress=lambda n: ctx.bars.advance(bar, n))
                store.put(todo, made)
                for c in made:
                    found.setdefault(c.doc_id, []).append(c)
        finally:
            store.close()
        ctx.stats.documents_split += len(todo)
        chunks = [c for d in documents for c in found.get(d.doc_id, [])]  # the corpus's order, as one split gives
        if isinstance(config.splitter.context, str) and config.splitter.context != "none":
            from ragsweep.splitters.context_prefix import contextualise  # the offline prefix each is indexed with

            chunks = contextualise(chunks, documents, config.splitter.context)
    return chunks
