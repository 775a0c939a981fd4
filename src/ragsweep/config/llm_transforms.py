"""Query transforms that ask the spec's ``llm`` (``query_transforms:`` kinds hyde, multi_query, decompose).

Each writes something per question once (a passage, rewrites, sub-questions), shared by every
retriever, top_k and reranker it meets; the retrievers it applies to are narrowed by ``apply_to``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ragsweep.config.transform_params import TransformParams


class HyDESpec(TransformParams):
    """HyDE (Gao et al. 2022, arXiv:2212.10496): the LLM writes a passage answering the question and the
    vector part of a retriever searches with its embedding (averaged with the question's when
    ``include_original``, as LlamaIndex's ``HyDEQueryTransform``); BM25 and graph parts keep the question."""

    kind: Literal["hyde"]
    builder: ClassVar[str] = "ragsweep.retrievers.transforms.hyde:HyDETransform"
    include_original: bool = Field(
        True,
        description="search with the mean of the passage's and the question's "
        "embeddings (LlamaIndex's default); false: the passage alone",
    )
    part: ClassVar[str | None] = "vector"  # vector, fusion and hybrid_kg retrievers
    requirement: ClassVar[str] = "hyde searches the vector part: add a vector, fusion or hybrid_kg retriever"

    def label(self) -> str:
        return self.name or ("hyde" if self.include_original else "hyde-only")


class MultiQuerySpec(TransformParams):
    """Multi-query ("RAG-Fusion"): the question and ``num_queries`` - 1 LLM rewrites, each through the whole
    retriever, fused by reciprocal rank fusion (Cormack et al. 2009)."""

    kind: Literal["multi_query"]
    builder: ClassVar[str] = "ragsweep.retrievers.transforms.multi_query:MultiQueryTransform"
    num_queries: int = Field(3, ge=2, le=10, description="queries searched: the question and num_queries - 1 rewrites")

    def label(self) -> str:
        return self.name or ("multiquery" if self.num_queries == 3 else f"multiquery-n{self.num_queries}")


class DecomposeSpec(TransformParams):
    """Decomposition (Khot et al. 2023, Decomposed Prompting; Press et al. 2023, self-ask): the LLM splits the
    question into at most ``max_subquestions`` sub-questions; each, and the question, through the whole
    retriever, fused by reciprocal rank fusion."""

    kind: Literal["decompose"]
    builder: ClassVar[str] = "ragsweep.retrievers.transforms.decompose:DecomposeTransform"
    max_subquestions: int = Field(3, ge=1, le=10, description="sub-questions kept from the LLM's list")

    def label(self) -> str:
        return self.name or ("decompose" if self.max_subquestions == 3 else f"decompose-s{self.max_subquestions}")
