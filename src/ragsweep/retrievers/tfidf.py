"""A TF-IDF sparse index over the chunks: the vector-space model (Salton, Wong & Yang 1975) with sublinear term
frequency and smoothed IDF (Salton & Buckley 1988), scikit-learn's ``TfidfVectorizer``, ranked by cosine.

A lexical baseline beside BM25 that needs no embedding model: it weighs a term by how rare it is across the
chunks, but, unlike BM25, neither saturates a repeated term's weight nor normalises for a chunk's length
beyond the cosine. Unigrams and bigrams, so a legal phrase ("notice period") scores as a phrase. The ranking
is deterministic: ties go to the earlier chunk, and a chunk that shares no term with the question is not
returned (it would be ranked by position alone).
"""

from __future__ import annotations

from typing import Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle


class TfidfRetriever(BaseRetriever):
    """The ``similarity_top_k`` chunks of ``nodes`` most similar to the query by TF-IDF cosine."""

    def __init__(self, nodes: list, similarity_top_k: int) -> None:
        import numpy as np
        from sklearn.feature_extraction.text import TfidfVectorizer

        super().__init__()
        self._nodes = list(nodes)
        self.similarity_top_k = similarity_top_k
        self._vectorizer = TfidfVectorizer(lowercase=True, ngram_range=(1, 2), sublinear_tf=True, dtype=np.float64)
        self._matrix: Any = self._vectorizer.fit_transform(
            [n.get_content(metadata_mode=MetadataMode.EMBED) for n in self._nodes]  # a chunk's context too, as BM25
        )  # rows L2-normalised: a dot product is the cosine

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        import numpy as np

        query = self._vectorizer.transform([query_bundle.query_str])
        scores = np.asarray((self._matrix @ query.T).todense()).ravel()
        order = np.argsort(-scores, kind="stable")[: self.similarity_top_k]
        return [NodeWithScore(node=self._nodes[int(i)], score=float(scores[i])) for i in order if scores[i] > 0]


def build_part(chunks, k_max: int) -> TfidfRetriever:
    """The part a ``tfidf`` retriever searches: built in memory from a splitter's chunks, once per process."""
    nodes = [c.to_node() for c in chunks]
    return TfidfRetriever(nodes, similarity_top_k=max(1, min(k_max, len(nodes))))
