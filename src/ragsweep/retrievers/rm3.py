"""RM3 pseudo-relevance feedback for BM25 (Lavrenko & Croft 2001, "Relevance-Based Language Models",
SIGIR; Abdul-Jaleel et al. 2004, "UMass at TREC 2004: Novelty and HARD"), as Anserini's
``Rm3Reranker`` runs it.

The question's BM25 results (the memoised ones every BM25 configuration shares) are the feedback:
- each of the top ``fb_docs`` documents becomes a term-frequency vector of its feedback terms
  (2-20 characters of [a-z0-9], in at most ``max_df`` of the corpus's chunks: Anserini's df
  threshold, which stands in for a collection stopword list), pruned to its ``fb_terms`` most
  frequent terms;
- RM1: weight(w) = sum over those documents of tf(w, d) / |d| * score(d);
- the ``fb_terms`` heaviest terms are kept and scaled to sum 1;
- RM3: P'(w|q) = original_weight * P(w|q) + (1 - original_weight) * P(w|R);
- each chunk is scored by sum_w P'(w|q) * BM25(w, chunk) (Anserini's weighted BooleanQuery).

Terms are analysed exactly as the BM25 index analysed the corpus (bm25s tokeniser, English
stopwords, the retriever's stemmer), so expansion terms are index terms. Offline, no model, a few
milliseconds per question. Ties are broken by term and by chunk order, never by hash order.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from ragsweep.config import RM3Spec

_FEEDBACK_TERM = re.compile(r"[a-z0-9]{2,20}")


def relevance_model(
    query_terms: list[str],
    feedback: list[list[str]],
    scores: list[float],
    fb_terms: int,
    original_weight: float,
    allowed: Callable[[str], bool] | None = None,
) -> dict[str, float]:
    """RM3 term weights (summing to 1) from the query's analysed terms and the feedback documents'
    analysed terms with their retrieval scores; ``allowed`` says which terms may be feedback terms.
    Pure; the caller supplies the analysis."""
    rm1: defaultdict[str, float] = defaultdict(float)
    for terms, score in zip(feedback, scores):
        tf = Counter(t for t in terms if allowed is None or allowed(t))
        kept = sorted(tf.items(), key=lambda kv: (-kv[1], kv[0]))[:fb_terms]
        norm = sum(n for _, n in kept)
        if norm <= 0 or score <= 0:
            continue
        for term, n in kept:
            rm1[term] += n / norm * score
    top = sorted(rm1.items(), key=lambda kv: (-kv[1], kv[0]))[:fb_terms]
    mass = sum(w for _, w in top)
    out: dict[str, float] = {}
    if query_terms and original_weight > 0:
        for term, n in Counter(query_terms).items():
            out[term] = original_weight * n / len(query_terms)
    lam = original_weight if query_terms else 0.0
    for term, w in top:
        out[term] = out.get(term, 0.0) + (1 - lam) * w / mass
    return out


class RM3Retriever(BaseRetriever):
    """BM25 with RM3 expansion over a LlamaIndex ``BM25Retriever``'s bm25s index; ``feedback`` gives the
    plain BM25 results of a question (``memo.SharedResults``); ``params``: the transform's settings
    (``fb_docs``, ``fb_terms``, ``original_weight``, ``max_df``)."""

    def __init__(self, bm25_retriever, feedback, k: int, params: RM3Spec) -> None:
        super().__init__()
        self._bm25 = bm25_retriever
        self._feedback = feedback
        self._k, self._fb_docs, self._fb_terms = k, params.fb_docs, params.fb_terms
        self._original_weight, self._max_df = params.original_weight, params.max_df
        self.expansions: dict[str, dict[str, float]] = {}  # question -> the weighted query it ran

    def _feedback_term(self, term: str) -> bool:
        """Anserini's feedback terms: 2-20 characters of [a-z0-9], in at most ``max_df`` of the chunks."""
        if not _FEEDBACK_TERM.fullmatch(term):
            return False
        bm25 = self._bm25.bm25
        ids = bm25.get_tokens_ids([term])
        if not ids:
            return False
        indptr = bm25.scores["indptr"]  # postings per token: its document frequency
        return int(indptr[ids[0] + 1] - indptr[ids[0]]) <= self._max_df * int(bm25.scores["num_docs"])

    def _analyse(self, texts: list[str], stopwords) -> list[list[str]]:
        import bm25s

        r = self._bm25
        return bm25s.tokenize(
            texts,
            stopwords=stopwords,
            stemmer=None if r.skip_stemming else r.stemmer,
            token_pattern=r.token_pattern,
            return_ids=False,
            show_progress=False,
        )

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        import numpy as np
        from llama_index.core.schema import MetadataMode
        from llama_index.core.vector_stores.utils import metadata_dict_to_node

        query = query_bundle.query_str
        feedback = self._feedback.get(query_bundle)[: self._fb_docs]
        # the query as LlamaIndex's BM25Retriever analyses it; documents as the index analysed them
        query_terms = self._analyse([query], "english")[0]
        docs = self._analyse([n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in feedback], "en")
        weights = relevance_model(
            query_terms,
            docs,
            [float(n.score or 0.0) for n in feedback],
            self._fb_terms,
            self._original_weight,
            self._feedback_term,
        )
        self.expansions[query] = weights
        bm25 = self._bm25.bm25
        n_docs = int(bm25.scores["num_docs"])
        scores = np.zeros(n_docs, dtype=np.float64)
        for term in sorted(weights):
            ids = bm25.get_tokens_ids([term])
            if ids:
                scores += weights[term] * bm25.get_scores_from_ids(ids).astype(np.float64)
        order = np.lexsort((np.arange(n_docs), -scores))  # best first; equal scores in corpus order
        out = []
        # like the plain BM25 retriever, k results even when the last score nothing (corpus order)
        for i in order[: self._k]:
            node = metadata_dict_to_node(self._bm25.corpus[int(i)])
            out.append(NodeWithScore(node=node, score=float(scores[i])))
        return out
