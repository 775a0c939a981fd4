"""Test-set generation from the corpus (``generate:``, read by ``ragsweep generate``).

Question types are HyPA-RAG's eleven (Kalra et al. 2024, arXiv:2409.09046); ``mix`` weighs them.
The offline generator writes only the types it can build without a model (``OFFLINE_TYPES``).
"""

from __future__ import annotations

import difflib
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ragsweep.config.base import Strict
from ragsweep.config.llm import LLMSpec

QUESTION_TYPES = (
    "simple",
    "complex",
    "distracting",
    "situational",
    "double",
    "conversational",
    "complex_situational",
    "out_of_scope",
    "vague",
    "comparative",
    "rule_conclusion",
)
OFFLINE_TYPES = (
    "simple",
    "distracting",
    "situational",
    "double",
    "vague",
    "comparative",
    "out_of_scope",
    "conversational",
)
OfflineMethod = Literal["definition", "duty", "ict"]
OFFLINE_METHODS: tuple[OfflineMethod, ...] = ("definition", "duty", "ict")

DEFAULT_MIX = {
    "offline": {
        "simple": 0.4,
        "situational": 0.1,
        "double": 0.1,
        "comparative": 0.1,
        "distracting": 0.1,
        "vague": 0.1,
        "out_of_scope": 0.1,
    },
    "llm": {
        "simple": 0.25,
        "complex": 0.1,
        "distracting": 0.05,
        "situational": 0.1,
        "double": 0.05,
        "conversational": 0.05,
        "complex_situational": 0.05,
        "out_of_scope": 0.1,
        "vague": 0.05,
        "comparative": 0.1,
        "rule_conclusion": 0.1,
    },
}


class GenerateSpec(Strict):
    """How many questions of which types, by which generator, and how they are checked."""

    generator: Literal["offline", "llm"] = Field(
        "offline",
        description="offline: definition, duty and Inverse-Cloze questions read off the text (no model); "
        "llm: written by the LLM (generate.llm, else the spec's llm) from passages of the corpus",
    )
    questions: int = Field(100, gt=0, description="questions to write (fewer when the corpus or budget runs out)")
    mix: dict[str, float] | None = Field(
        None, description="weight per question type (normalised); default: the generator's mix"
    )
    methods: list[OfflineMethod] = Field(
        list(OFFLINE_METHODS),
        min_length=1,
        description="offline: where simple questions come from (definitions, duties/permissions, Inverse Cloze Task)",
    )
    seed: int = Field(0, description="the passages and questions drawn (the same seed writes the same set)")
    near_duplicate: float = Field(
        0.7,
        gt=0,
        le=1,
        description="drop a question whose word-bigram Jaccard similarity with a kept one reaches "
        "this (1: only exact repeats)",
    )
    fuzzy_evidence: float | None = Field(
        None,
        gt=0,
        le=1,
        description="also accept an LLM's evidence quote found only approximately (similarity "
        ">= this); off by default: evidence must occur exactly or after normalisation",
    )
    min_evidence_chars: int = Field(
        20, gt=0, description="a shorter evidence quote is rejected (too short to pin down where the answer is)"
    )
    passage_tokens: int = Field(320, ge=64, description="llm: the size of the passages shown to the LLM")
    oversample: float = Field(
        1.3,
        ge=1,
        le=5,
        description="llm: prompts sent per wanted question in the first "
        "round (rejections are replaced in later rounds)",
    )
    rounds: int = Field(3, ge=1, le=10, description="llm: rounds of prompts at most")
    llm: LLMSpec | None = Field(None, description="llm: the endpoint that writes questions (default: the spec's llm)")

    @field_validator("mix")
    @classmethod
    def _known_types(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        if v is None:
            return v
        for name, w in v.items():
            if name not in QUESTION_TYPES:
                close = difflib.get_close_matches(name, QUESTION_TYPES, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise ValueError(f"unknown question type {name!r}; {hint}types: {', '.join(QUESTION_TYPES)}")
            if w < 0:
                raise ValueError(f"{name}: weight {w} is negative")
        if sum(v.values()) <= 0:
            raise ValueError("weights must have a positive sum")
        return v

    @model_validator(mode="after")
    def _offline_types(self) -> "GenerateSpec":
        if self.generator == "offline" and self.mix is not None:
            cannot = [t for t, w in self.mix.items() if w > 0 and t not in OFFLINE_TYPES]
            if cannot:
                raise ValueError(
                    f"mix: the offline generator cannot write {', '.join(cannot)} questions (it writes "
                    f"{', '.join(OFFLINE_TYPES)}); set generator: llm or drop them"
                )
        return self

    def weights(self) -> dict[str, float]:
        """The mix normalised to sum 1, in ``QUESTION_TYPES`` order, zero weights dropped."""
        mix = self.mix if self.mix is not None else DEFAULT_MIX[self.generator]
        total = sum(mix.values())
        return {t: mix[t] / total for t in QUESTION_TYPES if mix.get(t, 0) > 0}
