"""Chunk: split the corpus with one splitter, once per corpus and settings (cached on disk)."""

from __future__ import annotations

import hashlib
import json

from ragsweep.errors import RagsweepError
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.grid import Configuration
from ragsweep.pipelines.stats import Timer
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


def chunk_digest(chunks: list[Chunk]) -> str:
    """A hash of the chunks' ids, spans and texts: part of the keys of everything built on them."""
    h = hashlib.sha256()
    for c in chunks:
        h.update(f"{c.node_id}\0{c.start}\0{c.end}\0".encode())
        h.update(c.text.encode())
        if c.context is not None:  # contextual chunks index other texts: never the plain chunks' collection
            h.update(f"\0context\0{c.context}".encode())
    return h.hexdigest()[:16]


def cached_chunks(ctx: StageContext, config: Configuration) -> list[Chunk] | None:
    """The splitter's chunks if the cache has them."""
    return load_chunks(ctx.cache.chunks_path(chunks_key(config, ctx.dataset.corpus_fingerprint())))


def store_chunks(ctx: StageContext, config: Configuration, chunks: list[Chunk]) -> None:
    save_chunks(ctx.cache.chunks_path(chunks_key(config, ctx.dataset.corpus_fingerprint())), chunks)


def count(ctx: StageContext, config: Configuration, chunks: list[Chunk]) -> None:
    ctx.stats.chunks[config.chunk_key] = len(chunks)
    ctx.stats.unique_chunk_texts[config.chunk_key] = len({c.text for c in chunks})


def chunk(ctx: StageContext, config: Configuration) -> list[Chunk]:
    """Chunks of the corpus for ``config``'s splitter: from the cache, else computed once and stored."""
    chunks = cached_chunks(ctx, config)
    if chunks is None:
        from ragsweep.splitters.build import make_parser, split_corpus

        with Timer(ctx.stats, "chunking"):
            lc_emb = None
            if config.chunk_embedding is not None:
                from ragsweep.embeddings.cached import LangChainEmbeddingAdapter

                lc_emb = LangChainEmbeddingAdapter(ctx.models(config.chunk_embedding))
            parser = make_parser(config.splitter, lc_emb)
            bar = ctx.bars.add(f"chunking {config.chunk_key}", len(ctx.dataset.documents))
            chunks = split_corpus(ctx.dataset.documents, parser, config.chunk_key,
                                  progress=lambda n: ctx.bars.advance(bar, n))
            if config.splitter.context != "none":  # contextual chunks: the prefix each is indexed with
                from ragsweep.splitters.context_prefix import contextualise

                chunks = contextualise(chunks, ctx.dataset.documents, config.splitter.context)
            if not chunks:
                raise RagsweepError(f"splitter {config.chunk_key}: produced no chunks; is the corpus empty?")
            store_chunks(ctx, config, chunks)
    count(ctx, config, chunks)
    return chunks
