"""Chroma collections for (corpus, splitter, embedding) triples: built once, reopened afterwards.

A collection is named by a hash of what determines its contents, so a later run or another sweep
over the same corpus reopens it instead of re-inserting. Embedded (persistent directory) by
default; a Chroma server by URL when the spec says so.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ragsweep.errors import RagsweepError


def client_for(path: Path | None, url: str | None):
    """A Chroma client: HTTP when ``url`` is given, otherwise persistent at ``path``."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if url:
        from urllib.parse import urlparse

        from ragsweep.redact import redact_url

        u = urlparse(url)
        try:
            client = chromadb.HttpClient(
                host=u.hostname or "", port=u.port or 8000, ssl=u.scheme == "https", settings=settings
            )
            client.heartbeat()
        except Exception as exc:  # noqa: BLE001 - any connection failure gets the same clear line
            raise RagsweepError(
                f"vector_store.url: cannot reach the Chroma server at {redact_url(url)} ({type(exc).__name__}); "
                "start it with `chroma run --host 127.0.0.1 --port PORT` or remove url to use embedded Chroma"
            ) from None
        return client
    assert path is not None
    path.mkdir(parents=True, exist_ok=True)
    try:
        return chromadb.PersistentClient(path=str(path), settings=settings)
    except Exception as exc:  # noqa: BLE001 - a corrupt or foreign database: one line naming it
        from ragsweep.errors import short_reason

        raise RagsweepError(
            f"{path / 'chroma.sqlite3'}: Chroma cannot open it ({short_reason(exc)}); in a cache, delete {path} "
            "and it is built again; in an exported folder, export the run again"
        ) from None


def float32_store(collection, nodes: dict | None = None):
    """LlamaIndex's ChromaVectorStore whose similarities are those of Chroma's float32 distances, and whose
    equal scores are ordered by node id.

    ``nodes``: the collection's nodes by id (its chunks' ``to_node()``), when the caller has them: a search is then
    exact over the collection's vectors (``exact_vectors``: the same results however its HNSW graph was linked)
    and returns these nodes, shared by every result that names them, instead of a node decoded from the stored
    text and metadata per result (what LlamaIndex's query makes: the same node, at about 3 KB per result kept by
    the retrieval memo for every question of a splitter).

    Chroma computes distances in float32. The embedded client hands them over exactly, the HTTP
    client as the shortest decimal that reads back as the same float32, so the two differ in the
    ninth digit; snapping to float32 makes a run against a server score exactly as an embedded one.
    Equal vectors (a sentence repeated across documents) score equally, and HNSW returns them in the
    order its graph meets them, which two builds of one collection need not share: ``TIE_PAD`` more
    results are fetched, sorted by (score, id), and cut to the k asked for, so a tie at the cut or
    inside the top k is broken the same way every time.
    """
    import dataclasses
    import math

    import numpy as np
    from llama_index.vector_stores.chroma import ChromaVectorStore

    exact: list = []  # the collection's vectors, read at the first search (``exact_vectors.ExactVectors``)

    def snapped(similarities):  # similarity = exp(-distance) in llama-index-vector-stores-chroma
        return [math.exp(-float(np.float32(-math.log(s)))) if s > 0 else s for s in similarities]

    class Float32ChromaVectorStore(ChromaVectorStore):
        def query(self, query, **kwargs):
            k = query.similarity_top_k
            if query.query_embedding and query.mode == "default" and query.filters is None and not kwargs:
                fast = self._top_k(query.query_embedding, k)
                if fast is not None:
                    return fast
            padded = query.query_embedding is not None and query.mode == "default"
            if padded:
                query = dataclasses.replace(query, similarity_top_k=k + TIE_PAD)
            result = super().query(query, **kwargs)
            if result.similarities:
                result.similarities = snapped(result.similarities)
            if padded and result.similarities and result.ids:
                return by_score_then_id(result, k)
            return result

        def _top_k(self, embedding, k: int):
            """LlamaIndex's query without filters: with the collection's nodes known, an exact search over its
            vectors (``exact_vectors``: HNSW's results moved with how a build linked its graph); otherwise Chroma's
            search, its nodes made only for the k results kept (of k + TIE_PAD fetched: making the padding's nodes
            was a sixth of the answering stage); None for a collection whose metadata LlamaIndex did not write (its
            own query reads those the legacy way)."""
            from llama_index.core.vector_stores.types import VectorStoreQueryResult
            from llama_index.core.vector_stores.utils import metadata_dict_to_node

            if nodes is not None:
                if not exact:
                    from ragsweep.retrievers.exact_vectors import ExactVectors

                    exact.append(ExactVectors.of(self._collection))
                found = exact[0].top(embedding, k)
                if all(i in nodes for i, _ in found):
                    return VectorStoreQueryResult(
                        nodes=[nodes[i] for i, _ in found],
                        similarities=[s for _, s in found],
                        ids=[i for i, _ in found],
                    )
                return None  # a collection holding other nodes than the caller's: LlamaIndex's own query
            got: Any = self._collection.query(query_embeddings=[embedding], n_results=k + TIE_PAD)
            ids = got["ids"][0]
            sims = snapped([math.exp(-d) for d in got["distances"][0]])
            order = sorted(range(len(ids)), key=lambda i: (-sims[i], ids[i]))[:k]
            texts, metas = got["documents"][0], got["metadatas"][0]
            try:
                kept = [metadata_dict_to_node(metas[i], text=texts[i]) for i in order]
            except Exception:  # noqa: BLE001 - not written by LlamaIndex: its query's legacy reading (None)
                return None
            return VectorStoreQueryResult(
                nodes=kept, similarities=[sims[i] for i in order], ids=[ids[i] for i in order]
            )

    return Float32ChromaVectorStore(chroma_collection=collection)  # type: ignore[call-arg]  # pydantic fields with defaults


