"""How the corpus is cut into chunks (``splitters:``)."""

from __future__ import annotations

import re
from typing import Annotated, Literal, Union

from pydantic import Field, field_validator

from ragsweep.config.base import Strict


class _Splitter(Strict):
    name: str | None = Field(default=None, description="label used in configuration ids")


class TokenSplitterSpec(_Splitter):
    kind: Literal["token"]
    chunk_size: int = Field(256, gt=0, description="tokens (tiktoken cl100k)")
    chunk_overlap: int = Field(32, ge=0)

    def label(self) -> str:
        return self.name or f"token{self.chunk_size}"


class SentenceSplitterSpec(_Splitter):
    kind: Literal["sentence"]
    chunk_size: int = Field(512, gt=0, description="tokens")
    chunk_overlap: int = Field(64, ge=0)

    def label(self) -> str:
        return self.name or f"sentence{self.chunk_size}"


class RecursiveSplitterSpec(_Splitter):
    kind: Literal["recursive"]
    chunk_size: int = Field(1500, gt=0, description="characters")
    chunk_overlap: int = Field(150, ge=0)
    separators: list[str] | None = None

    def label(self) -> str:
        return self.name or f"recursive{self.chunk_size}"


class SemanticSplitterSpec(_Splitter):
    kind: Literal["semantic"]
    breakpoint_threshold_type: Literal["percentile", "standard_deviation", "interquartile", "gradient"] = "percentile"
    breakpoint_threshold_amount: float | None = None
    buffer_size: int = Field(1, ge=0)
    embedding: str | None = Field(
        default=None, description="embedding name to chunk with; default: the configuration's embedding"
    )

    def label(self) -> str:
        return self.name or "semantic"


class PatternSplitterSpec(_Splitter):
    kind: Literal["pattern"]
    pattern: str = Field(r"\n(?=§)", description="regex; a chunk starts at each match")
    max_chunk_chars: int | None = Field(4000, gt=0, description="longer pieces are split again by sentences")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
        return v

    def label(self) -> str:
        return self.name or "pattern"


SplitterSpec = Annotated[
    Union[TokenSplitterSpec, SentenceSplitterSpec, RecursiveSplitterSpec, SemanticSplitterSpec, PatternSplitterSpec],
    Field(discriminator="kind"),
]
