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


@pytest.mark.parametrize(
    "spec_cls",
    [*_kinds(RerankerSpec), *_kinds(PostprocessorSpec), *_kinds(QueryTransformSpec)],
    ids=lambda c: c.__name__,
)
def test_each_kind_names_a_builder_that_resolves(spec_cls):
    kind = typing.get_args(spec_cls.model_fields["kind"].annotation)[0]
    spec = spec_cls.model_construct(kind=kind)
    assert callable(builder(spec)), spec_cls.builder
    assert module_of(spec).__name__ == spec_cls.builder.split(":")[0]


def test_a_spec_without_a_builder_says_so():
    from ragsweep.config.rerankers import NoRerankSpec

    with pytest.raises(TypeError, match="names no builder"):
        builder(NoRerankSpec(kind="none"))


def test_kinds_chosen_by_name_resolve_to_what_builds_them():
    """Executors, search strategies and detectors are chosen by a plain name, each a ``components.Named`` line in
    its family's table: the schema's choices are the table's names, and each builder loads (on first use)."""
    import typing

    from ragsweep.config import SweepSpec
    from ragsweep.config.search import STRATEGIES, SearchSpec
    from ragsweep.config.services import EXECUTORS
    from ragsweep.groundedness.detectors.registry import ALL, DETECTORS, build, needs_llm, offline, with_llm
    from ragsweep.search.strategies.base import Strategy

    assert set(EXECUTORS) == set(typing.get_args(SweepSpec.model_fields["executor"].annotation))
    assert set(STRATEGIES) | {"auto"} == set(typing.get_args(SearchSpec.model_fields["strategy"].annotation))
    assert all(callable(kind.load()) for table in (EXECUTORS, DETECTORS) for kind in table.values())
    assert all(issubclass(kind.load(), Strategy) for kind in STRATEGIES.values())
    assert offline() == ["quip", "cosine"] and with_llm() == ["llm_faithfulness", "claims", "llm_correctness"]
    assert [n for n in ALL if needs_llm(n)] == with_llm()
    assert build("quip").name == "quip" and build("claims", llm=object()).name == "claims"
    with pytest.raises(ValueError, match="unknown detector 'nope'; known: quip, cosine"):
        build("nope")


def test_a_retriever_kind_is_built_from_what_it_searches():
    """Each kind declares its parts (fusion order); ``needs_embedding``, ``memory_parts`` and ``uses_graph`` and what
    the query transforms change derive from them."""
    from ragsweep.config import RM3Spec
    from ragsweep.config.llm_transforms import HyDESpec
    from ragsweep.config.retrievers import BM25Spec, FusionSpec, HybridKGSpec, KnowledgeGraphSpec, VectorSpec

    kinds = {
        c: c(kind=typing.get_args(c.model_fields["kind"].annotation)[0])
        for c in (BM25Spec, VectorSpec, FusionSpec, KnowledgeGraphSpec, HybridKGSpec)
    }
    assert {c.__name__: r.searches for c, r in kinds.items()} == {
        "BM25Spec": ("bm25",),
        "VectorSpec": ("vector",),
        "FusionSpec": ("vector", "bm25"),
        "KnowledgeGraphSpec": ("graph",),
        "HybridKGSpec": ("vector", "bm25", "graph"),
    }
    assert [r.kind for r in kinds.values() if r.needs_embedding] == ["vector", "fusion", "hybrid_kg"]
    assert [r.kind for r in kinds.values() if r.memory_parts == ("bm25",)] == ["bm25", "fusion", "hybrid_kg"]
    assert [r.kind for r in kinds.values() if r.uses_graph] == ["knowledge_graph", "hybrid_kg"]
    rm3, hyde = RM3Spec(kind="rm3"), HyDESpec(kind="hyde")
    assert [r.kind for r in kinds.values() if rm3.applies_to(r)] == ["bm25", "fusion", "hybrid_kg"]
    assert [r.kind for r in kinds.values() if hyde.applies_to(r)] == ["vector", "fusion", "hybrid_kg"]
