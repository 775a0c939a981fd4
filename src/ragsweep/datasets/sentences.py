"""Sentences of a document as character spans, for questions whose evidence is one sentence (pure).

Real documents wrap lines inside sentences (PDF and e-mail text), while legal drafting puts a clause or a
heading on a line of its own. A line break therefore ends a sentence only after end punctuation
(``.;:!?``), before a blank line, or after a short line without a verb-like ending (a heading); inside a
line, sentences end at ``.!?`` followed by a capital, digit, quote or bracket.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_INLINE_END = re.compile(r"[.!?][\"'”’)\]]*\s+(?=[A-Z0-9\"'“‘(\[§])")
_ABBREVIATIONS = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|cf|no|nos|art|sec|para|ss|mr|mrs|ms|dr|inc|ltd|co|corp|vs|"
    r"u\.s|st|jr|sr|p|pp|fig)\.|\b[A-Z]\.)$",
    re.IGNORECASE,
)
_ENUMERATOR = re.compile(r"\(?(?:[0-9]{1,3}(?:\.[0-9]{1,3})*|[IVXLCivxlc]{1,6}|[A-Za-z])[.)]")
HEADING_WORDS = 12  # a line this short with no end punctuation is a heading or a label


@dataclass(frozen=True)
class Sentence:
    doc_id: str
    start: int
    end: int
    text: str

    @property
    def words(self) -> int:
        return len(self.text.split())


def _lines(text: str) -> list[tuple[int, int]]:
    out, at = [], 0
    for line in text.split("\n"):
        out.append((at, at + len(line)))
        at += len(line) + 1
    return out


def _blocks(text: str) -> list[tuple[int, int]]:
    """Runs of lines that belong to one paragraph or clause (line breaks that do not end a sentence joined)."""
    blocks: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for s, e in _lines(text):
        line = text[s:e].strip()
        if not line:
            if cur:
                blocks.append(cur)
            cur = None
            continue
        cur = (cur[0], e) if cur else (s, e)
        if line.endswith((".", ";", ":", "!", "?", '."', ".”")) or len(line.split()) < HEADING_WORDS:
            blocks.append(cur)
            cur = None
    if cur:
        blocks.append(cur)
    return blocks


def _trim(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


def sentences(doc_id: str, text: str) -> list[Sentence]:
    """Every sentence of ``text`` in order, with its span; ``text[start:end] == sentence.text``."""
    out: list[Sentence] = []
    for bs, be in _blocks(text):
        at = bs
        for m in _INLINE_END.finditer(text, bs, be):
            if _ABBREVIATIONS.search(text[max(bs, m.start() - 6) : m.start() + 1]) or _ENUMERATOR.fullmatch(
                text[at : m.start() + 1].strip()
            ):  # "II. The parties ..."
                continue
            s, e = _trim(text, at, m.start() + 1)
            if e > s:
                out.append(Sentence(doc_id, s, e, text[s:e]))
            at = m.end()
        s, e = _trim(text, at, be)
        if e > s:
            out.append(Sentence(doc_id, s, e, text[s:e]))
    return out
