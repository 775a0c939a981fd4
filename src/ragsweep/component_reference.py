"""The component catalogue, written from the schema: every kind of each family a spec lists, with what it is,
the module that builds it and a link to its fields.

The documentation site's page ``reference/components.md`` (``scripts/mkdocs_hooks.py``) is this text: a new
kind appears there from its spec class alone (its ``kind``, docstring and ``builder``), as everywhere else.
"""

from __future__ import annotations

import typing
from typing import Annotated, Literal, Union

from pydantic import BaseModel

from ragsweep.spec_reference import models

# the spec's list fields whose items are alternatives chosen by ``kind``, in the order a sweep combines them,
# with the module that builds a kind whose class names no ``builder`` of its own
FAMILIES = {
    "splitters": "ragsweep.splitters.build",
    "embeddings": "ragsweep.embeddings.factory",
    "retrievers": "ragsweep.retrievers.factory",
    "query_transforms": None,
    "rerankers": None,
    "postprocessors": None,
    "history": None,
}


def component_reference() -> str:
    """Markdown: one section per family, one row per kind."""
    from ragsweep.config.sweep import SweepSpec

    out = [
        "# Component catalogue",
        "",
        "Generated from the schema (`ragsweep.config`) when the site is built: every kind a spec's component "
        "lists accept. Each kind is declared once, by its spec class (its `kind`, fields, label, capabilities "
        "and builder); the [spec reference](spec.md) gives its fields. A sweep combines every item of each "
        "list with every item of the others (`apply_to` narrows rerankers and transforms).",
        "",
    ]
    for family, factory in FAMILIES.items():
        out += [f"## `{family}:`", "", "| kind | what it is | built by |", "|---|---|---|"]
        for model in alternatives(SweepSpec.model_fields[family].annotation):
            link = f"[`{kind_of(model)}`](spec.md#{model.__name__.lower()})"
            out.append(f"| {link} | {_doc(model)} | {_builder(model, factory)} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def alternatives(tp: object) -> list[type[BaseModel]]:
    """The models a list field's items may be, in the order the union names them."""
    origin = typing.get_origin(tp)
    if origin in (list, Annotated, Union) or (origin is not None and typing.get_args(tp)):
        return [m for arg in typing.get_args(tp) for m in alternatives(arg)]
    return [tp] if isinstance(tp, type) and issubclass(tp, BaseModel) else []


def kind_of(model: type[BaseModel]) -> str:
    """The value of ``kind`` that selects ``model`` (its Literal); its class name when it has none."""
    info = model.model_fields.get("kind")
    if info is not None and typing.get_origin(info.annotation) is Literal:
        return " | ".join(str(v) for v in typing.get_args(info.annotation))
    default = info.get_default() if info is not None else None
    return str(default) if isinstance(default, str) else model.__name__


def _doc(model: type) -> str:
    text = " ".join((model.__doc__ or "").strip().split("\n\n")[0].split())
    return text.replace("|", "\\|")


def _builder(model: type, factory: str | None) -> str:
    """The module named by the class's ``builder``, else its family's, with what a retriever searches."""
    path = getattr(model, "builder", None)
    searches = getattr(model, "searches", None)
    if isinstance(path, str) and ":" in path:
        return f"`{path.split(':')[0]}`"
    if factory is None:
        return "nothing: leaves the retrieval as it is"
    return f"`{factory}`" + (f", from its {' + '.join(searches)} results" if searches else "")


__all__ = ["FAMILIES", "alternatives", "component_reference", "kind_of", "models"]
