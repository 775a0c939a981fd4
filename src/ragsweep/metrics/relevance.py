"""Character-overlap relevance shared by every retrieval metric.

Chunkers disagree on chunk boundaries, so a retrieved chunk is judged by the
characters it shares with gold evidence, never by node id. A retrieved item is
``(doc_id, start, end)``, a half-open range of its source document; gold is a
sequence of :class:`~ragsweep.datasets.types.EvidenceSpan` (or equal triples).
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Protocol, Union, cast


class EvidenceLike(Protocol):
    """What the metrics read of ``datasets.types.EvidenceSpan`` (named, not imported: metrics import nothing of
    ragsweep, so config and datasets may import them). Read-only, as a frozen dataclass's fields are."""

    @property
    def doc_id(self) -> str: ...

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


Range = tuple[str, int, int]
Span = Union[EvidenceLike, Range]
Intervals = dict[str, list[tuple[int, int]]]


def check_k(k: int) -> int:
    """Return ``k`` as an int; a cut-off below 1 is a caller bug, so raise."""
    k = operator.index(k)
    if k < 1:
        raise ValueError(f"k must be a positive integer, got {k}")
    return k


def as_range(item: Span | Sequence) -> Range:
    """Normalise an EvidenceSpan or a ``(doc_id, start, end)`` triple."""
    if hasattr(item, "doc_id"):  # an EvidenceSpan (validated when made)
        span = cast(EvidenceLike, item)
        return (span.doc_id, span.start, span.end)
    doc_id, start, end = cast(Sequence, item)
    if end < start:
        raise ValueError(f"range [{start}, {end}) of {doc_id!r} ends before it starts")
    return (doc_id, start, end)


def top_k(retrieved: Iterable, k: int) -> list[Range]:
    """The first ``k`` retrieved items, normalised (rank 1 first)."""
    return [as_range(r) for r in islice(retrieved, check_k(k))]


def gold_ranges(gold: Iterable[Span]) -> list[Range]:
    """Gold spans normalised, exact duplicates dropped (order kept) so they cannot inflate IDCG."""
    return list(dict.fromkeys(as_range(g) for g in gold))


def gold_groups(gold: Sequence[Span]) -> list[tuple[int, Range]]:
    """``(group, range)`` per distinct gold range: a span is its own group (its position), and a copy of
    gold text found elsewhere (``EvidenceSpan.copy_of``) joins its original's group, so retrieving
    any place of a piece of evidence finds that piece once."""
    out: dict[Range, int] = {}
    for i, g in enumerate(gold):
        r = as_range(g)
        if r not in out:
            copy_of = getattr(g, "copy_of", None)
            out[r] = copy_of if copy_of is not None else i
    return [(group, r) for r, group in out.items()]


def overlap(a_start: int, a_end: int, b_start: int, b_end: int) -> int:
    """Characters shared by the half-open ranges ``[a_start, a_end)`` and ``[b_start, b_end)``."""
    return max(0, min(a_end, b_end) - max(a_start, b_start))


def _gold_by_doc(gold: Sequence[Range]) -> dict[str, list[tuple[int, int, int]]]:
    """Gold as ``doc_id -> [(index, start, end)]`` so a lookup only scans its own document."""
    by_doc: dict[str, list[tuple[int, int, int]]] = {}
    for i, (doc_id, start, end) in enumerate(gold):
        by_doc.setdefault(doc_id, []).append((i, start, end))
    return by_doc


def relevance(retrieved: Sequence[Range], gold: Sequence[Range]) -> list[bool]:
    """Per rank: does the item share at least one character with any gold span of its document?"""
    by_doc = _gold_by_doc(gold)
    return [
        any(overlap(start, end, g_start, g_end) > 0 for _, g_start, g_end in by_doc.get(doc_id, ()))
        for doc_id, start, end in retrieved
    ]


def first_new_gold(retrieved: Sequence[Span | Sequence], gold: Sequence[Span]) -> list[int]:
    """Per rank: how many pieces of gold evidence the item overlaps that no higher-ranked item overlapped.

    A positive count is a new-information gain of 1 for nDCG, so several chunks
    cut from one gold span earn it once, and so does a span found in one of its
    copies (``gold_groups``). The counts sum to at most the number of groups.
    """
    by_doc: dict[str, list[tuple[int, int, int]]] = {}
    for group, (doc_id, start, end) in gold_groups(gold):
        by_doc.setdefault(doc_id, []).append((group, start, end))
    found: set[int] = set()
    counts = []
    for doc_id, start, end in map(as_range, retrieved):
        new = {
            group
            for group, g_start, g_end in by_doc.get(doc_id, ())
            if group not in found and overlap(start, end, g_start, g_end) > 0
        }
        found |= new
        counts.append(len(new))
    return counts


def merge_intervals(ranges: Iterable[Range]) -> Intervals:
    """Union of ranges per document as sorted, disjoint ``(start, end)`` lists; O(n log n).

    Touching ranges are merged too; empty ranges are dropped.
    """
    per_doc: dict[str, list[tuple[int, int]]] = {}
    for doc_id, start, end in ranges:
        if end > start:
            per_doc.setdefault(doc_id, []).append((start, end))
    merged: Intervals = {}
    for doc_id, spans in per_doc.items():
        spans.sort()
        out = [spans[0]]
        for start, end in spans[1:]:
            last_start, last_end = out[-1]
            if start <= last_end:
                out[-1] = (last_start, max(last_end, end))
            else:
                out.append((start, end))
        merged[doc_id] = out
    return merged


def covered_length(intervals: Intervals) -> int:
    """Total characters in a merged interval set."""
    return sum(end - start for spans in intervals.values() for start, end in spans)


def intersection_length(a: Intervals, b: Intervals) -> int:
    """Characters in both merged interval sets (two-pointer sweep per shared document)."""
    total = 0
    for doc_id in a.keys() & b.keys():
        xs, ys = a[doc_id], b[doc_id]
        i = j = 0
        while i < len(xs) and j < len(ys):
            total += overlap(*xs[i], *ys[j])
            if xs[i][1] <= ys[j][1]:
                i += 1
            else:
                j += 1
    return total
