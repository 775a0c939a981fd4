"""A component kind says where it is built (``"module:name"``) and what it can do, in one declaration.

AutoRAG's ``support.py`` maps a name to a module in one table. A kind chosen by a spec section (a splitter,
retriever, reranker, postprocessor, query transform) carries it on its spec class in ``config/``: its kind,
fields, label, capabilities and ``builder``, read by ``builder(spec)``. A kind chosen by a plain name (a search
strategy, an executor, a groundedness detector) is a ``Named`` entry in its family's one table, whose keys are
the schema's choices. Either way no other table lists it, and the module is imported on first use, so its
libraries load only when a sweep uses the kind.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Named:
    """A kind chosen by name: where it is built (``builder``, ``"module:name"``) and what it can do (``can``:
    capability names its family defines), so validation and the docs need not import it."""

    builder: str
    can: tuple[str, ...] = ()

    def has(self, capability: str) -> bool:
        return capability in self.can

    def load(self) -> Any:
        return load(self.builder)


def builder(spec) -> Any:
    """The function or class ``spec``'s class names in ``builder`` (``rerankers.cross_encoder:build``)."""
    return load(_path(spec))


@functools.cache
def load(path: str) -> Any:
    """The function or class ``"module:name"`` names, its module imported on first use (the kinds chosen by a
    plain name, executors and detectors, keep such a path per name in one table)."""
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def module_of(spec) -> ModuleType:
    """The module that builds ``spec``'s kind (for what else it offers: an LLM transform's ``prompt``)."""
    return importlib.import_module(_path(spec).split(":")[0])


def _path(spec) -> str:
    path = getattr(type(spec), "builder", None)
    if not isinstance(path, str) or ":" not in path:
        raise TypeError(f"{type(spec).__name__} ({getattr(spec, 'kind', '?')}) names no builder 'module:name'")
    return path
