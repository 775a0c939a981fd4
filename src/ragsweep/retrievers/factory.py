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
        if isinstance(spec, FusionSpec):
            from llama_index.core.llms import MockLLM
            from llama_index.core.retrievers.fusion_retriever import FUSION_MODES

            from ragsweep.retrievers.fusion import WeightedFusionRetriever

            assert self.bm25 is not None and self.vector is not None
            if spec.num_queries > 1 and self.llm is None:
                raise ValueError("fusion with num_queries > 1 needs the spec's llm for query rewrites")
            return WeightedFusionRetriever(
                [MemoRetriever(self.vector, k), MemoRetriever(self.bm25, k)],
                mode=FUSION_MODES(spec.mode),
                similarity_top_k=k,
                num_queries=spec.num_queries,
                use_async=False,
                retriever_weights=list(spec.weights) if spec.weights else None,
                rrf_weighted=spec.weights is not None,
                # num_queries == 1: no query rewriting, so no LLM is ever called; MockLLM only
                # keeps LlamaIndex from resolving its default OpenAI LLM (which needs a key).
                llm=self.llm if spec.num_queries > 1 else MockLLM(),
            )
        if isinstance(spec, KnowledgeGraphSpec):
            assert self.graphs is not None
            return MemoRetriever(self.graphs.shared(spec), k)
        if isinstance(spec, HybridKGSpec):
            from llama_index.core.llms import MockLLM
            from llama_index.core.retrievers.fusion_retriever import FUSION_MODES

            from ragsweep.retrievers.fusion import WeightedFusionRetriever

            assert self.bm25 is not None and self.vector is not None and self.graphs is not None
            return WeightedFusionRetriever(
                [MemoRetriever(self.vector, k), MemoRetriever(self.bm25, k), MemoRetriever(self.graphs.shared(spec), k)],
                mode=FUSION_MODES.RECIPROCAL_RANK, similarity_top_k=k, num_queries=1, use_async=False,
                retriever_weights=list(spec.weights) if spec.weights else None, rrf_weighted=spec.weights is not None,
                llm=MockLLM(),  # one query: never called
            )
        raise TypeError(type(spec).__name__)

    def _parts(self, spec: RetrieverSpec) -> list[tuple[str, SharedResults]]:
        if isinstance(spec, FusionSpec):
            return [("vector", self.vector), ("bm25", self.bm25)]
        if isinstance(spec, HybridKGSpec):
            return [("vector", self.vector), ("bm25", self.bm25), ("graph", self.graphs.shared(spec))]
        return []

    def source_ranks(self, spec: RetrieverSpec, k: int, query: str) -> dict[str, dict[str, int]]:
        """For fusions: node id -> {retriever: 1-based rank} in each sub-retriever's top k."""
        out: dict[str, dict[str, int]] = {}
        for name, shared in self._parts(spec):
            assert shared is not None
            for rank, nws in enumerate(shared.peek(query)[:k], start=1):
                out.setdefault(nws.node.node_id, {})[name] = rank
        return out
