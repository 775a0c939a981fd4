"""One retriever, several queries, one list: reciprocal rank fusion (Cormack, Clarke & Buettcher 2009,
SIGIR) of the results of each query a transform wrote, as RAG-Fusion does.

Each query goes through the whole retriever at the configuration's top_k (its memoised shared
results: a query two configurations share is searched once), as LlamaIndex's
``QueryFusionRetriever`` retrieves per query; score(d) = sum over queries of 1 / (60 + rank), rank
0-based, merged by node id; ties keep first-seen order (the question's results first), so the
fused list is a function of the queries and their results alone.
"""

from __future__ import annotations

from collections.abc import Callable

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from ragsweep.retrievers.fusion import RRF_K
from ragsweep.retrievers.transforms.base import AppliedTransform, TransformOutput, require_llm, transform_key


def reciprocal_rank_fusion(lists: list[list[NodeWithScore]], k: int) -> list[NodeWithScore]:
    """The top ``k`` of the lists fused by RRF (each list in its own order, best first)."""
    fused: dict[str, float] = {}
    by_id: dict[str, NodeWithScore] = {}
    for nodes in lists:
        for rank, nws in enumerate(nodes):
            node_id = nws.node.node_id
            by_id.setdefault(node_id, nws)
            fused[node_id] = fused.get(node_id, 0.0) + 1.0 / (rank + RRF_K)
    order = sorted(fused.items(), key=lambda kv: kv[1], reverse=True)  # stable: ties in first-seen order
    return [NodeWithScore(node=by_id[i].node, score=score) for i, score in order[:k]]


class FanOutRetriever(BaseRetriever):
    """``base`` run once per query of ``queries(question)``, the lists fused by RRF and cut to ``k``."""

    def __init__(self, base: BaseRetriever, queries: Callable[[str], TransformOutput], k: int) -> None:
        super().__init__()
        self._base = base
        self._queries = queries
        self._k = k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        out = self._queries(query_bundle.query_str)
        return reciprocal_rank_fusion([self._base.retrieve(QueryBundle(q)) for q in out.queries], self._k)


class FanOutTransform(AppliedTransform):
    """Shared by multi_query and decompose: the memoised queries of a question, the fan-out wrapper and
    the record; a subclass gives ``_write(question) -> (queries, note)``."""

    def __init__(self, spec, host) -> None:

        self.spec = spec
        self._key = transform_key(spec)
        self._memo = host.transform_memo
        self._llm = require_llm(host, spec.kind)

    def outputs(self, question: str) -> TransformOutput:
        return self._memo.get(self._key, question, self._write)

    def _write(self, question: str) -> tuple[list[str], str | None]:
        raise NotImplementedError

    def wrap(self, retriever: BaseRetriever, k: int) -> BaseRetriever:
        return FanOutRetriever(retriever, self.outputs, k)

    def record(self, question: str) -> dict:
        out = self._memo.peek(self._key, question)
        return out.record() if out is not None else {}
