"""LlamaIndex's BM25Retriever whose results are the indexed nodes themselves.

Its own ``_retrieve`` decodes a new node from the stored metadata dict for every result: a JSON parse of
the chunk per hit, and a copy per (question, hit) kept by the retrieval memo (``memo.SharedResults``) for
every question of a splitter. The nodes it ranks are the ones it was given, so they are returned as they
are, shared by every result that names them; the ranking (bm25s) is LlamaIndex's, unchanged.
"""

from __future__ import annotations

from typing import Any, cast

from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.retrievers.bm25 import BM25Retriever


class SharedNodeBM25(BM25Retriever):
    """``BM25Retriever`` returning the nodes it indexed (``over``) rather than decoded copies."""

    _indexed: list[Any]

    @classmethod
    def over(cls, nodes: list, similarity_top_k: int) -> SharedNodeBM25:
        retriever = cast(SharedNodeBM25, cls.from_defaults(nodes=nodes, similarity_top_k=similarity_top_k))
        retriever._indexed = list(nodes)
        return retriever

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        import bm25s

        tokens = bm25s.tokenize(
            query_bundle.query_str,
            stemmer=self.stemmer if not self.skip_stemming else None,
            token_pattern=self.token_pattern,
            show_progress=False,
        )
        indexes, scores = self.bm25.retrieve(tokens, k=self.similarity_top_k, show_progress=False)
        return [NodeWithScore(node=self._indexed[int(i)], score=float(s)) for i, s in zip(indexes[0], scores[0])]
