"""Finding a piece of text inside a document when whitespace (or more) may differ.

Splitters re-flow whitespace (strip, join with one space, drop newlines), so an exact
``str.find`` misses: ``find_span`` matches token sequences with any run of whitespace between
them, exact about every non-space character. Evidence quoted by users differs more (another PDF
extractor: spaces, hyphenation, quotes, ligatures), so ``CorpusIndex`` locates it in tiers:
exact, then normalised (``normalise.py``), then, when asked, fuzzy above a stated similarity.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragsweep.datasets.anchor_index import AnchorIndex


def _pattern(needle: str) -> re.Pattern[str] | None:
    tokens = needle.split()
    if not tokens:
        return None
    return re.compile(r"\s+".join(re.escape(t) for t in tokens))


def find_span(haystack: str, needle: str, start: int = 0) -> tuple[int, int] | None:
    """Return ``(start, end)`` of ``needle`` in ``haystack`` at or after ``start``.

    Tries an exact match first, then a whitespace-normalised one. The returned span covers the
    text as it stands in ``haystack`` (its own whitespace), without leading/trailing whitespace.
    """
    stripped = needle.strip()
    if not stripped:
        return None
    i = haystack.find(stripped, start)
    if i >= 0:
        return i, i + len(stripped)
    pat = _pattern(stripped)
    if pat is None:
        return None
    m = pat.search(haystack, start)
    return (m.start(), m.end()) if m else None


def locate_in_corpus(documents: dict[str, str], needle: str, doc_id: str | None = None) -> tuple[str, int, int] | None:
    """Locate ``needle`` in one named document, or in any document when ``doc_id`` is None."""
    candidates = [doc_id] if doc_id is not None else list(documents)
    for did in candidates:
        text = documents.get(did)
        if text is None:
            continue
        span = find_span(text, needle)
        if span is not None:
            return did, span[0], span[1]
    return None


# --------------------------------------------------------------------------- tiers over a corpus
TIERS = ("exact", "normalised", "fuzzy")
# A copy of evidence elsewhere in the corpus counts only when its normalised text is at least this
# long: a short gold answer ("Yes", "30 days") recurs by chance, a sentence does not.
MIN_COPY_CHARS = 25
# long needles found by scanning before the anchor index is built: building it costs about as much as this many
# scans (a small dataset never builds it; one of thousands of questions stops scanning after these)
SCANS_BEFORE_INDEX = 32
_ANCHOR = 12  # length of the needle pieces that propose candidate places for a fuzzy match
_MAX_ANCHOR_HITS = 50


def at_word_boundaries(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` neither starts nor ends inside a word (letters or digits on both sides)."""
    cut_start = start > 0 and text[start - 1].isalnum() and text[start].isalnum()
    cut_end = end < len(text) and text[end - 1].isalnum() and text[end].isalnum()
    return not (cut_start or cut_end)


@dataclass(frozen=True)
class Match:
    """Where a text was found: ``[start, end)`` of ``doc_id``, by which tier, and how similar (0-1)."""

    doc_id: str
    start: int
    end: int
    tier: str
    similarity: float = 1.0


