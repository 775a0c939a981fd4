"""Hybrid retrieval with LlamaIndex's QueryFusionRetriever, plus weights for reciprocal rank fusion.

LlamaIndex applies ``retriever_weights`` to relative-score and distance-based fusion only; its
reciprocal rank fusion ignores them. ``WeightedFusionRetriever`` adds the weighted form of RRF,
score(d) = sum_i w_i / (60 + rank_i(d)) (Cormack, Clarke & Buettcher 2009, "Reciprocal rank fusion
outperforms Condorcet and individual rank learning methods", SIGIR), and leaves the other modes as
they are.
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
        if not self._rrf_weighted:
            return super()._reciprocal_rerank_fusion(results)
        fused: dict[str, float] = {}
        by_hash: dict[str, NodeWithScore] = {}
        for (_, idx), nodes in results.items():
            weight = self._retriever_weights[idx]
            for rank, nws in enumerate(sorted(nodes, key=lambda x: x.score or 0.0, reverse=True)):
                h = nws.node.hash
                by_hash[h] = nws
                fused[h] = fused.get(h, 0.0) + weight / (rank + RRF_K)
        out = []
        for h, score in sorted(fused.items(), key=lambda x: x[1], reverse=True):
            out.append(NodeWithScore(node=by_hash[h].node, score=score))
        return out
