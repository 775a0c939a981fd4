"""Building a query transform: its spec class names the class that applies it (``builder``, ``ragsweep.components``).

A class takes (spec, host), ``host`` being the ``factory.IndexRetrievers`` it serves (its ``bm25``,
``vector``, ``llm`` and ``transform_memo``), and subclasses ``base.AppliedTransform``. An LLM-writing
kind also gives ``prompt(spec, question)``, the text it sends (the dry run counts its tokens). Modules
are imported on first use, so their libraries load only when a sweep uses them.
"""

from __future__ import annotations

from ragsweep.components import builder, module_of


def build(spec, host):
    """The ``base.AppliedTransform`` of ``spec`` (a ``query_transforms`` entry other than none) over ``host``."""
    return builder(spec)(spec, host)


def prompt(spec, question: str) -> str:
    """The prompt an LLM-writing transform sends for ``question``."""
    return module_of(spec).prompt(spec, question)
