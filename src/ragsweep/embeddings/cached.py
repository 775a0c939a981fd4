"""A LlamaIndex embedding that consults the persistent cache before the wrapped model.

Wrapping at the ``BaseEmbedding`` level means every LlamaIndex component (VectorStoreIndex,
retrievers, the semantic chunker through the LangChain adapter) reuses cached vectors without
knowing about the cache. ``computed`` counts vectors actually produced by the model.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr

from ragsweep.embeddings.batching import batch_keys, encode, equal_key_batches, in_parallel
from ragsweep.embeddings.cache import EmbeddingCache, text_key


class CachedEmbedding(BaseEmbedding):
    """Cache-first embedding; computes only what the cache lacks, in batches that cannot change a vector."""

    model_key: str
    _inner: BaseEmbedding = PrivateAttr()
    _loader: Callable[[], BaseEmbedding] = PrivateAttr()
    _cache: EmbeddingCache = PrivateAttr()
    _progress: Callable[[int], None] | None = PrivateAttr(default=None)
    _warm: bool = PrivateAttr(default=False)  # queries timed already: the model has had its first, slower calls
    computed: int = 0
    computed_queries: int = 0
    from_cache: int = 0  # chunk vectors (index builds) and question vectors served by the persistent cache

    def __init__(self, loader: Callable[[], BaseEmbedding], cache: EmbeddingCache, model_key: str, **kw: Any) -> None:
        super().__init__(model_name=model_key, model_key=model_key, **kw)
        self._loader = loader
        self._inner = None  # type: ignore[assignment]
        self._cache = cache

    @classmethod
    def class_name(cls) -> str:
        return "CachedEmbedding"

    @property
    def inner(self) -> BaseEmbedding:
        """The real model, loaded on first need: a fully cached run never loads weights."""
        if self._inner is None:
            self._inner = self._loader()
        return self._inner

    def set_progress(self, callback: Callable[[int], None] | None) -> None:
        self._progress = callback

    def _lookup(self, texts: list[str], role: str) -> list[list[float]]:
        keys = [text_key(t, role) for t in texts]
        found = self._cache.get_many(self.model_key, keys)
        if role == "text":
            self.from_cache += len(found)
        missing: dict[bytes, str] = {}
        for k, t in zip(keys, texts):
            if k not in found and k not in missing:
                missing[k] = t
        if self._progress is not None and len(texts) > len(missing):
            self._progress(len(texts) - len(missing))
        if missing:
            # batches that cannot change a vector: each is its text's alone, whatever was missing
            todo = list(missing.items())
            batch_keys_ = batch_keys(self.inner, [t for _, t in todo], role)
            batches = equal_key_batches(batch_keys_, self.embed_batch_size)
            calls = getattr(self.inner, "concurrent_calls", 1)
            for idx, vecs in in_parallel(
                lambda ix: encode(self.inner, [todo[i][1] for i in ix], role, batch_keys_[ix[0]]), batches, calls
            ):
                batch = [todo[i] for i in idx]
                self._cache.put_many(self.model_key, [(k, v) for (k, _), v in zip(batch, vecs)])
                found.update({k: v for (k, _), v in zip(batch, vecs)})
                self.computed += len(batch)
                if role == "query":
                    self.computed_queries += len(batch)
                if self._progress is not None:
                    self._progress(len(batch))
        return [found[k] for k in keys]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._lookup(texts, "text")

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._lookup([query], "query")[0]

    def timed_query_embeddings(self, queries: list[str]) -> dict[str, float]:
        """Make sure every query is embedded; return each query's embedding latency in ms.

        Queries are embedded one at a time, as a deployed query engine would, and the measured
        time is stored with the vector, so a later run reports the same latency without
        recomputing. The model is warmed up first so its load time is not charged to a query.
        """
        keys = {q: text_key(q, "query") for q in dict.fromkeys(queries)}
        known = self._cache.get_ms(self.model_key, list(keys.values()))
        missing = [q for q, k in keys.items() if k not in known]
        self.from_cache += len(keys) - len(missing)
        if missing:
            inner = self.inner
            for i in range(0 if self._warm else 3):  # the first calls after loading are slower: not a question's
                warm = f"warm-up query {i}"
                encode(inner, [warm], "query", batch_keys(inner, [warm], "query")[0])
            self._warm = True
            for q, key in zip(missing, batch_keys(inner, missing, "query")):
                t0 = time.perf_counter()  # one question per call, as a deployed query engine embeds it
                vec = encode(inner, [q], "query", key)[0]
                ms = (time.perf_counter() - t0) * 1000
                self._cache.put_many(self.model_key, [(keys[q], vec)], ms=[ms])
                known[keys[q]] = ms
                self.computed += 1
                self.computed_queries += 1
                if self._progress is not None:
                    self._progress(1)
        return {q: known[k] for q, k in keys.items()}

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embedding(text)


class LangChainEmbeddingAdapter:
    """LangChain's ``Embeddings`` interface over a (cached) LlamaIndex embedding, for SemanticChunker."""

    def __init__(self, embed: BaseEmbedding) -> None:
        self._embed = embed

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._embed.get_text_embedding_batch(list(texts))

    def embed_query(self, text: str) -> list[float]:
        return self._embed.get_query_embedding(text)
