"""The tags of the schema's discriminated unions, read from the schema itself.

Every section with alternatives (a splitter, a retriever, a corpus format, ...) is a union told apart by a
tag: a ``Literal`` ``kind`` or ``format`` field named by ``Field(discriminator=...)``, or a ``Tag`` of a
callable ``Discriminator``. Pydantic inserts that tag in an error's location (``splitters.0.pattern.x``);
``loading`` drops it from the one-line error. A new component kind is tagged by its own spec class, so the
set follows without a list to keep.
"""

from __future__ import annotations

import functools
import types
import typing
from typing import Annotated, Literal, Union

from pydantic import BaseModel, Tag


@functools.cache
def union_tags() -> frozenset[str]:
    """Every tag a discriminated union of ``SweepSpec`` (at any depth) can take."""
    from ragsweep.config.sweep import SweepSpec

    tags: set[str] = set()
    seen: set[type] = set()

    def literal_values(model: type[BaseModel], field: str) -> list[str]:
        info = model.model_fields.get(field)
        if info is None or typing.get_origin(info.annotation) is not Literal:
            return []
        return [v for v in typing.get_args(info.annotation) if isinstance(v, str)]

    def visit(tp: object, discriminator: str | None = None) -> None:
        origin = typing.get_origin(tp)
        if origin is Annotated:
            base, *meta = typing.get_args(tp)
            for m in meta:
                if isinstance(m, Tag):
                    tags.add(m.tag)
                if isinstance(getattr(m, "discriminator", None), str):
                    discriminator = m.discriminator
            visit(base, discriminator)
        elif origin in (Union, types.UnionType):
            for arg in typing.get_args(tp):
                visit(arg, discriminator)
        elif origin is not None:  # list[...], dict[...], tuple[...]: what they hold
            for arg in typing.get_args(tp):
                visit(arg)
        elif isinstance(tp, type) and issubclass(tp, BaseModel):
            if discriminator:
                tags.update(literal_values(tp, discriminator))
            if tp in seen:
                return
            seen.add(tp)
            for info in tp.model_fields.values():
                d = info.discriminator if isinstance(info.discriminator, str) else None
                visit(info.annotation, d)

    visit(SweepSpec)
    return frozenset(tags)
