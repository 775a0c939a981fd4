"""How the corpus is cut into chunks (``splitters:``)."""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal, Union

from pydantic import Field, SerializerFunctionWrapHandler, field_validator, model_serializer, model_validator

from ragsweep.config.base import Strict
from ragsweep.config.chunk_context import ChunkContext, check_shorthand, context_suffix


class _Splitter(Strict):
    """A splitter kind names the function that builds its parser (``builder``) and whether it embeds to chunk
    (``embeds``: the semantic splitter compares sentences' embeddings)."""

    embeds: ClassVar[bool] = False
    name: str | None = Field(default=None, description="label used in configuration ids")
    context: ChunkContext = Field(
        "none",
        description="prefix embedded and BM25-indexed with each chunk (contextual chunks): "
        "none, title (the document's title), title_headings (title > heading path) or llm "
        "(a situating sentence the LLM writes; {kind: llm, ...} for its settings)",
    )
    _context_shorthand = check_shorthand

    @model_serializer(mode="wrap")
    def _drop_default_context(self, handler: SerializerFunctionWrapHandler) -> dict:
        """``context: none`` is left out of every dump, so splitters from before it keep their hashes."""
        out = handler(self)
        if isinstance(out, dict) and out.get("context") == "none":
            out.pop("context")
        return out

    def _labelled(self, base: str) -> str:
        """The label: the spec's name, else ``base`` with the context's suffix (``sentence512-ctitle``)."""
        return self.name or base + context_suffix(self.context)


class TokenSplitterSpec(_Splitter):
    """Fixed windows of ``chunk_size`` tokens (LlamaIndex ``TokenTextSplitter``), split at word boundaries."""

    kind: Literal["token"]
    builder: ClassVar[str] = "ragsweep.splitters.parsers:token"
    chunk_size: int = Field(256, gt=0, description="tokens (tiktoken cl100k)")
    chunk_overlap: int = Field(32, ge=0, description="tokens shared by neighbouring chunks")

    def label(self) -> str:
        return self._labelled(f"token{self.chunk_size}")


class SentenceSplitterSpec(_Splitter):
    """Chunks of up to ``chunk_size`` tokens that keep sentences and paragraphs whole where they can (LlamaIndex
    ``SentenceSplitter``)."""

    kind: Literal["sentence"]
    builder: ClassVar[str] = "ragsweep.splitters.parsers:sentence"
    chunk_size: int = Field(512, gt=0, description="tokens")
    chunk_overlap: int = Field(64, ge=0, description="tokens shared by neighbouring chunks")

    def label(self) -> str:
        return self._labelled(f"sentence{self.chunk_size}")


class RecursiveSplitterSpec(_Splitter):
    """Chunks of up to ``chunk_size`` characters, split at the first separator that makes them fit (LangChain's
    ``RecursiveCharacterTextSplitter`` through LlamaIndex's ``LangchainNodeParser``)."""

    kind: Literal["recursive"]
    builder: ClassVar[str] = "ragsweep.splitters.parsers:recursive"
    chunk_size: int = Field(1500, gt=0, description="characters")
    chunk_overlap: int = Field(150, ge=0, description="characters shared by neighbouring chunks")
    separators: list[str] | None = Field(
        None, description="tried in order (default: LangChain's paragraph, line, word)"
    )

    def label(self) -> str:
        return self._labelled(f"recursive{self.chunk_size}")


class SemanticSplitterSpec(_Splitter):
    """A break wherever neighbouring sentences' embeddings drift apart (LangChain's ``SemanticChunker``; Kamradt
    2023, "5 Levels of Text Splitting"), with the configuration's embedding unless ``embedding`` names one."""

    kind: Literal["semantic"]
    builder: ClassVar[str] = "ragsweep.splitters.parsers:semantic"
    embeds: ClassVar[bool] = True
    breakpoint_threshold_type: Literal["percentile", "standard_deviation", "interquartile", "gradient"] = Field(
        "percentile",
        description="how a break between sentences is chosen from their embedding distances "
        "(LangChain's SemanticChunker)",
    )
    breakpoint_threshold_amount: float | None = Field(
        None,
        description="the threshold in that type's unit (a percentile, a number of deviations, ...); default: "
        "SemanticChunker's for the type",
    )
    buffer_size: int = Field(1, ge=0, description="sentences either side embedded with each sentence")
    embedding: str | None = Field(
        default=None, description="embedding name to chunk with; default: the configuration's embedding"
    )

    def label(self) -> str:
        return self._labelled("semantic")


class PatternSplitterSpec(_Splitter):
    """A chunk starts at each match of ``pattern`` (a section sign, "Article", a heading): a legal text's own
    structure; pieces longer than ``max_chunk_chars`` are split again by sentences."""

    kind: Literal["pattern"]
    builder: ClassVar[str] = "ragsweep.splitters.parsers:pattern"
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
        return self._labelled("pattern")


class SentenceWindowSplitterSpec(_Splitter):
    """Single sentences (LlamaIndex ``SentenceWindowNodeParser``), each answered from its window of
    ``window_size`` sentences either side by the ``sentence_window`` postprocessor."""

    kind: Literal["sentence_window"]
    builder: ClassVar[str] = "ragsweep.splitters.parsers:sentence_window"
    window_size: int = Field(3, ge=0, le=50, description="sentences either side handed to the generator")

    def label(self) -> str:
        return self._labelled(f"sentwindow{self.window_size}")


class HierarchicalSplitterSpec(_Splitter):
    """A tree of chunks (LlamaIndex ``HierarchicalNodeParser``): the leaves are indexed, their parents
    are what the ``auto_merging`` postprocessor merges them into."""

    kind: Literal["hierarchical"]
    builder: ClassVar[str] = "ragsweep.splitters.parsers:hierarchical"
    chunk_sizes: list[int] = Field([2048, 512, 128], min_length=2, description="tokens per level, root first")
    chunk_overlap: int = Field(20, ge=0, description="tokens (LlamaIndex's default)")

    @field_validator("chunk_sizes")
    @classmethod
    def _decreasing(cls, v: list[int]) -> list[int]:
        if any(s <= 0 for s in v) or any(a <= b for a, b in zip(v, v[1:])):
            raise ValueError("chunk_sizes must be positive and decreasing, root first, e.g. [2048, 512, 128]")
        return v

    @model_validator(mode="after")
    def _overlap_fits(self) -> "HierarchicalSplitterSpec":
        if self.chunk_overlap >= min(self.chunk_sizes):
            raise ValueError("chunk_overlap must be smaller than the smallest of chunk_sizes")
        return self

    def label(self) -> str:
        return self._labelled("hier" + "_".join(str(s) for s in self.chunk_sizes))


SplitterSpec = Annotated[
    Union[
        TokenSplitterSpec,
        SentenceSplitterSpec,
        RecursiveSplitterSpec,
        SemanticSplitterSpec,
        PatternSplitterSpec,
        SentenceWindowSplitterSpec,
        HierarchicalSplitterSpec,
    ],
    Field(discriminator="kind"),
]
