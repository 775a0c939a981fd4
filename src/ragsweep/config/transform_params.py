"""What every query transform other than ``none`` shares: a name, ``apply_to``, the retriever part it
transforms, and its identity (its settings, without name and ``apply_to``)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ragsweep.config.base import Strict


class TransformParams(Strict):
    name: str | None = None
    apply_to: list[str] | None = Field(None, description="labels of the retrievers it transforms; default: all it can")
    # the part of a retriever it changes (None: the whole retriever; else one its spec ``searches``), and what
    # the spec lacks when no retriever has it (config.sweep's check)
    part: ClassVar[str | None] = None
    requirement: ClassVar[str] = "add a retriever"

    @property
    def uses_llm(self) -> bool:
        return True

    def identity(self) -> dict:
        """What determines the transformed queries (an LLM's settings are the configuration's ``rewrite_llm``)."""
        return self.model_dump(mode="json", exclude={"name", "apply_to"})

    def applies_to(self, retriever) -> bool:
        return (self.part is None or self.part in retriever.searches) and (
            self.apply_to is None or retriever.label() in self.apply_to
        )
