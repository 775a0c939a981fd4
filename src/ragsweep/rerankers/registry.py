"""Built rerankers: a spec class names its builder (``builder``, ``ragsweep.components``).

Builders import their libraries lazily; ``RerankerModels`` keeps one built reranker per spec for
the process (a stage drops them with ``release`` when it is done, as it does embedding models).
"""

from __future__ import annotations

import json
from typing import Any

from ragsweep.components import builder


def build(spec, llm=None):
    """A reranker for ``spec`` (a ``config.rerankers`` section other than ``none``): the function its spec
    class names in ``builder`` (``ragsweep.components``) takes (spec, llm) and returns a ``base.Reranker``."""
    return builder(spec)(spec, llm)


class RerankerModels:
    """The run's rerankers in this process, built on first use, one per spec."""

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}

    def get(self, spec, llm=None):
        # one scorer per model and settings, whatever the candidates: maxsim with 20 and with 50
        # candidates share their loaded weights and memoised scores
        key = json.dumps({k: v for k, v in spec.identity().items() if k != "candidates"}, sort_keys=True)
        if key not in self._built:
            self._built[key] = build(spec, llm)
        return self._built[key]

    def forget(self) -> None:
        """Drop what the built rerankers memoised per question; their models stay loaded."""
        for reranker in self._built.values():
            if hasattr(reranker, "forget"):
                reranker.forget()

    def release(self) -> None:
        """Drop the built rerankers (their weights and memoised scores); a later ``get`` builds again."""
        self._built.clear()