class CorpusIndex:
    """The documents, and (built on first need) their normalised forms joined into one string.

    One ``str.find`` over the joined text searches every document at C speed; NUL separators
    keep a match from spanning two documents. Once ``SCANS_BEFORE_INDEX`` were scanned for, a needle
    of 25 characters or more is looked up in an index of the joined text's windows instead
    (``anchor_index.py``), so locating every question's evidence costs what the questions and the
    corpus cost, not their product.
    """

    def __init__(self, documents: dict[str, str]) -> None:
        self.documents = documents
        self._joined: str | None = None
        self._anchors: AnchorIndex | None = None
        self._scans = 0  # long needles found by a scan of the joined text, before the index pays for itself

    def _build(self) -> None:
        from ragsweep.datasets.normalise import normalise

        self._ids = list(self.documents)
        self._index_of = {d: i for i, d in enumerate(self._ids)}
        self._norm = [normalise(self.documents[d]) for d in self._ids]
        starts, pos = [], 0
        for n in self._norm:
            starts.append(pos)
            pos += len(n.text) + 1
        self._starts = starts
        self._joined = "\0".join(n.text for n in self._norm)

    def _joined_text(self) -> str:
        """The joined normalised text, built on first need."""
        if self._joined is None:
            self._build()
        assert self._joined is not None  # _build sets it
        return self._joined

    def _place(self, pos: int, length: int) -> tuple[int, int, int]:
        """(document index, original start, original end) of a match in the joined text."""
        i = bisect.bisect_right(self._starts, pos) - 1
        local = pos - self._starts[i]
        start, end = self._norm[i].span(local, local + length)
        return i, start, end

    def exact(self, needle: str, doc_id: str | None = None) -> Match | None:
        """The first verbatim occurrence (stripped) at word boundaries, in ``doc_id`` or in document
        order; for a needle of ``MIN_COPY_CHARS`` or more, else the first occurrence inside words."""
        stripped = needle.strip()
        if not stripped:
            return None
        inside: Match | None = None
        for did in [doc_id] if doc_id is not None else self.documents:
            text = self.documents.get(did)
            if text is None:
                continue
            i = text.find(stripped)
            while i >= 0:
                if at_word_boundaries(text, i, i + len(stripped)):
                    return Match(did, i, i + len(stripped), "exact")
                inside = inside or Match(did, i, i + len(stripped), "exact")
                i = text.find(stripped, i + 1)
        return inside if inside is not None and len(stripped) >= MIN_COPY_CHARS else None

    def at_boundaries(self, m: Match) -> bool:
        """Whether a match neither starts nor ends inside a word of its document."""
        return at_word_boundaries(self.documents[m.doc_id], m.start, m.end)

    def _positions(self, needle_norm: str) -> list[int]:
        """Every non-overlapping occurrence of ``needle_norm`` in the joined text, first to last (as repeated
        ``str.find`` from the end of the previous one gives them): after ``SCANS_BEFORE_INDEX`` long needles, a
        long needle is looked up in the anchor index (one scan of the corpus per needle made loading quadratic)."""
        from ragsweep.datasets.anchor_index import AnchorIndex

        joined = self._joined_text()
        scan = self._anchors is None and self._scans < SCANS_BEFORE_INDEX
        if not AnchorIndex.covers(needle_norm) or scan:
            self._scans += AnchorIndex.covers(needle_norm)
            out, pos = [], joined.find(needle_norm)
            while pos >= 0:
                out.append(pos)
                pos = joined.find(needle_norm, pos + len(needle_norm))
            return out
        if self._anchors is None:
            self._anchors = AnchorIndex(joined)
        kept: list[int] = []
        for pos in self._anchors.occurrences(needle_norm):
            if not kept or pos >= kept[-1] + len(needle_norm):
                kept.append(pos)
        return kept

    def normalised_all(self, needle_norm: str, doc_id: str | None = None) -> list[Match]:
        """Every non-overlapping occurrence of an already normalised needle, as original offsets."""
        if not needle_norm:
            return []
        out: list[Match] = []
        for pos in self._positions(needle_norm):
            i, start, end = self._place(pos, len(needle_norm))
            if doc_id is None or self._ids[i] == doc_id:
                out.append(Match(self._ids[i], start, end, "normalised"))
        return out

    def closest(self, needle_norm: str, doc_id: str | None = None) -> Match | None:
        """The most similar place to the needle (``similarity`` in 0-1), or None if nothing is near.

        Pieces of the needle found verbatim propose aligned windows (voted per document and
        position, so a window never straddles two documents); rapidfuzz's
        ``partial_ratio_alignment`` finds the best-aligned substring of each, and the similarity is
        the normalised Indel similarity (``fuzz.ratio``; Levenshtein 1966) of the whole needle to
        that substring, so a long quote never scores high against a short piece of it. With
        ``doc_id`` only that document is searched. Anchoring keeps this fast on megabytes of text;
        a needle none of whose 12-character pieces occurs anywhere has no close match worth naming.
        """
        from rapidfuzz import fuzz

        if len(needle_norm) < _ANCHOR:
            return None
        joined = self._joined_text()
        lo_all, hi_all = 0, len(joined)
        if doc_id is not None:
            if doc_id not in self._index_of:
                return None
            d = self._index_of[doc_id]
            lo_all, hi_all = self._starts[d], self._starts[d] + len(self._norm[d].text)
        votes: dict[tuple[int, int], int] = {}
        for off in range(0, len(needle_norm) - _ANCHOR + 1, _ANCHOR):
            piece = needle_norm[off : off + _ANCHOR]
            pos, hits = joined.find(piece, lo_all, hi_all), 0
            while pos >= 0 and hits < _MAX_ANCHOR_HITS:
                d = bisect.bisect_right(self._starts, pos) - 1
                local = max(0, pos - self._starts[d] - off)  # where the needle would start in document d
                votes[(d, local // _ANCHOR)] = votes.get((d, local // _ANCHOR), 0) + 1
                pos, hits = joined.find(piece, pos + 1, hi_all), hits + 1
        best: Match | None = None
        margin = len(needle_norm) // 4 + _ANCHOR
        for (d, bucket), _ in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[:8]:
            doc_lo = self._starts[d]
            doc_hi = doc_lo + len(self._norm[d].text)
            at = doc_lo + bucket * _ANCHOR
            lo, hi = max(doc_lo, at - margin), min(doc_hi, at + len(needle_norm) + margin)
            window = joined[lo:hi]
            if len(window) <= len(needle_norm):  # a short document: all of it is the candidate
                a_start, a_end = 0, len(window)
            else:
                a = fuzz.partial_ratio_alignment(needle_norm, window)
                a_start, a_end = (a.dest_start, a.dest_end) if a is not None else (0, 0)
            if a_end <= a_start:
                continue
            similarity = round(fuzz.ratio(needle_norm, window[a_start:a_end]) / 100.0, 4)
            i, start, end = self._place(lo + a_start, a_end - a_start)
            cand = Match(self._ids[i], start, end, "fuzzy", similarity)
            if best is None or cand.similarity > best.similarity:
                best = cand
        return best
