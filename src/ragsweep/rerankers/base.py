"""What every reranker offers, and the pointwise kind's shared part: a score per (question, text),
memoised, so a chunk that several base retrievers return for one question is scored once (each of them
reports the time it took: ``replayed_ms``)."""

from __future__ import annotations

import time
from typing import Protocol

from llama_index.core.schema import NodeWithScore, QueryBundle


class Reranker(Protocol):
    def rerank(self, query: QueryBundle, nodes: list[NodeWithScore]) -> list[NodeWithScore]:
        """All of ``nodes`` (or fewer, if the method drops some), best first, with the reranker's scores."""
        ...


def node_text(nws: NodeWithScore) -> str:
    """What a reranker reads of a chunk: its text as embedded (metadata excluded from embedding left out)."""
    from llama_index.core.schema import MetadataMode

    return nws.node.get_content(metadata_mode=MetadataMode.EMBED)


def order_by_score(nodes: list[NodeWithScore], scores: list[float]) -> list[NodeWithScore]:
    """Fresh copies of ``nodes`` with ``scores``, best first; equal scores keep the base order."""
    order = sorted(range(len(nodes)), key=lambda i: (-scores[i], i))
    return [NodeWithScore(node=nodes[i].node, score=float(scores[i])) for i in order]


class PointwiseReranker:
    """A reranker whose score of a text depends on the question and that text alone: subclasses give
    ``_score_texts``; scores are kept per (question, text) for the life of the process."""

    def __init__(self) -> None:
        self._scores: dict[tuple[str, str], tuple[float, float]] = {}  # (question, text) -> (score, ms)
        self.replayed_ms = 0.0  # what the memoised scores the last ``rerank`` reused took to compute

    def _score_texts(self, query: str, texts: list[str]) -> list[float]:
        raise NotImplementedError

    def forget(self) -> None:
        """Drop the memoised scores (the model stays loaded)."""
        self._scores.clear()

    def rerank(self, query: QueryBundle, nodes: list[NodeWithScore]) -> list[NodeWithScore]:
        q = query.query_str
        texts = [node_text(n) for n in nodes]
        todo = sorted({t for t in texts if (q, t) not in self._scores})
        if todo:
            t0 = time.perf_counter()
            scores = self._score_texts(q, todo)
            ms = (time.perf_counter() - t0) * 1000 / len(todo)  # each text's share of the call
            for t, s in zip(todo, scores):
                self._scores[(q, t)] = (float(s), ms)
        # a text another base retriever already had scored costs its original share, so every
        # (retriever, reranker) pair reports what it would cost alone (as ``memo.SharedResults`` replays)
        fresh = set(todo)
        self.replayed_ms = sum(self._scores[(q, t)][1] for t in set(texts) - fresh)
        return order_by_score(nodes, [self._scores[(q, t)][0] for t in texts])
