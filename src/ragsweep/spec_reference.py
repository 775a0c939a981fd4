"""The spec reference, written from the pydantic schema: every section, field, type, default and description.

The documentation site's reference page (``make docs``; ``scripts/mkdocs_hooks.py``) is this text, built when
the site is, so it names what the code accepts and nothing else. Each section (a pydantic model) is listed
once, in the order a spec reaches it from ``SweepSpec``; a field whose type is a section links to it.
"""

from __future__ import annotations

import json
import types
import typing
from typing import Annotated, Literal, Union

from pydantic import BaseModel
from pydantic_core import PydanticUndefined


def spec_reference() -> str:
    """Markdown: an introduction, then one section per model with a table of its fields."""
    from ragsweep.config.sweep import SweepSpec

    found = models(SweepSpec)
    out = [
        "# Spec reference",
        "",
        "Generated from the schema (`ragsweep.config`) when the site is built: every key a spec may hold. "
        "A section's table gives each field's type, default (*required* when it has none) and meaning; "
        "`validate --help` prints the same keys in brief.",
        "",
    ]
    for model in found:
        out += _section(model)
    return "\n".join(out).rstrip() + "\n"


def models(root: type[BaseModel]) -> list[type[BaseModel]]:
    """Every model reachable from ``root`` through field types, breadth first, each once."""
    seen: list[type[BaseModel]] = []
    queue = [root]
    while queue:
        model = queue.pop(0)
        if model in seen:
            continue
        seen.append(model)
        for info in model.model_fields.values():
            queue += [m for m in _referenced(info.annotation) if m not in seen]
    return seen


def _referenced(tp: object) -> list[type[BaseModel]]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    return [m for arg in typing.get_args(tp) for m in _referenced(arg)]


def _anchor(model: type) -> str:
    return model.__name__.lower()


def type_name(tp: object) -> str:
    """A field's type as a reader writes it: ``int``, ``list[RetrieverSpec]``, ``'absolute' | 'relative'``."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        return type_name(typing.get_args(tp)[0])
    if origin in (Union, types.UnionType):
        return " | ".join(dict.fromkeys(type_name(a) for a in typing.get_args(tp)))
    if origin is Literal:
        return " | ".join(json.dumps(v) for v in typing.get_args(tp))
    if origin is not None:
        args = ", ".join(type_name(a) for a in typing.get_args(tp))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if tp is type(None):
        return "null"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return f"[{tp.__name__}](#{_anchor(tp)})"
    return getattr(tp, "__name__", str(tp))


def _default(info) -> str:
    if info.is_required():
        return "*required*"
    value = info.get_default(call_default_factory=True)
    if value is PydanticUndefined:
        return "*required*"
    if isinstance(value, BaseModel):
        return "(its defaults)"
    try:
        text = json.dumps(value, default=_plain)
    except (TypeError, ValueError):
        text = str(value)
    return f"`{text}`" if len(text) <= 40 else f"`{text[:37]}...`"


def _plain(value: object) -> object:
    """A default as a spec writes it: a section by what it sets (``{"kind": "none"}``)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_defaults=True) or value.model_dump(mode="json")
    return str(value)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def field_meaning(model: type[BaseModel], name: str, info) -> str:
    """What the reference says a field means: its description, else the meaning every alternative's ``kind``,
    ``format`` or ``name`` has (said once here rather than on each class); empty when neither."""
    return info.description or _generic(model, name, info)


def _generic(model: type[BaseModel], name: str, info) -> str:
    """The meaning of the fields every alternative has."""
    if name in ("kind", "format") and typing.get_origin(info.annotation) is Literal:
        return "selects this alternative"
    if name == "name" and hasattr(model, "label"):
        return "its label in configuration ids, tables and `apply_to` (default: one made from its settings)"
    return ""


def _section(model: type[BaseModel]) -> list[str]:
    doc = (model.__doc__ or "").strip().split("\n\n")[0]
    lines = [f"## {model.__name__}", "", _cell(doc) if doc else "", ""]
    lines += ["| field | type | default | meaning |", "|---|---|---|---|"]
    for name, info in model.model_fields.items():
        lines.append(
            f"| `{name}` | {_cell(type_name(info.annotation))} | {_cell(_default(info))} | "
            f"{_cell(field_meaning(model, name, info))} |"
        )
    return lines + [""]
