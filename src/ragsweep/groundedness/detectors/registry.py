"""The detectors ``ragsweep judges evaluate`` knows, by name: one ``components.Named`` line each (its class,
imported on first use, and ``needs_llm`` where it asks the spec's LLM). A detector class says how it is built
(``Detector.build``) and scores (``score_all``)."""

from __future__ import annotations

from ragsweep.components import Named

DETECTORS: dict[str, Named] = {
    "quip": Named("ragsweep.groundedness.detectors.quip:Quip"),
    "cosine": Named("ragsweep.groundedness.detectors.cosine:Cosine"),
    "llm_faithfulness": Named("ragsweep.groundedness.detectors.llm_judges:LLMJudge", ("needs_llm",)),
    "claims": Named("ragsweep.groundedness.detectors.claims:Claims", ("needs_llm",)),
    "llm_correctness": Named("ragsweep.groundedness.detectors.llm_judges:LLMJudge", ("needs_llm",)),
}
ALL = tuple(DETECTORS)


def needs_llm(name: str) -> bool:
    return DETECTORS[name].has("needs_llm")


def offline() -> list[str]:
    """The detectors that run without an LLM."""
    return [n for n in ALL if not needs_llm(n)]


def with_llm() -> list[str]:
    """The detectors that need the spec's LLM."""
    return [n for n in ALL if needs_llm(n)]


def build(name: str, *, llm=None, prompts=None, price=None):
    """The detector ``name`` (one of ``ALL``); LLM ones are built on ``llm``."""
    if name not in DETECTORS:
        raise ValueError(f"unknown detector {name!r}; known: {', '.join(ALL)}")
    return DETECTORS[name].load().build(name, llm=llm, prompts=prompts, price=price)
