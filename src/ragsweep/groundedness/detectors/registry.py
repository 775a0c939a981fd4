"""The detectors ``ragsweep judges evaluate`` knows, by name: one line each (``components.load`` imports a
detector's module on first use). A detector class says whether it needs the spec's LLM (``needs_llm``) and how
it is built (``Detector.build``)."""

from __future__ import annotations

from ragsweep.components import load

DETECTORS = {
    "quip": "ragsweep.groundedness.detectors.quip:Quip",
    "cosine": "ragsweep.groundedness.detectors.cosine:Cosine",
    "llm_faithfulness": "ragsweep.groundedness.detectors.llm_judges:LLMJudge",
    "claims": "ragsweep.groundedness.detectors.claims:Claims",
    "llm_correctness": "ragsweep.groundedness.detectors.llm_judges:LLMJudge",
}
ALL = tuple(DETECTORS)


def needs_llm(name: str) -> bool:
    return bool(getattr(load(DETECTORS[name]), "needs_llm"))


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
    return getattr(load(DETECTORS[name]), "build")(name, llm=llm, prompts=prompts, price=price)
