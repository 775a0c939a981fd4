"""Text normalisation for locating evidence, with a map back to the original characters.

Questions often quote their documents through another text extractor than the corpus's (PDF to
text by two tools): the same words with other whitespace (``4/3/2022Page`` and ``4/3/2022 Page``,
line breaks inside sentences), words hyphenated across line breaks, curly or straight quotes,
en/em dashes, ligatures (``ﬁ``) or full-width forms. ``normalise`` removes those differences and
keeps, for every normalised character, the index of the original character it came from, so a
match found in the normalised text is mapped back to exact character offsets of the original.

Per character: Unicode NFKD compatibility decomposition (ligatures, full-width and compatibility
forms) with combining marks dropped (accents fold, so precomposed and decomposed accents agree);
every whitespace, zero-width and hyphen/dash character is dropped (so ``regu-\\nlation`` =
``regulation`` and ``4/3/2022Page`` = ``4/3/2022 Page``); single and double quotation marks of any
style become ``'`` and ``"``. Case is kept. Dropping hyphens and spaces can only join tokens, never
change a letter or digit, so a normalised match of a quotation tens of characters long is the same
text; a short one could match across a word boundary, so ``text_evidence`` prefers matches that
start and end at word boundaries.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from dataclasses import dataclass

_DASHES = "-\u00ad\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
_SINGLE = "\u2018\u2019\u201a\u201b\u2032\u2035\u0060\u00b4\u02bc"
_DOUBLE = "\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb"


def _simple(c: str) -> str:
    """One character after NFKC: dropped (space, dash), a plain quote, or itself."""
    if c.isspace() or c in _DASHES or c in _ZERO_WIDTH:
        return ""
    if c in _SINGLE:
        return "'"
    if c in _DOUBLE:
        return '"'
    return c


@functools.lru_cache(maxsize=65536)
def normalise_char(c: str) -> str:
    """What one original character becomes (possibly several characters, possibly none): its NFKD
    decomposition without combining marks, so a precomposed ``é`` and ``e`` + U+0301 (common in PDF
    and macOS text) both become ``e``, and ``ﬁ`` becomes ``fi``."""
    return "".join(_simple(x) for x in unicodedata.normalize("NFKD", c) if not unicodedata.combining(x))


@dataclass(frozen=True)
class Normalised:
    """``text`` normalised, and where its characters came from.

    Most characters map to themselves, so the offset map is stored as the changed ("special")
    characters only: the ``j``-th became ``widths[j]`` characters at normalised position
    ``norm_at[j]`` from original position ``orig_at[j]``; between them positions advance together.
    """

    text: str
    norm_at: list[int]
    orig_at: list[int]
    widths: list[int]

    def original(self, i: int) -> int:
        """The index in the original text of normalised character ``i``."""
        j = bisect.bisect_right(self.norm_at, i) - 1
        if j < 0:
            return i
        inside = i - self.norm_at[j]
        if inside < self.widths[j]:  # one of the characters a special character became (e.g. a ligature)
            return self.orig_at[j]
        return self.orig_at[j] + 1 + (inside - self.widths[j])

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original ``[start, end)`` covering normalised ``[start, end)`` (``end > start``)."""
        return self.original(start), self.original(end - 1) + 1


def _table(text: str) -> dict[int, str]:
    """``str.translate`` table for the distinct characters of ``text`` that do not map to themselves."""
    table: dict[int, str] = {}
    for c in set(text):
        out = normalise_char(c)
        if out != c:
            table[ord(c)] = out
    return table


def normalise(text: str) -> Normalised:
    """Normalise ``text`` (module docstring) and keep the offset map.

    Runs mostly at C speed: the distinct characters are looked at once each, the text goes through
    ``str.translate``, and only the changed characters (found by one regular expression) are
    walked in Python to record the map.
    """
    table = _table(text)
    norm = text.translate(table)
    norm_at: list[int] = []
    orig_at: list[int] = []
    widths: list[int] = []
    if table:
        shift = 0  # normalised position - original position, so far
        pattern = re.compile("[" + "".join(re.escape(chr(cp)) for cp in sorted(table)) + "]")
        for m in pattern.finditer(text):
            p = m.start()
            width = len(table[ord(text[p])])
            norm_at.append(p + shift)
            orig_at.append(p)
            widths.append(width)
            shift += width - 1
    return Normalised(norm, norm_at, orig_at, widths)


def normalise_needle(text: str) -> str:
    """The normalised form of a quotation (no offset map needed)."""
    return text.translate(_table(text))
