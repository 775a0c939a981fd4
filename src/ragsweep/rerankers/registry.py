"""The one place a reranker kind is registered: its spec's ``kind`` -> the function that builds it.

Builders import their libraries lazily; ``RerankerModels`` keeps one built reranker per spec for
the process (a stage drops them with ``release`` when it is done, as it does embedding models).
"""

from __future__ import annotations

import importlib
import json
from typing import Any

# kind -> "module:function"; the function takes (spec, llm) and returns a ``base.Reranker``
REGISTRY: dict[str, str] = {
    "late_interaction": "ragsweep.rerankers.late_interaction:build",
    "cross_encoder": "ragsweep.rerankers.cross_encoder:build",
    "llm": "ragsweep.rerankers.llm:build",
}


def build(spec, llm=None):
    """A reranker for ``spec`` (a ``config.rerankers`` section other than ``none``)."""
    module, func = REGISTRY[spec.kind].split(":")
    return getattr(importlib.import_module(module), func)(spec, llm)


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

    def release(self) -> None:
        """Drop the built rerankers (their weights and memoised scores); a later ``get`` builds again."""
        self._built.clear()
