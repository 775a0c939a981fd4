"""The spec's keys in brief, for ``ragsweep validate --help``, read from the pydantic schema when help is shown.

Nothing is listed by hand: every section, every component kind (a discriminated union's tags) and every
field comes from ``config.SweepSpec``, so a new kind or field appears here as soon as its spec class exists.
The text is built only for ``--help`` (the schema's import is not paid by every command).
"""

from __future__ import annotations

import functools
import textwrap
import types
import typing
from typing import Annotated, Literal, Union

from pydantic import BaseModel, Tag

INTRO = "Spec keys (the documentation site's spec reference, docs/spec.md, has them all):"
_DEPTH = 3  # sections deeper than this are named, not opened


def spec_keys_text(width: int = 116) -> str:
    """``  section: {field, field: a|b, ...}`` per top-level key, wrapped; ``\\b`` keeps click from rewrapping."""
    from ragsweep.config.sweep import SweepSpec

    lines = ["\b", INTRO]
    for name, info in SweepSpec.model_fields.items():
        text = _field(name, info.annotation, 0)
        lines += textwrap.wrap(text, width - 2, initial_indent="  ", subsequent_indent="      ", break_on_hyphens=False)
    return "\n".join(lines)


def _members(tp: object) -> tuple[list[object], bool]:
    """The alternatives of a union (``None`` dropped) and whether ``None`` was one."""
    args = list(typing.get_args(tp))
    return [a for a in args if a is not type(None)], type(None) in args


def _strip(tp: object) -> tuple[object, str | None]:
    """An annotation without ``Annotated``, and the ``Tag`` it carried."""
    tag = None
    while typing.get_origin(tp) is Annotated:
        tp, *meta = typing.get_args(tp)
        tag = next((m.tag for m in meta if isinstance(m, Tag)), tag)
    return tp, tag


def _tag_field(model: type[BaseModel]) -> tuple[str, str] | None:
    """The (field, value) a member of a discriminated union is told apart by: a one-value ``kind``/``format``."""
    for name in ("kind", "format"):
        info = model.model_fields.get(name)
        if info is not None and typing.get_origin(info.annotation) is Literal:
            values = typing.get_args(info.annotation)
            if len(values) == 1:
                return name, str(values[0])
    return None


def _field(name: str, annotation: object, depth: int) -> str:
    sub = summary(annotation, depth + 1) if depth < _DEPTH else ""
    return f"{name}: {sub}" if sub else name


def _model(model: type[BaseModel], depth: int, tag: str | None = None, skip: tuple[str, ...] = ()) -> str:
    if depth > 1 and model in _top_sections():  # the LLM settings: shown once, at the top
        return f"{{as in {_top_sections()[model]}}}"
    fields = []
    tagged = _tag_field(model)
    if tagged is not None:
        fields.append(f"{tagged[0]}: {tagged[1]}")
    elif tag is not None:
        fields.append(f"({tag})")
    for name, info in model.model_fields.items():
        if (tagged is None or name != tagged[0]) and name not in skip:
            fields.append(_field(name, info.annotation, depth))
    return "{" + ", ".join(fields) + "}"


def _union(members: list[object], depth: int) -> str:
    """Alternatives joined by `` | ``; the fields every tagged alternative has are said once, after them."""
    models = [_strip(m) for m in members]
    tagged = [
        (m, t)
        for m, t in models
        if isinstance(m, type) and issubclass(m, BaseModel) and _tag_field(m) and len(m.model_fields) > 1
    ]  # {kind: none} has nothing in common with the others
    common: tuple[str, ...] = ()
    if len(tagged) > 1:
        first = tagged[0][0]
        common = tuple(
            n
            for n in first.model_fields
            if n != _tag_field(first)[0]  # type: ignore[index]
            and all(n in m.model_fields for m, _ in tagged)
        )
    shown = []
    for m, t in models:
        if isinstance(m, type) and issubclass(m, BaseModel):
            shown.append(_model(m, depth, t, common if (m, t) in tagged else ()))
        else:
            shown.append(summary(m, depth) or "X")  # a plain value beside alternatives: a number, a string
    if all(s == "X" for s in shown):
        return ""
    out = "|".join(shown) if all("{" not in s for s in shown) else " | ".join(dict.fromkeys(shown))
    if common:
        first = tagged[0][0]
        out += f"; any {_tag_field(first)[0]}: " + ", ".join(  # type: ignore[index]
            _field(n, first.model_fields[n].annotation, depth) for n in common
        )
    return out


@functools.cache
def _top_sections() -> dict[type, str]:
    """Section models that are a top-level key's own type (``llm``), named where they recur deeper."""
    from ragsweep.config.sweep import SweepSpec

    out: dict[type, str] = {}
    for name, info in SweepSpec.model_fields.items():
        tp, _ = _strip(info.annotation)
        members = _members(tp)[0] if typing.get_origin(tp) in (Union, types.UnionType) else [tp]
        if len(members) == 1 and isinstance(members[0], type) and issubclass(members[0], BaseModel):
            out.setdefault(members[0], name)
    return out


def summary(tp: object, depth: int) -> str:
    """A field's shape: ``a|b`` (a literal), ``[...]`` (a list), ``{...}`` (a section), alternatives joined by
    `` | ``; empty for a plain value (a number, a string, a path)."""
    tp, tag = _strip(tp)
    origin = typing.get_origin(tp)
    if origin is Literal:
        return "|".join(str(v) for v in typing.get_args(tp))
    if origin in (Union, types.UnionType):
        return _union(_members(tp)[0], depth)
    if origin in (list, tuple):
        inner = summary(typing.get_args(tp)[0], depth)
        return f"[{inner}]" if inner else "[...]"
    if origin is dict:
        inner = summary(typing.get_args(tp)[1], depth)
        return "{NAME: " + (inner or "...") + "}"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _model(tp, depth, tag)
    return ""
