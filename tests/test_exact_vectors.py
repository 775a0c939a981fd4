"""The sweep's vector search is exact: the same results however Chroma's HNSW graph was linked."""

from __future__ import annotations

import math

import numpy as np

from ragsweep.retrievers.exact_vectors import ExactVectors


def _brute(ids, vectors, query, k):
    m = np.asarray(vectors, dtype=np.float64)
    m = m / np.linalg.norm(m, axis=1, keepdims=True)
    q = np.asarray(query, dtype=np.float64) / np.linalg.norm(query)
    d = 1 - m @ q
    return [ids[i] for i in sorted(range(len(ids)), key=lambda i: (round(d[i], 5), ids[i]))[:k]]


def test_top_is_the_exhaustive_ranking_ties_by_id():
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((300, 16)).astype(np.float32)
    vectors[7] = vectors[3]  # a repeated text: equal scores, ordered by id
    ids = [f"n{i:03d}" for i in range(300)]
    exact = ExactVectors(ids, vectors)
    for q in rng.standard_normal((20, 16)):
        got = exact.top(q, 10)
        assert [i for i, _ in got] == _brute(ids, vectors, q, 10)
        assert all(a[1] >= b[1] for a, b in zip(got, got[1:]))
    found = dict(exact.top(vectors[3], 2))
    assert list(found) == ["n003", "n007"] and found["n003"] == found["n007"]
    assert math.isclose(found["n003"], 1.0, abs_tol=1e-6)  # exp(-distance), distance 0
    assert len(exact.top(vectors[0], 1000)) == 300 and exact.top(vectors[0], 0) == []


def test_a_collection_is_searched_exactly_whatever_its_graph(tmp_path, monkeypatch):
    """A collection whose HNSW search keeps one candidate (recall far below 1 on 2,000 random vectors) still gives
    the exhaustive top 10 through the sweep's store: its graph is not what the sweep searches. Its vectors are read
    from Chroma once, however many questions search them."""
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import VectorStoreQuery

    from ragsweep.retrievers.chroma import client_for, float32_store

    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((2000, 32)).astype(np.float32)
    ids = [f"c:{i:04d}" for i in range(2000)]
    client = client_for(tmp_path, None)
    meta = {"hnsw:space": "cosine", "hnsw:search_ef": 1, "hnsw:construction_ef": 4, "hnsw:M": 2}
    collection = client.create_collection("rs-exact-test", metadata=meta)
    collection.add(ids=ids, embeddings=vectors, documents=[f"text {i}" for i in range(2000)])
    nodes = {i: TextNode(id_=i, text=i) for i in ids}
    reads = []
    read = ExactVectors.of.__func__
    monkeypatch.setattr(ExactVectors, "of", classmethod(lambda cls, c: reads.append(c) or read(cls, c)))
    store = float32_store(collection, nodes)
    misses = 0
    for q in rng.standard_normal((30, 32)).astype(np.float32):
        want = _brute(ids, vectors, q, 10)
        got = store.query(VectorStoreQuery(query_embedding=q.tolist(), similarity_top_k=10))
        assert got.ids == want
        assert all(n is nodes[i] for n, i in zip(got.nodes, got.ids))
        hnsw = collection.query(query_embeddings=[q], n_results=10)["ids"][0]
        misses += hnsw != want
    assert misses > 0  # the graph alone would have missed some (else this test shows nothing)
    assert len(reads) == 1  # 30 questions, one read of the collection's vectors


def test_one_thread_or_many_and_any_row_order_give_the_same_bits():
    """A similarity does not move with the BLAS thread count (a Ray worker has one) or the row's position: with
    7,644 rows, OpenBLAS's product on two threads moved 4 rows' similarities against one thread."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((7644, 384)).astype(np.float32)
    ids = [f"n{i:05d}" for i in range(7644)]
    exact = ExactVectors(ids, vectors)
    reversed_rows = ExactVectors(ids[::-1], vectors[::-1])
    queries = rng.standard_normal((30, 384)).astype(np.float32)
    many = [exact.top(q, 7644) for q in queries]
    with threadpool_limits(1, user_api="blas"):
        one = [exact.top(q, 7644) for q in queries]
    assert one == many
    assert [reversed_rows.top(q, 7644) for q in queries] == many
