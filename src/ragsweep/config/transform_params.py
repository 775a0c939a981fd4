"""What every query transform other than ``none`` shares: a name, ``apply_to``, the retriever kinds it
can transform, and its identity (its settings, without name and ``apply_to``)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ragsweep.config.base import Strict


class TransformParams(Strict):
    name: str | None = None
    apply_to: list[str] | None = Field(None, description="labels of the retrievers it transforms; default: all it can")
    # the retriever kinds it can transform, and what the spec lacks when none is there (config.sweep's check)
    kinds: ClassVar[tuple[str, ...]] = ("bm25", "vector", "fusion", "knowledge_graph", "hybrid_kg")
    requirement: ClassVar[str] = "add a retriever"

    @property
    def uses_llm(self) -> bool:
        return True

    def identity(self) -> dict:
        """What determines the transformed queries (an LLM's settings are the configuration's ``rewrite_llm``)."""
        return self.model_dump(mode="json", exclude={"name", "apply_to"})

    def applies_to(self, retriever) -> bool:
        return retriever.kind in self.kinds and (self.apply_to is None or retriever.label() in self.apply_to)
