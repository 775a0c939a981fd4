"""Retrievers for one (splitter, embedding) index: BM25, vector, knowledge graph and their fusions,
all memoised."""

from __future__ import annotations

from ragsweep.config import BM25Spec, FusionSpec, HybridKGSpec, KnowledgeGraphSpec, RetrieverSpec, VectorSpec
from ragsweep.retrievers.memo import MemoRetriever, SharedResults


def bm25_retriever(chunks, k_max: int):
    """LlamaIndex's BM25Retriever (bm25s, English stemming) over the chunks."""
    from llama_index.retrievers.bm25 import BM25Retriever

    nodes = [c.to_node() for c in chunks]
    return BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=max(1, min(k_max, len(nodes))))


class IndexRetrievers:
    """Shared base retrievers of one (splitter, embedding) index and memoised views per top_k."""

    def __init__(self, bm25_shared: SharedResults | None, vector_shared: SharedResults | None, llm=None,
                 graphs=None) -> None:
        self.bm25 = bm25_shared
        self.vector = vector_shared
        self.llm = llm  # writes fusion query rewrites (num_queries > 1)
        self.graphs = graphs  # ChunkGraphs of these chunks, for knowledge-graph retrievers

    def make(self, spec: RetrieverSpec, k: int):
        if isinstance(spec, BM25Spec):
            assert self.bm25 is not None
            return MemoRetriever(self.bm25, k)
        if isinstance(spec, VectorSpec):
            assert self.vector is not None
            return MemoRetriever(self.vector, k)
        if isinstance(spec, KnowledgeGraphSpec):
            assert self.graphs is not None
            return MemoRetriever(self.graphs.shared(spec), k)
        if isinstance(spec, (FusionSpec, HybridKGSpec)):
            return self._fusion(spec, k)
        raise TypeError(type(spec).__name__)

    def _fusion(self, spec: FusionSpec | HybridKGSpec, k: int):
        """WeightedFusionRetriever over the memoised top-k views of the spec's parts."""
        from llama_index.core.llms import MockLLM
        from llama_index.core.retrievers.fusion_retriever import FUSION_MODES

        from ragsweep.retrievers.fusion import WeightedFusionRetriever

        num_queries = getattr(spec, "num_queries", 1)
        if num_queries > 1 and self.llm is None:
            raise ValueError("fusion with num_queries > 1 needs the spec's llm for query rewrites")
        return WeightedFusionRetriever(
            [MemoRetriever(shared, k) for _, shared in self._parts(spec)],
            mode=FUSION_MODES(getattr(spec, "mode", "reciprocal_rerank")),
            similarity_top_k=k,
            num_queries=num_queries,
            use_async=False,
            retriever_weights=list(spec.weights) if spec.weights else None,
            rrf_weighted=spec.weights is not None,
            # num_queries == 1: no query rewriting, so no LLM is ever called; MockLLM only
            # keeps LlamaIndex from resolving its default OpenAI LLM (which needs a key).
            llm=self.llm if num_queries > 1 else MockLLM(),
        )

    def _parts(self, spec: RetrieverSpec) -> list[tuple[str, SharedResults]]:
        """The shared results a fusion combines, named as in the records' per-retriever ranks."""
        if isinstance(spec, FusionSpec):
            parts = [("vector", self.vector), ("bm25", self.bm25)]
        elif isinstance(spec, HybridKGSpec):
            assert self.graphs is not None
            parts = [("vector", self.vector), ("bm25", self.bm25), ("graph", self.graphs.shared(spec))]
        else:
            return []
        assert all(shared is not None for _, shared in parts)
        return parts

    def source_ranks(self, spec: RetrieverSpec, k: int, query: str) -> dict[str, dict[str, int]]:
        """For fusions: node id -> {retriever: 1-based rank} in each sub-retriever's top k."""
        out: dict[str, dict[str, int]] = {}
        for name, shared in self._parts(spec):
            for rank, nws in enumerate(shared.peek(query)[:k], start=1):
                out.setdefault(nws.node.node_id, {})[name] = rank
        return out
