"""Character-level recall and precision against gold evidence."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ragsweep.evaluation.metrics.relevance import (
    Span,
    covered_length,
    gold_ranges,
    intersection_length,
    merge_intervals,
    top_k,
)


def span_recall_at_k(retrieved: Iterable[Sequence], gold: Sequence[Span], k: int) -> float:
    """Share of gold characters covered by the union of the first ``k`` retrieved ranges.

    Character-level recall of LegalBench-RAG (Pipitone & Houir Alami 2024,
    arXiv:2408.10343). Gold spans are unioned per document first, so
    overlapping evidence is not counted twice. NaN when ``gold`` is empty.
    """
    ranked = top_k(retrieved, k)
    gold = gold_ranges(gold)
    if not gold:
        return float("nan")
    gold_iv = merge_intervals(gold)
    return intersection_length(merge_intervals(ranked), gold_iv) / covered_length(gold_iv)


def span_precision_at_k(retrieved: Iterable[Sequence], gold: Sequence[Span], k: int) -> float:
    """Share of retrieved characters (union of the first ``k`` ranges) that are gold.

    Character-level precision of LegalBench-RAG (Pipitone & Houir Alami 2024,
    arXiv:2408.10343). Overlapping chunks are unioned so repeated text counts
    once, as the reader sees it once in the context. NaN when ``gold`` is
    empty; 0.0 when nothing (or only empty ranges) was retrieved.
    """
    ranked = top_k(retrieved, k)
    gold = gold_ranges(gold)
    if not gold:
        return float("nan")
    ret_iv = merge_intervals(ranked)
    total = covered_length(ret_iv)
    if total == 0:
        return 0.0
    return intersection_length(ret_iv, merge_intervals(gold)) / total
