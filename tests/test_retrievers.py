"""Memoised retrieval across top_k, weighted reciprocal rank fusion, and per-retriever source ranks."""

from __future__ import annotations

import pytest
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from ragsweep.config import BM25Spec, FusionSpec, VectorSpec
from ragsweep.retrievers.factory import IndexRetrievers
from ragsweep.retrievers.fusion import RRF_K
from ragsweep.retrievers.memo import REPLAY, MemoRetriever, SharedResults


class Fixed(BaseRetriever):
    """A retriever with a fixed ranking (a real BaseRetriever, so LlamaIndex's plumbing runs)."""

    def __init__(self, ranking: list[tuple[str, float]]) -> None:
        super().__init__()
        self.ranking = ranking
        self.calls = 0

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        self.calls += 1
        return [NodeWithScore(node=TextNode(id_=i, text=f"text of {i}"), score=s) for i, s in self.ranking]


def ids(nodes) -> list[str]:
    return [n.node.node_id for n in nodes]


def test_memo_serves_every_top_k_from_one_call():
    base = Fixed([("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6)])
    shared = SharedResults(base, k_max=4)
    q = QueryBundle("q")
    assert ids(MemoRetriever(shared, 4).retrieve(q)) == ["a", "b", "c", "d"]
    assert ids(MemoRetriever(shared, 2).retrieve(q)) == ["a", "b"]
    assert ids(MemoRetriever(shared, 3).retrieve(q)) == ["a", "b", "c"]
    assert base.calls == 1


def test_memo_returns_copies_so_fusion_cannot_corrupt_shared_scores():
    shared = SharedResults(Fixed([("a", 0.9), ("b", 0.8)]), k_max=2)
    first = MemoRetriever(shared, 2).retrieve(QueryBundle("q"))
    first[0].score = -1.0
    again = MemoRetriever(shared, 2).retrieve(QueryBundle("q"))
    assert again[0].score == pytest.approx(0.9)


def test_memo_hits_replay_the_original_compute_time():
    shared = SharedResults(Fixed([("a", 1.0)]), k_max=1)
    REPLAY.take()
    MemoRetriever(shared, 1).retrieve(QueryBundle("q"))
    assert REPLAY.take() == 0.0  # a miss is measured by the caller's own clock
    MemoRetriever(shared, 1).retrieve(QueryBundle("q"))
    assert REPLAY.take() > 0.0


def _index(vector, bm25) -> IndexRetrievers:
    return IndexRetrievers({"bm25": SharedResults(Fixed(bm25), 3)}, SharedResults(Fixed(vector), 3))


VECTOR = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
BM25 = [("c", 12.0), ("d", 11.0), ("a", 10.0)]


def test_unweighted_rrf_is_llamaindex_reciprocal_rerank():
    # RRF scores with k=60, ranks from 0 as in LlamaIndex:
    # a: 1/60 + 1/62, c: 1/62 + 1/60, b: 1/61, d: 1/61  -> {a, c} tie first, then {b, d}
    idx = _index(VECTOR, BM25)
    out = idx.make(FusionSpec(kind="fusion"), 3).retrieve(QueryBundle("q"))
    scores = {n.node.node_id: n.score for n in out}
    assert set(ids(out)[:2]) == {"a", "c"}
    assert scores["a"] == pytest.approx(1 / RRF_K + 1 / (RRF_K + 2))
    assert len(out) == 3


def test_weighted_rrf_follows_the_weights():
    # weights [vector 0.9, bm25 0.1] (normalised): a = .9/60 + .1/62, c = .9/62 + .1/60, b = .9/61, d = .1/61
    idx = _index(VECTOR, BM25)
    out = idx.make(FusionSpec(kind="fusion", weights=(0.9, 0.1)), 4).retrieve(QueryBundle("q"))
    expect = {"a": 0.9 / 60 + 0.1 / 62, "b": 0.9 / 61, "c": 0.9 / 62 + 0.1 / 60, "d": 0.1 / 61}
    assert ids(out) == sorted(expect, key=expect.get, reverse=True)
    for n in out:
        assert n.score == pytest.approx(expect[n.node.node_id])


def test_rrf_keeps_chunks_with_identical_text_apart():
    """Two chunks of one repeated paragraph are different evidence (different spans), not one."""

    class Same(BaseRetriever):
        def _retrieve(self, query_bundle):
            return [
                NodeWithScore(node=TextNode(id_=i, text="the same paragraph"), score=s)
                for i, s in (("p1", 0.9), ("p2", 0.8))
            ]

    idx = IndexRetrievers({"bm25": SharedResults(Same(), 2)}, SharedResults(Same(), 2))
    out = idx.make(FusionSpec(kind="fusion"), 2).retrieve(QueryBundle("q"))
    assert ids(out) == ["p1", "p2"]


@pytest.mark.parametrize("mode", ["relative_score", "dist_based_score"])
def test_score_fusion_modes_run_and_respect_top_k(mode):
    idx = _index(VECTOR, BM25)
    out = idx.make(FusionSpec(kind="fusion", mode=mode), 2).retrieve(QueryBundle("q"))
    assert len(out) == 2
    assert all(0.0 <= n.score <= 1.0 + 1e-9 for n in out)


def test_source_ranks_report_each_retrievers_rank_within_k():
    idx = _index(VECTOR, BM25)
    spec = FusionSpec(kind="fusion")
    idx.make(spec, 2).retrieve(QueryBundle("q"))
    ranks = idx.source_ranks(spec, 2, "q")
    assert ranks["a"] == {"vector": 1}  # bm25 has "a" at rank 3, outside k = 2
    assert ranks["c"] == {"bm25": 1}
    assert ranks["d"] == {"bm25": 2} and ranks["b"] == {"vector": 2}
    assert idx.source_ranks(BM25Spec(kind="bm25"), 2, "q") == {}
    assert idx.source_ranks(VectorSpec(kind="vector"), 2, "q") == {}


def test_equal_vector_scores_are_ordered_by_node_id_whatever_the_insertion_order():
    """Four chunks with one text score equally; HNSW returns ties in the order its graph meets them (here,
    insertion order), so two builds could cut the top k differently. The store orders them by node id."""
    import chromadb
    import numpy as np
    from chromadb.config import Settings
    from llama_index.core.vector_stores.types import VectorStoreQuery

    from ragsweep.retrievers.chroma import float32_store

    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
    rng = np.random.default_rng(0)
    ids = [f"n{i:02d}" for i in range(60)] + [f"d{i}" for i in range(4)]
    duplicate = rng.normal(size=8).tolist()
    vectors = rng.normal(size=(60, 8)).tolist() + [duplicate] * 4
    texts = [f"text {i}" for i in range(60)] + ["the repeated sentence"] * 4
    found, raw = [], []
    for name, order in (("forward", range(64)), ("reverse", range(63, -1, -1))):
        collection = client.create_collection(f"ties-{name}", metadata={"hnsw:space": "cosine"})
        collection.add(
            ids=[ids[i] for i in order], embeddings=[vectors[i] for i in order], documents=[texts[i] for i in order]
        )
        raw.append(collection.query(query_embeddings=[duplicate], n_results=2)["ids"][0])
        result = float32_store(collection).query(VectorStoreQuery(query_embedding=duplicate, similarity_top_k=2))
        found.append(result.ids)
        assert result.similarities[0] == result.similarities[1] and len(result.nodes) == 2
    assert raw[0] != raw[1]  # Chroma alone cuts the tie differently
    assert found == [["d0", "d1"], ["d0", "d1"]]
