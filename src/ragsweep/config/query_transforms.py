"""Query transforms (``query_transforms:``): what a retriever searches with instead of the question.

Each retriever meets each transform it can use (``apply_to`` narrows that); ``none`` is the question
as asked, and its configurations keep the ids and hashes they had before transforms existed. The
LLM-written ones (hyde, multi_query, decompose) are in ``llm_transforms``.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Union

from pydantic import Field

from ragsweep.config.base import Strict
from ragsweep.config.llm_transforms import DecomposeSpec, HyDESpec, MultiQuerySpec
from ragsweep.config.transform_params import TransformParams


class NoTransformSpec(Strict):
    """The question as asked."""

    kind: Literal["none"]

    def label(self) -> str:
        return "none"


class RM3Spec(TransformParams):
    """Offline pseudo-relevance feedback for BM25 (RM3; Lavrenko & Croft 2001, Abdul-Jaleel et al.
    2004), Anserini's defaults; it expands the BM25 part of bm25, fusion and hybrid_kg retrievers."""

    kind: Literal["rm3"]
    builder: ClassVar[str] = "ragsweep.retrievers.transforms.rm3:RM3Transform"
    fb_docs: int = Field(10, gt=0, le=100, description="feedback documents: the question's top BM25 results")
    fb_terms: int = Field(10, gt=0, le=200, description="expansion terms kept")
    original_weight: float = Field(0.5, ge=0, le=1, description="weight of the question's own terms")
    max_df: float = Field(0.1, gt=0, le=1, description="feedback terms occur in at most this share of the chunks")
    part: ClassVar[str | None] = "bm25"  # bm25, fusion and hybrid_kg retrievers
    requirement: ClassVar[str] = "rm3 expands BM25: add a bm25, fusion or hybrid_kg retriever"

    def label(self) -> str:
        if self.name:
            return self.name
        default = (self.fb_docs, self.fb_terms, self.original_weight, self.max_df) == (10, 10, 0.5, 0.1)
        return (
            "rm3"
            if default
            else (
                f"rm3-d{self.fb_docs}-t{self.fb_terms}-w{self.original_weight:g}"
                + (f"-df{self.max_df:g}" if self.max_df != 0.1 else "")
            )
        )

    @property
    def uses_llm(self) -> bool:
        return False


QueryTransformSpec = Annotated[
    Union[NoTransformSpec, RM3Spec, HyDESpec, MultiQuerySpec, DecomposeSpec], Field(discriminator="kind")
]
ActiveTransform = Union[RM3Spec, HyDESpec, MultiQuerySpec, DecomposeSpec]  # a transform other than none
