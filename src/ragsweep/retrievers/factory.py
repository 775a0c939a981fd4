"""Retrievers for one (splitter, embedding) index: the parts built in memory (BM25, TF-IDF), vector, knowledge
graph and their fusions, optionally query-transformed (``transforms.registry``) and reranked; all memoised."""

from __future__ import annotations

from typing import Any

from ragsweep.config import ActiveReranker, ActiveTransform, RetrieverSpec
from ragsweep.retrievers.memo import MemoRetriever, SharedResults


def bm25_retriever(chunks, k_max: int):
    """LlamaIndex's BM25Retriever (bm25s, English stemming) over the chunks, its results the chunks' own nodes."""
    from ragsweep.retrievers.bm25_shared import SharedNodeBM25

    nodes = [c.to_node() for c in chunks]
    return SharedNodeBM25.over(nodes, similarity_top_k=max(1, min(k_max, len(nodes))))


class IndexRetrievers:
    """Shared base retrievers of one (splitter, embedding) index and memoised views per top_k."""

    def __init__(
        self,
        parts: dict[str, SharedResults],
        vector_shared: SharedResults | None,
        llm=None,
        graphs=None,
        rerankers=None,
        transform_memo=None,
    ) -> None:
        self.parts = parts  # the parts built in memory (``config.MEMORY_PARTS``) by name
        self.vector = vector_shared
        self.llm = llm  # writes fusion query rewrites (num_queries > 1), LLM query transforms, reranks with kind llm
        self.graphs = graphs  # ChunkGraphs of these chunks, for knowledge-graph retrievers
        self.rerankers = rerankers  # rerankers.registry.RerankerModels: the process's built rerankers
        # transforms.base.TransformMemo: what LLM transforms wrote, shared with the process's other indexes
        self.transform_memo = transform_memo
        self._reranked: dict[tuple[str, ...], tuple[SharedResults, object]] = {}
        self._expanded: dict[str, Any] = {}  # transform key -> its transforms.base.AppliedTransform here

    def forget(self) -> None:
        """Drop what was memoised per question here: the index parts' results, the graphs', the reranked and
        transformed ones and the LLM transforms' outputs. A sweep keeps them while the configurations of a unit
        share a question; a pipeline that is asked questions without end (``serve``) drops them after each."""
        for shared in self._stores():
            shared.forget()
        if self.transform_memo is not None:
            self.transform_memo.forget()

    def memoised(self) -> int:
        """How many results (per query and search) and transform outputs are held here now."""
        return sum(s.size for s in self._stores()) + (self.transform_memo.size if self.transform_memo else 0)

    def _stores(self) -> list[SharedResults]:
        stores = [*self.parts.values(), *([self.vector] if self.vector is not None else [])]
        stores += [s for s, _ in self._reranked.values()]
        stores += [s for applied in self._expanded.values() for s in applied.stores()]
        return stores + (self.graphs.stores() if self.graphs is not None else [])

    def make(
        self,
        spec: RetrieverSpec,
        k: int,
        reranker: ActiveReranker | None = None,
        transform: ActiveTransform | None = None,
    ):
        """The retriever of ``spec`` at ``top_k`` k; with ``transform``, as the transform changes it (a
        part searching with another query, or the whole retriever run per query and fused); with
        ``reranker``, its top candidates reordered, then cut to k."""
        if reranker is not None:
            return MemoRetriever(self._reranked_results(spec, reranker, transform)[0], k)
        if len(spec.searches) == 1:  # what the spec searches, alone
            retriever = MemoRetriever(self._shared(spec.searches[0], spec, transform), k)
        else:  # its parts, fused
            retriever = self._fusion(spec, k, transform)
        return self._applied(transform).wrap(retriever, k) if transform is not None else retriever

    def _shared(self, name: str, spec: RetrieverSpec, transform: ActiveTransform | None) -> SharedResults:
        """The shared results of one part a spec ``searches``: vector or one built in memory (as ``transform``
        changes them), or the spec's knowledge graph."""
        if name == "graph":
            assert self.graphs is not None
            return self.graphs.shared(spec)
        return self._part(name, transform)

    def _part(self, name: str, transform: ActiveTransform | None) -> SharedResults:
        """The shared results of the ``vector`` part or one built in memory, as ``transform`` changes them."""
        shared = self.vector if name == "vector" else self.parts.get(name)
        assert shared is not None
        return self._applied(transform).part(name, shared) if transform is not None else shared

    def _applied(self, transform: ActiveTransform):
        """The transform built over these retrievers (``transforms.registry``), once per transform."""
        from ragsweep.retrievers.transforms.base import TransformMemo, transform_key
        from ragsweep.retrievers.transforms.registry import build

        key = transform_key(transform)
        if key not in self._expanded:
            if self.transform_memo is None:
                self.transform_memo = TransformMemo()
            self._expanded[key] = build(transform, self)
        return self._expanded[key]

    def transform_record(self, transform: ActiveTransform | None, query: str) -> dict:
        """The answer payload's fields for what ``transform`` searched with for ``query`` (RM3:
        ``expanded_query``; LLM transforms: ``transformed_queries``, ``transform_llm``, ``transform_note``)."""
        from ragsweep.retrievers.transforms.base import transform_key

        applied = self._expanded.get(transform_key(transform)) if transform is not None else None
        return applied.record(query) if applied is not None else {}

    def _reranked_results(self, spec: RetrieverSpec, reranker: ActiveReranker, transform: ActiveTransform | None):
        """The shared reordered candidates of one (retriever, transform, reranker) and their RerankingRetriever."""
        import json

        from ragsweep.rerankers.registry import RerankerModels
        from ragsweep.retrievers.reranked import RerankingRetriever

        key = (
            spec.model_dump_json(),
            json.dumps(transform.identity() if transform else None, sort_keys=True),
            json.dumps(reranker.identity(), sort_keys=True),
        )
        if key not in self._reranked:
            if self.rerankers is None:
                self.rerankers = RerankerModels()
            base = self.make(spec, reranker.candidates, transform=transform)
            retriever = RerankingRetriever(base, self.rerankers.get(reranker, self.llm), reranker.label())
            self._reranked[key] = (SharedResults(retriever, reranker.candidates), retriever)
        return self._reranked[key]

    def rerank_costs(
        self, spec: RetrieverSpec, reranker: ActiveReranker | None, query: str, transform: ActiveTransform | None = None
    ) -> dict:
        """What reordering ``query``'s candidates cost (``rerank_ms``, ``rerank_llm``); empty without a reranker."""
        if reranker is None:
            return {}
        return dict(self._reranked_results(spec, reranker, transform)[1].costs.get(query, {}))

    def _fusion(self, spec: RetrieverSpec, k: int, transform: ActiveTransform | None = None):
        """WeightedFusionRetriever over the memoised top-k views of the spec's parts."""
        from llama_index.core.llms import MockLLM
        from llama_index.core.retrievers.fusion_retriever import FUSION_MODES

        from ragsweep.retrievers.fusion import WeightedFusionRetriever

        num_queries = getattr(spec, "num_queries", 1)
        weights = getattr(spec, "weights", None)  # given (a tuned spec's are set before it is built)
        if num_queries > 1 and self.llm is None:
            raise ValueError("fusion with num_queries > 1 needs the spec's llm for query rewrites")
        return WeightedFusionRetriever(
            [MemoRetriever(shared, k) for _, shared in self._parts(spec, transform)],
            mode=FUSION_MODES(getattr(spec, "mode", "reciprocal_rerank")),
            similarity_top_k=k,
            num_queries=num_queries,
            use_async=False,
            retriever_weights=list(weights) if weights else None,
            rrf_weighted=weights is not None,
            # num_queries == 1: no query rewriting, so no LLM is ever called; MockLLM only
            # keeps LlamaIndex from resolving its default OpenAI LLM (which needs a key).
            llm=self.llm if num_queries > 1 else MockLLM(),
        )

    def _parts(self, spec: RetrieverSpec, transform: ActiveTransform | None = None) -> list[tuple[str, SharedResults]]:
        """The shared results a fusion combines, named as in the records' per-retriever ranks (none for a retriever
        that searches one part)."""
        if len(spec.searches) < 2:
            return []
        return [(name, self._shared(name, spec, transform)) for name in spec.searches]

    def source_ranks(
        self,
        spec: RetrieverSpec,
        k: int,
        query: str,
        reranker: ActiveReranker | None = None,
        transform: ActiveTransform | None = None,
    ) -> dict[str, dict[str, int]]:
        """Node id -> {retriever: 1-based rank}: for fusions, in each sub-retriever's top k (the top
        candidates with a reranker); with a reranker, ``base``: the rank before reordering."""
        out: dict[str, dict[str, int]] = {}
        depth = reranker.candidates if reranker is not None else k
        for name, shared in self._parts(spec, transform):
            for rank, nws in enumerate(shared.peek(query)[:depth], start=1):
                out.setdefault(nws.node.node_id, {})[name] = rank
        if reranker is not None:
            for node_id, rank in self._reranked_results(spec, reranker, transform)[1].base_ranks.get(query, {}).items():
                out.setdefault(node_id, {})["base"] = rank
        return out
