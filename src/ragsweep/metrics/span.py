"""Character-level recall and precision against gold evidence."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ragsweep.metrics.relevance import (
    Span,
    covered_length,
    gold_groups,
    gold_ranges,
    intersection_length,
    merge_intervals,
    top_k,
)


def span_recall_at_k(retrieved: Iterable[Sequence], gold: Sequence[Span], k: int) -> float:
    """Share of gold characters covered by the union of the first ``k`` retrieved ranges.

    Character-level recall of LegalBench-RAG (Pipitone & Houir Alami 2024,
    arXiv:2408.10343). Gold spans are unioned per document first, so
    overlapping evidence is not counted twice; of a span and its copies elsewhere
    (``EvidenceSpan.copy_of``) the best-covered one stands for it. NaN when
    ``gold`` is empty.
    """
    ranked = top_k(retrieved, k)
    if not gold_ranges(gold):
        return float("nan")
    ret_iv = merge_intervals(ranked)
    gold_iv = merge_intervals(_best_copies(gold, ret_iv))
    return intersection_length(ret_iv, gold_iv) / covered_length(gold_iv)


def _best_copies(gold: Sequence[Span], ret_iv) -> list:
    """One range per piece of evidence: the span itself, or whichever of its copies (``gold_groups``) the
    retrieved ranges cover most (ties: the first), so a copy retrieved counts as the evidence found."""
    best: dict[int, tuple[int, tuple]] = {}
    for group, r in gold_groups(gold):
        covered = intersection_length(ret_iv, merge_intervals([r]))
        if group not in best or covered > best[group][0]:
            best[group] = (covered, r)
    return [r for _, r in best.values()]


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
