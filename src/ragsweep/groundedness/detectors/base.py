"""What a detector gives per item: a score (higher: more grounded), the time and money it took."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scored:
    score: float | None  # None: could not score (the reason in ``error``)
    ms: float
    cost_usd: float | None = 0.0
    error: str | None = None


class Detector:
    """``name``; ``label``: what its score predicts (``grounded`` or ``correctness``); ``score_all(items)``
    returns one ``Scored`` per item, in order. Whether it needs the spec's LLM is declared with its name
    (``registry.DETECTORS``)."""

    name = "detector"
    label = "grounded"

    @classmethod
    def build(cls, name: str, *, llm=None, prompts=None, price=None) -> "Detector":
        """The detector ``name`` of this class (an LLM one on ``llm``, with the judges' ``prompts`` and ``price``)."""
        return cls()

    def score_all(self, items) -> list[Scored]:
        raise NotImplementedError
