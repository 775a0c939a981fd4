"""A base retriever's top ``candidates`` reordered by a reranker, shared by every top_k.

The base results come from the memoised indexes (``memo.SharedResults``), so adding a reranker
queries no index again; the reordering itself is memoised per question in a ``SharedResults`` of
its own, so top_k 3, 5 and 10 of one (retriever, reranker) pair rerank once. What the reordering
cost (its milliseconds, its LLM calls) is kept per question and reported for every configuration
that uses it, as the memo replays retrieval time: each configuration reports what it would cost
alone.
"""

from __future__ import annotations

import time

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle


class RerankingRetriever(BaseRetriever):
    def __init__(self, base: BaseRetriever, reranker, stage_label: str) -> None:
        super().__init__()
        self._base = base
        self._reranker = reranker
        self._label = stage_label
        self.costs: dict[str, dict] = {}  # question -> {"rerank_ms", "rerank_llm", "rewrite_llm"}
        self.base_ranks: dict[str, dict[str, int]] = {}  # question -> node id -> 1-based base rank

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        from ragsweep.llm.usage import Trace, llm_scope
        from ragsweep.retrievers.memo import REPLAY

        rewrites = Trace()  # a fusion's LLM rewrites: kept here, so every top_k reports them
        with llm_scope(rewrites, stage="query_rewrite", config_id=None):
            candidates = self._base.retrieve(query_bundle)
        REPLAY.ms += rewrites.cached_ms  # cached calls count at their original time, as in ``answer``
        self.base_ranks[query_bundle.query_str] = {n.node.node_id: i for i, n in enumerate(candidates, start=1)}
        trace = Trace()
        t0 = time.perf_counter()
        with llm_scope(trace, stage="rerank", config_id=None):
            nodes = self._reranker.rerank(query_bundle, candidates) if candidates else []
        # LLM calls served from the cache, and scores the reranker kept from another base retriever's
        # candidates, count at their original time (fresh ones are in the wall time)
        replayed = trace.cached_ms + (getattr(self._reranker, "replayed_ms", 0.0) if candidates else 0.0)
        REPLAY.ms += replayed
        self.costs[query_bundle.query_str] = {
            "rerank_ms": (time.perf_counter() - t0) * 1000 + replayed,
            "rerank_llm": trace.as_dict() if trace.calls else None,
            "rewrite_llm": rewrites.as_dict() if rewrites.calls else None,
        }
        return nodes
