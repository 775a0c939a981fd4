"""Every reranker, postprocessor and query transform kind names its builder on its spec class, and it resolves."""

from __future__ import annotations

import typing

import pytest

from ragsweep.components import builder, module_of
from ragsweep.config.postprocessors import PostprocessorSpec
from ragsweep.config.query_transforms import QueryTransformSpec
from ragsweep.config.rerankers import RerankerSpec


def _kinds(union) -> list[type]:
    members = typing.get_args(typing.get_args(union)[0])
    return [m for m in members if typing.get_args(m.model_fields["kind"].annotation) != ("none",)]


@pytest.mark.parametrize("spec_cls", [*_kinds(RerankerSpec), *_kinds(PostprocessorSpec), *_kinds(QueryTransformSpec)],
                         ids=lambda c: c.__name__)
def test_each_kind_names_a_builder_that_resolves(spec_cls):
    kind = typing.get_args(spec_cls.model_fields["kind"].annotation)[0]
    spec = spec_cls.model_construct(kind=kind)
    assert callable(builder(spec)), spec_cls.builder
    assert module_of(spec).__name__ == spec_cls.builder.split(":")[0]


def test_a_spec_without_a_builder_says_so():
    from ragsweep.config.rerankers import NoRerankSpec

    with pytest.raises(TypeError, match="names no builder"):
        builder(NoRerankSpec(kind="none"))
