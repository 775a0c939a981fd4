"""Contextual chunks, offline: the short prefix a chunk is embedded and BM25-indexed with.

Anthropic, "Introducing Contextual Retrieval" (2024): a chunk cut from a long document loses what it
is about ("the term is five years" -- of which agreement?); prepending a short context to each chunk
before embedding and BM25 indexing cut retrieval failures markedly. Their context is a sentence an
LLM writes per chunk; this module gives the offline form: the document's title and, optionally, the
path of headings above the chunk (``Title > 2 Obligations > 2.3 Term``). The prefix changes only what
is indexed: the chunk's text and offsets stay those of the raw document (``splitters.build.Chunk``).

Everything here is a pure function of the document and the chunk's start.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote

from ragsweep.datasets.types import Document

MAX_HEADING_CHARS = 80  # a longer line is body text, whatever it looks like
SEPARATOR = " > "

_LINE = re.compile(r"^[^\S\n]*(\S[^\n]*?)[^\S\n]*$", re.MULTILINE)  # a non-blank line, stripped (PDF spaces, \r)
_MARKDOWN = re.compile(r"^(#{1,6})\s+(.+?)(?:\s+#+)?$")
_SECTION = re.compile(r"^(?:section|article|§)\s*(\d{1,3}(?:\.\d{1,3})*)\b", re.IGNORECASE)
_NUMBERED = re.compile(r"^(\d{1,3}(?:\.\d{1,3})*)[.)]?\s+([\"'“‘(]?[A-Z].*)$")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")


@dataclass(frozen=True)
class Heading:
    """A heading line: where it starts in the document, its level (1 is the top) and its text."""

    start: int
    level: int
    text: str


def readable_name(doc_id: str) -> str:
    """A document id as a title: its file name without extension, %-escapes decoded, underscores as spaces."""
    name = PurePosixPath(doc_id.replace("\\", "/")).name or doc_id
    name = _EXTENSION.sub("", unquote(name)) or name
    return " ".join(name.replace("_", " ").split()) or doc_id


def document_title(doc: Document) -> str:
    """The loader's title (``metadata["title"]``: JSONL/demo/SQuAD), else the readable file name or id."""
    title = doc.metadata.get("title") if isinstance(doc.metadata, dict) else None
    if isinstance(title, str) and title.strip():
        return " ".join(title.split())
    return readable_name(doc.doc_id)


def heading_level(line: str) -> int | None:
    """The level of ``line`` (stripped, spaces collapsed) if it is a heading, else None.

    Markdown ``#`` lines (level = number of ``#``); ``Section 4``, ``Article 2.1``, ``§ 5`` and numbered
    headings ``1.``, ``2.3 Term`` (level = parts of the number; the title must start with a capital);
    ALL-CAPS lines (level 1). Lines over ``MAX_HEADING_CHARS`` or ending like a clause (``,`` ``;``) are not."""
    if len(line) > MAX_HEADING_CHARS or line.endswith((",", ";")):
        return None
    m = _MARKDOWN.match(line)
    if m:
        return len(m.group(1))
    m = _SECTION.match(line) or _NUMBERED.match(line)
    if m:
        return m.group(1).count(".") + 1
    cased = [c for c in line if c.lower() != c.upper()]
    if len(cased) >= 3 and all(c.isupper() for c in cased):
        return 1
    return None


def headings(text: str) -> list[Heading]:
    """Every heading line of ``text`` in document order."""
    out = []
    for m in _LINE.finditer(text):
        line = " ".join(m.group(1).split())
        level = heading_level(line)
        if level is not None:
            md = _MARKDOWN.match(line)
            out.append(Heading(m.start(1), level, md.group(2) if md else line))
    return out


def heading_paths(heads: list[Heading]) -> list[tuple[str, ...]]:
    """The heading path in force after each heading: the nearest heading of each level above it."""
    stack: list[Heading] = []
    paths = []
    for h in heads:
        stack = [s for s in stack if s.level < h.level] + [h]
        paths.append(tuple(s.text for s in stack))
    return paths


def heading_path(heads: list[Heading], offset: int, paths: list[tuple[str, ...]] | None = None) -> tuple[str, ...]:
    """The headings above ``offset`` (a heading starting exactly there included), top level first."""
    i = bisect.bisect_right([h.start for h in heads], offset)
    if i == 0:
        return ()
    return (paths if paths is not None else heading_paths(heads))[i - 1]


def context_prefix(
    doc: Document, start: int, mode: str, heads: list[Heading] | None = None, paths: list[tuple[str, ...]] | None = None
) -> str | None:
    """The prefix of the chunk of ``doc`` starting at ``start``: None for ``none``, the title for ``title``,
    ``Title > heading > subheading`` for ``title_headings`` (headings equal to the title left out)."""
    if mode == "none":
        return None
    title = document_title(doc)
    if mode == "title":
        return title
    if mode != "title_headings":
        raise ValueError(f"unknown chunk context {mode!r}")
    heads = headings(doc.text) if heads is None else heads
    path = [p for p in heading_path(heads, start, paths) if p.casefold() != title.casefold()]
    return SEPARATOR.join([title, *path])


def contextualise(chunks: list, documents: list[Document], mode: str) -> list:
    """``chunks`` (``splitters.build.Chunk``) with ``context`` set by ``mode``; unchanged for ``none``.
    Each document's headings are found once."""
    if mode == "none":
        return chunks
    by_id = {d.doc_id: d for d in documents}
    found: dict[str, tuple[list[Heading], list[tuple[str, ...]]]] = {}
    out = []
    for c in chunks:
        doc = by_id[c.doc_id]
        if mode == "title_headings" and c.doc_id not in found:
            doc_heads = headings(doc.text)
            found[c.doc_id] = (doc_heads, heading_paths(doc_heads))
        heads, paths = found.get(c.doc_id, (None, None))
        out.append(dataclasses.replace(c, context=context_prefix(doc, c.start, mode, heads, paths)))
    return out
