"""A component kind says where it is built: its spec class's ``builder`` (``"module:name"``), one lookup for all.

AutoRAG's ``support.py`` maps a name to a module in one table; here the spec class itself carries the name,
so a reranker, postprocessor or query transform is declared once -- its spec class in ``config/`` (its kind,
fields, label, capabilities and builder) -- plus the module that builds it: no table elsewhere lists it. The
module is imported on first use, so its libraries load only when a sweep uses the kind.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Any


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
