"""A splitter that starts a chunk at every match of a delimiter regex (e.g. ``\\n(?=§)``).

LlamaIndex has no regex section splitter; legal texts are organised by sections, so chunking at
section boundaries is a configuration worth comparing. Over-long sections are split again with
LlamaIndex's SentenceSplitter so no chunk exceeds ``max_chunk_chars`` by much.
"""

from __future__ import annotations

import re

from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.node_parser.interface import TextSplitter
from pydantic import Field, PrivateAttr

_CHARS_PER_TOKEN = 4  # rough English ratio; used only to size the fallback sentence splitter


class PatternSplitter(TextSplitter):
    """Split at each match of ``pattern``; pieces longer than ``max_chunk_chars`` are re-split by sentences."""

    pattern: str = Field(description="regex; a new chunk starts at each match")
    max_chunk_chars: int | None = Field(default=4000)
    _regex: re.Pattern[str] = PrivateAttr()
    _fallback: SentenceSplitter | None = PrivateAttr(default=None)

    def __init__(self, **data) -> None:
        super().__init__(**data)
        self._regex = re.compile(self.pattern)
        if self.max_chunk_chars:
            size = max(16, self.max_chunk_chars // _CHARS_PER_TOKEN)
            self._fallback = SentenceSplitter(chunk_size=size, chunk_overlap=0)

    @classmethod
    def class_name(cls) -> str:
        return "PatternSplitter"

    def split_text(self, text: str) -> list[str]:
        cuts = sorted({0, *(m.start() for m in self._regex.finditer(text) if m.start() > 0)})
        pieces = [text[a:b] for a, b in zip(cuts, cuts[1:] + [len(text)])]
        out: list[str] = []
        for piece in pieces:
            piece = piece.strip()
            if not piece:
                continue
            if self._fallback is not None and self.max_chunk_chars and len(piece) > self.max_chunk_chars:
                out.extend(s for s in self._fallback.split_text(piece) if s.strip())
            else:
                out.append(piece)
        return out
