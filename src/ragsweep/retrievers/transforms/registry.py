"""The one place a query-transform kind is registered: its spec's ``kind`` -> the class that applies it.

A class takes (spec, host), ``host`` being the ``factory.IndexRetrievers`` it serves (its ``bm25``,
``vector``, ``llm`` and ``transform_memo``), and subclasses ``base.AppliedTransform``. An LLM-writing
kind also gives ``prompt(spec, question)``, the text it sends (the dry run counts its tokens). Modules
are imported on first use, so their libraries load only when a sweep uses them.
"""

from __future__ import annotations

import importlib

# kind -> "module:class"
REGISTRY: dict[str, str] = {
    "rm3": "ragsweep.retrievers.transforms.rm3:RM3Transform",
    "hyde": "ragsweep.retrievers.transforms.hyde:HyDETransform",
    "multi_query": "ragsweep.retrievers.transforms.multi_query:MultiQueryTransform",
    "decompose": "ragsweep.retrievers.transforms.decompose:DecomposeTransform",
}


def _module(kind: str):
    module, name = REGISTRY[kind].split(":")
    return importlib.import_module(module), name


def build(spec, host):
    """The ``base.AppliedTransform`` of ``spec`` (a ``query_transforms`` entry other than none) over ``host``."""
    module, name = _module(spec.kind)
    return getattr(module, name)(spec, host)


def prompt(spec, question: str) -> str:
    """The prompt an LLM-writing transform sends for ``question``."""
    return _module(spec.kind)[0].prompt(spec, question)
