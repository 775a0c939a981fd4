"""Contextual chunks (``splitters[].context``): what each chunk is embedded and BM25-indexed with.

``none``, ``title`` and ``title_headings`` are computed offline (``splitters.context_prefix``);
``llm`` (or ``{kind: llm, ...}``) asks an LLM for a short sentence situating the chunk in its
document, as in Anthropic's "Contextual Retrieval" (2024). The chunk's text and offsets stay raw.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, TypeGuard, Union

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from ragsweep.config.base import Strict
from ragsweep.config.llm import LLMSpec

ChunkContextPreset = Literal["none", "title", "title_headings"]
PRESET_SUFFIX = {"none": "", "title": "-ctitle", "title_headings": "-cheadings"}
PROMPT_PLACEHOLDERS = ("{document}", "{chunk}")


class LLMChunkContextSpec(Strict):
    """A situating sentence per chunk, written by the spec's ``llm`` (or this section's own ``llm``, e.g.
    a cheaper model), from the document (a window of it when longer than ``document_tokens``) and the
    chunk; Anthropic's prompt unless ``prompt_file``. Each call is cached (LLM call cache), the
    contexts with the chunks; ``run --dry-run`` counts the calls."""

    kind: Literal["llm"]
    document_tokens: int = Field(
        6000,
        ge=64,
        description="tokens of the document the LLM reads (the whole document when shorter; else "
        "its first head_tokens and the fixed block holding the chunk)",
    )
    head_tokens: int | None = Field(
        None,
        ge=0,
        description="tokens of the document's start always shown when it "
        "is cut (title, parties, definitions); default: 512 or a "
        "quarter of document_tokens, whichever is fewer",
    )
    max_tokens: int = Field(100, gt=0, description="the longest context the LLM may write (Anthropic: 50-100 tokens)")
    title: bool = Field(False, description="prefix the document's title too (as context: title), then the sentence")
    prompt_file: Path | None = Field(None, description="template with {document} and {chunk}; default: Anthropic's")
    llm: LLMSpec | None = Field(None, description="the LLM that writes the contexts; default: the spec's llm")

    @model_validator(mode="after")
    def _head_fits(self) -> "LLMChunkContextSpec":
        if self.head_tokens is not None and self.head_tokens >= self.document_tokens:
            raise ValueError("head_tokens must be smaller than document_tokens")
        return self

    @property
    def head(self) -> int:
        """The head's tokens, as set or by default."""
        return self.head_tokens if self.head_tokens is not None else min(512, self.document_tokens // 4)

    def suffix(self) -> str:
        return "-ctitle-llm" if self.title else "-cllm"


def _tag(v) -> str:
    return "preset" if isinstance(v, str) else "llm"


ChunkContext = Annotated[
    Union[Annotated[ChunkContextPreset, Tag("preset")], Annotated[LLMChunkContextSpec, Tag("llm")]],
    Discriminator(_tag),
]


def shorthand(v):
    """``context: llm`` is ``{kind: llm}`` with every default; an unknown name lists the accepted ones."""
    if v == "llm":
        return {"kind": "llm"}
    if (isinstance(v, str) and v not in PRESET_SUFFIX) or not isinstance(v, (str, dict, LLMChunkContextSpec)):
        raise ValueError(
            f"unknown context {v!r}; expected none, title, title_headings or llm "
            "(or {kind: llm, document_tokens: ..., llm: {...}})"
        )
    return v


def context_suffix(context) -> str:
    """The label suffix of a context: ``-ctitle``, ``-cheadings``, ``-cllm``, ``-ctitle-llm``; none for none."""
    return PRESET_SUFFIX[context] if isinstance(context, str) else context.suffix()


def uses_llm(context: object) -> TypeGuard[LLMChunkContextSpec]:
    return isinstance(context, LLMChunkContextSpec)


def context_llm(context, spec_llm: LLMSpec | None) -> LLMSpec | None:
    """The LLM that writes ``context``'s sentences (its own, else the spec's) with the context's
    ``max_tokens``; None for an offline context."""
    if not uses_llm(context):
        return None
    llm = context.llm or spec_llm
    return None if llm is None else llm.model_copy(update={"max_tokens": context.max_tokens})


check_shorthand = field_validator("context", mode="before")(classmethod(lambda cls, v: shorthand(v)))
