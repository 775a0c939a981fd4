"""Finding a piece of text inside a document when whitespace may differ.

Splitters and hand-written evidence both re-flow whitespace (strip, join with one space, drop
newlines), so an exact ``str.find`` misses. We match token sequences with any run of whitespace
between them, which is exact about every non-space character.
"""

from __future__ import annotations

import re


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
