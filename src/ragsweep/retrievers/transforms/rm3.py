"""RM3 (``retrievers.rm3``) as a registered transform: it replaces the BM25 part's results by the
expanded query's, read from the plain BM25 results every BM25 configuration shares."""

from __future__ import annotations

from ragsweep.retrievers.memo import SharedResults
from ragsweep.retrievers.rm3 import RM3Retriever
from ragsweep.retrievers.transforms.base import AppliedTransform


class RM3Transform(AppliedTransform):
    def __init__(self, spec, host) -> None:
        base = host.parts.get("bm25")
        assert base is not None, "RM3 expands the BM25 part's queries"
        self.retriever = RM3Retriever(base.base, base, base.k_max, spec)
        self.shared = SharedResults(self.retriever, base.k_max)

    def part(self, name: str, shared: SharedResults) -> SharedResults:
        return self.shared if name == "bm25" else shared

    def record(self, question: str) -> dict:
        """``expanded_query``: the weighted query BM25 searched with, heaviest first, in Lucene's boost syntax."""
        expansion = self.retriever.expansions.get(question)
        if not expansion:
            return {}
        return {
            "expanded_query": " ".join(
                f"{t}^{w:.4f}" for t, w in sorted(expansion.items(), key=lambda kv: (-kv[1], kv[0]))
            )
        }
