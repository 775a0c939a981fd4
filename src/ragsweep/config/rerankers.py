"""Rerankers (``rerankers:``): reorder a base retriever's top ``candidates``, then cut to ``top_k``.

Every retriever is combined with every reranker (``apply_to`` narrows that), so a sweep compares the
same retrievers with and without reranking. ``none`` is the retriever alone: its configurations keep
the ids and hashes they had before rerankers existed.
"""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal, Union

from pydantic import Field

from ragsweep.config.base import Strict


class _RerankParams(Strict):
    name: str | None = None
    candidates: int = Field(20, gt=0, le=1000, description="base results reordered per question")
    apply_to: list[str] | None = Field(
        None, description="labels of the retrievers this reranker is combined with; default: all"
    )

    def _suffix(self) -> str:
        return "" if self.candidates == 20 else f"-c{self.candidates}"

    @property
    def uses_llm(self) -> bool:
        return False

    def identity(self) -> dict:
        """What determines the reordering (names, ``apply_to`` and the device do not, as for embeddings)."""
        return self.model_dump(mode="json", exclude={"name", "apply_to", "device"})


class NoRerankSpec(Strict):
    """The base retriever's own order."""

    kind: Literal["none"]

    def label(self) -> str:
        return "none"


class LateInteractionSpec(_RerankParams):
    """Offline late interaction: MaxSim over a bi-encoder's token embeddings (Khattab & Zaharia 2020,
    "ColBERT", SIGIR), on the bundled MiniLM by default; a long text is read in windows of
    ``max_tokens`` so nothing past the encoder's limit is cut off."""

    kind: Literal["late_interaction"]
    builder: ClassVar[str] = "ragsweep.rerankers.late_interaction:build"
    model: str = Field("minilm", description="minilm (bundled), a local sentence-transformers directory or a hub id")
    max_tokens: int = Field(256, ge=16, le=512, description="tokens per encoder window, special tokens included")
    device: str | None = Field(None, description="cpu, cuda, ...; default: the GPU when torch sees one")

    def label(self) -> str:
        base = "maxsim" if self.model == "minilm" else "maxsim-" + _slug(self.model)
        return self.name or base + self._suffix()


class CrossEncoderSpec(_RerankParams):
    """A cross-encoder scoring each (question, chunk) pair (LlamaIndex ``SentenceTransformerRerank``;
    Nogueira & Cho 2019, "Passage Re-ranking with BERT"), by hub name or local directory."""

    kind: Literal["cross_encoder"]
    builder: ClassVar[str] = "ragsweep.rerankers.cross_encoder:build"
    model: str = Field(description="e.g. cross-encoder/ms-marco-MiniLM-L-6-v2 or a local directory")
    device: str | None = Field(None, description="cpu, cuda, ...; default: the GPU when torch sees one")

    def label(self) -> str:
        return self.name or "ce-" + _slug(self.model) + self._suffix()


class LLMRerankSpec(_RerankParams):
    """LlamaIndex ``LLMRerank`` on the spec's ``llm``: the candidates in batches of ``batch_size``, the LLM
    lists the relevant ones with a 1-10 score (listwise; Sun et al. 2023, "Is ChatGPT Good at Search?").
    Candidates it leaves out follow in their base order unless ``drop_unlisted``."""

    kind: Literal["llm"]
    builder: ClassVar[str] = "ragsweep.rerankers.llm:build"
    batch_size: int = Field(10, gt=0, le=50, description="candidates per LLM call")
    drop_unlisted: bool = Field(False, description="drop candidates the LLM does not list (LlamaIndex's default)")

    def label(self) -> str:
        return self.name or "llmrerank" + self._suffix()

    @property
    def uses_llm(self) -> bool:
        return True


def _slug(model: str) -> str:
    """A label part from a model name or path: its last component, letters, digits, '.', '_', '-'."""
    tail = re.split(r"[\\/]", model.rstrip("/\\"))[-1] or "model"
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", tail).strip("-") or "model"


RerankerSpec = Annotated[
    Union[NoRerankSpec, LateInteractionSpec, CrossEncoderSpec, LLMRerankSpec], Field(discriminator="kind")
]
ActiveReranker = Union[LateInteractionSpec, CrossEncoderSpec, LLMRerankSpec]
