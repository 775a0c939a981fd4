"""Document-level reciprocal rank: right document, whatever the chunk."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ragsweep.metrics.relevance import Span, gold_ranges, top_k


def document_reciprocal_rank(retrieved: Iterable[Sequence], gold: Sequence[Span], k: int) -> float:
    """1/rank of the first of the top ``k`` items from a gold document; 0.0 if none.

    MRR (Voorhees 1999, "The TREC-8 Question Answering Track Report") at
    document granularity: it separates "found the right document" from "found
    the right passage", which span metrics conflate. NaN when ``gold`` is empty.
    """
    ranked = top_k(retrieved, k)
    gold_docs = {doc_id for doc_id, _, _ in gold_ranges(gold)}
    if not gold_docs:
        return float("nan")
    for rank, (doc_id, _, _) in enumerate(ranked, start=1):
        if doc_id in gold_docs:
            return 1.0 / rank
    return 0.0
