"""The detectors ``ragsweep judges evaluate`` knows: offline ones, and those that need the spec's LLM."""

from __future__ import annotations

OFFLINE = ("quip", "cosine")
LLM = ("llm_faithfulness", "claims", "llm_correctness")
ALL = OFFLINE + LLM


def build(name: str, *, llm=None, prompts=None, price=None):
    """The detector ``name`` (one of ``ALL``); LLM ones are built on ``llm``."""
    if name == "quip":
        from ragsweep.groundedness.detectors.quip import Quip

        return Quip()
    if name == "cosine":
        from ragsweep.groundedness.detectors.cosine import Cosine

        return Cosine()
    if name == "claims":
        from ragsweep.groundedness.detectors.claims import Claims

        return Claims(llm, price)
    if name in ("llm_faithfulness", "llm_correctness"):
        from ragsweep.groundedness.detectors.llm_judges import LLMJudge

        return LLMJudge(name.removeprefix("llm_"), llm, prompts, price)
    raise ValueError(f"unknown detector {name!r}; known: {', '.join(ALL)}")
