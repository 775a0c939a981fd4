"""Hybrid retrieval with LlamaIndex's QueryFusionRetriever, plus weights for reciprocal rank fusion.

LlamaIndex applies ``retriever_weights`` to relative-score and distance-based fusion only; its
reciprocal rank fusion ignores them, and it merges results by content hash, so two chunks with the
same text (a repeated paragraph) collapse into one. ``WeightedFusionRetriever`` computes reciprocal
rank fusion (Cormack, Clarke & Buettcher 2009, "Reciprocal rank fusion outperforms Condorcet and
individual rank learning methods", SIGIR) as score(d) = sum_i w_i / (60 + r_i(d)) with r_i the
0-based rank, as LlamaIndex does (w_i = 1 unless weights are given), merging by node id. The other
modes are LlamaIndex's own.
"""

from __future__ import annotations

from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.schema import NodeWithScore

RRF_K = 60.0


class WeightedFusionRetriever(QueryFusionRetriever):
    """QueryFusionRetriever whose reciprocal-rank mode honours ``retriever_weights`` when given."""

    def __init__(self, *args, rrf_weighted: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._rrf_weighted = rrf_weighted

    def _reciprocal_rerank_fusion(self, results: dict[tuple[str, int], list[NodeWithScore]]) -> list[NodeWithScore]:
        fused: dict[str, float] = {}
        by_id: dict[str, NodeWithScore] = {}
        for (_, idx), nodes in results.items():
            weight = self._retriever_weights[idx] if self._rrf_weighted else 1.0
            for rank, nws in enumerate(sorted(nodes, key=lambda x: x.score or 0.0, reverse=True)):
                node_id = nws.node.node_id
                by_id[node_id] = nws
                fused[node_id] = fused.get(node_id, 0.0) + weight / (rank + RRF_K)
        # sorted() is stable: ties keep first-seen order, as in LlamaIndex
        return [
            NodeWithScore(node=by_id[i].node, score=score)
            for i, score in sorted(fused.items(), key=lambda x: x[1], reverse=True)
        ]