HNSW_EF = 256  # candidates HNSW keeps while building and searching; a collection built with another is rebuilt
TIE_PAD = 16  # results fetched beyond k, so that equal scores at the cut are ordered by node id


def by_score_then_id(result, k: int):
    """The first ``k`` of a query result, best similarity first, equal similarities by node id."""
    from llama_index.core.vector_stores.types import VectorStoreQueryResult

    order = sorted(range(len(result.ids)), key=lambda i: (-result.similarities[i], result.ids[i]))[:k]
    return VectorStoreQueryResult(
        nodes=[result.nodes[i] for i in order] if result.nodes is not None else None,
        similarities=[result.similarities[i] for i in order],
        ids=[result.ids[i] for i in order],
    )


def collection_name(index_key: str) -> str:
    """Chroma names must be 3-63 characters of [a-zA-Z0-9._-]."""
    return "rs-" + hashlib.sha256(index_key.encode()).hexdigest()[:40]


def open_or_build(client, index_key: str, chunks, embed_model):
    """Return a LlamaIndex VectorStoreIndex over a Chroma collection holding exactly ``chunks``.

    Reuses the collection when its size and key match; otherwise (re)creates it, embedding the
    chunks through ``embed_model`` (the persistent cache makes repeated vectors free).
    """
    from llama_index.core import VectorStoreIndex

    name = collection_name(index_key)
    # hnsw:num_threads asks for one insertion thread (a graph linked in arrival order is the same every
    # time), but Chroma 1.5's Rust core ignores it (its collection configuration has no such field), so two
    # builds of one collection can link different graphs. search_ef: with Chroma's default of 10 candidates
    # per search, HNSW's recall, and with it the top results, depend on that build: two builds of the same
    # 5,203 vectors (contractnli, one sentence per chunk) gave a different top 5 for 17 of 150 questions at
    # 10, for 2 of 150 at 256. The sweep searches its collections exactly (``float32_store`` with nodes); the
    # graph serves a user's own Chroma queries.
    meta = {
        "hnsw:space": "cosine",
        "hnsw:num_threads": 1,
        "hnsw:search_ef": HNSW_EF,
        "hnsw:construction_ef": HNSW_EF,
        "ragsweep_key": index_key[:500],
        "ragsweep_n": len(chunks),
    }
    existing = None
    try:
        existing = client.get_collection(name)
    except Exception:  # noqa: BLE001 - chroma raises different types for "not found" across versions
        existing = None
    if (
        existing is not None
        and existing.metadata
        and existing.metadata.get("ragsweep_n") == len(chunks)
        and existing.metadata.get("hnsw:search_ef") == HNSW_EF
        and existing.count() == len(chunks)
    ):
        store = float32_store(existing, {c.node_id: c.to_node() for c in chunks})
        return VectorStoreIndex.from_vector_store(store, embed_model=embed_model), False
    if existing is not None:
        client.delete_collection(name)
    collection = client.create_collection(name, metadata=meta)
    store = float32_store(collection)
    for i in range(0, len(chunks), INSERT_BATCH):
        # streamed: one batch's nodes and vectors (as Python floats, ~8x their float32 size) at a time, never
        # the whole corpus's; the collection is what LlamaIndex's VectorStoreIndex(nodes) would write
        part = chunks[i : i + INSERT_BATCH]
        nodes = [c.to_node() for c in part]
        vectors = embed_model.get_text_embedding_batch([c.index_text for c in part])  # with a context, if any
        for node, vec in zip(nodes, vectors):
            node.embedding = vec
        store.add(nodes)
        del nodes, vectors
    store = float32_store(collection, {c.node_id: c.to_node() for c in chunks})
    return VectorStoreIndex.from_vector_store(store, embed_model=embed_model), True


INSERT_BATCH = 2048  # chunks embedded and inserted at a time: the build's memory is a batch's, not the corpus's
