"""Retrievers (``retrievers:``): BM25, TF-IDF, vector, fusion, knowledge graph, hybrid.

A kind is declared once, here: its spec class (kind, fields, label), the index parts it ``searches``, and for a
part built in memory from a splitter's chunks (BM25, TF-IDF) the function that builds it (``part_builder``), and
its place in ``RetrieverSpec``. The plan, the executors, ``ask`` and ``retrievers.factory`` read these alone:
``MEMORY_PARTS`` (part name -> builder) derives from the union.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar, Literal, Union, get_args

from pydantic import Field, field_validator

from ragsweep.config.base import Strict, check_weights
from ragsweep.metrics.catalogue import names

if TYPE_CHECKING:  # the catalogue's tunable names, known only at run time: any name to a type checker
    TUNE_METRICS = str
else:
    TUNE_METRICS = Literal[tuple(names(tunable=True))]


class _Retriever(Strict):
    """A retriever kind declares what it searches (``searches``: ``vector``, ``graph`` or a part built in memory,
    ``bm25``, ``tfidf``): one part is searched alone, several are fused in that order (the order of ``weights``).
    The plan, the executors and ``ask`` open only those indexes for it; ``retrievers.factory`` builds it from them.

    ``part_builder``: a kind that searches one part of its own, built in memory from a splitter's chunks, names
    the function that builds it (``"module:function"``, ``fn(chunks, k_max)`` -> a LlamaIndex retriever); the
    vector and graph parts are built by units of their own (``index``, ``graph``)."""

    searches: ClassVar[tuple[str, ...]] = ()
    part_builder: ClassVar[str | None] = None

    @property
    def needs_embedding(self) -> bool:
        return "vector" in self.searches

    @property
    def memory_parts(self) -> tuple[str, ...]:
        """The parts it searches that are built in memory from the chunks, once per splitter and process."""
        return tuple(p for p in self.searches if p in MEMORY_PARTS)

    @property
    def uses_graph(self) -> bool:
        return "graph" in self.searches


class _Tunable(_Retriever):
    """Fusion weights given, or ``tune``d: chosen on the validation questions from a grid over the
    simplex (weights in steps of 1 / (tune_steps - 1), summing to 1), by a retrieval metric of the
    fused ranking at the configuration's top_k; the test questions are answered with them."""

    tune_steps: int = Field(5, ge=2, le=21, description="grid points per weight when weights: tune")
    tune_metric: TUNE_METRICS | None = Field(
        None, description="retrieval metric tuned on; default: scoring.metric if it is one, else ndcg"
    )
    if TYPE_CHECKING:  # each subclass declares its own field (2 or 3 weights)
        weights: tuple[float, ...] | Literal["tune"] | None

    @property
    def tuned(self) -> bool:
        return self.weights == "tune"

    def _weights_suffix(self) -> str:
        if self.weights is None:
            return ""
        if self.weights == "tune":
            return "-wtune" + (f"{self.tune_steps}" if self.tune_steps != 5 else "")
        return "-w" + "-".join(f"{w:g}" for w in self.weights)


def _check_weights_or_tune(v):
    return v if v == "tune" else check_weights(v)


class BM25Spec(_Retriever):
    """Okapi BM25 over the chunks (Robertson & Zaragoza 2009; ``llama-index-retrievers-bm25``): lexical, needs
    no embedding, so a sweep does not multiply it by the embeddings."""

    kind: Literal["bm25"]
    searches: ClassVar[tuple[str, ...]] = ("bm25",)
    part_builder: ClassVar[str | None] = "ragsweep.retrievers.factory:bm25_retriever"
    name: str | None = None

    def label(self) -> str:
        return self.name or "bm25"


class TfidfSpec(_Retriever):
    """TF-IDF cosine over the chunks (Salton & Buckley 1988; scikit-learn, unigrams and bigrams, sublinear term
    frequency): lexical like BM25, without its term saturation and length normalisation; needs no embedding."""

    kind: Literal["tfidf"]
    searches: ClassVar[tuple[str, ...]] = ("tfidf",)
    part_builder: ClassVar[str | None] = "ragsweep.retrievers.tfidf:build_part"
    name: str | None = None

    def label(self) -> str:
        return self.name or "tfidf"


class VectorSpec(_Retriever):
    """Dense retrieval: the chunks nearest the question's embedding by cosine similarity, in a Chroma collection
    per (splitter, embedding)."""

    kind: Literal["vector"]
    searches: ClassVar[tuple[str, ...]] = ("vector",)
    name: str | None = None

    def label(self) -> str:
        return self.name or "vector"


_FUSION_LABELS = {"reciprocal_rerank": "fusion", "relative_score": "fusion-rel", "dist_based_score": "fusion-dist"}


class FusionSpec(_Tunable):
    """QueryFusionRetriever over vector + BM25; one query by default, ``num_queries > 1`` adds
    LLM-written rewrites of the question (needs the spec's ``llm``)."""

    kind: Literal["fusion"]
    searches: ClassVar[tuple[str, ...]] = ("vector", "bm25")
    name: str | None = None
    mode: Literal["reciprocal_rerank", "relative_score", "dist_based_score"] = Field(
        "reciprocal_rerank",
        description="LlamaIndex's fusion mode: reciprocal rank fusion, or min-max (relative) or "
        "distribution-based score normalisation",
    )
    weights: tuple[float, float] | Literal["tune"] | None = Field(
        default=None, description="[vector, bm25], or tune: chosen on the validation questions"
    )
    num_queries: int = Field(1, ge=1, le=10, description="queries per question, the original included")

    _non_negative = field_validator("weights")(classmethod(lambda cls, v: _check_weights_or_tune(v)))

    def label(self) -> str:
        if self.name:
            return self.name
        base = _FUSION_LABELS[self.mode] + self._weights_suffix()
        if self.num_queries > 1:
            base += f"-q{self.num_queries}"
        return base


_EXTRACTOR_LABELS = {"legal_patterns": "", "llm_simple": "-llm", "llm_dynamic": "-llmdyn"}


class GraphParams(_Retriever):
    """A property graph per splitter (cached per corpus, splitter and extractor) and HyPA-RAG's
    retrieval parameters (Kalra et al. 2024, arXiv:2409.09046): keywords per query, path depth and
    knowledge sequence length."""

    name: str | None = None
    store: Literal["simple", "neo4j"] = Field(
        "simple", description="simple: LlamaIndex SimplePropertyGraphStore in the cache; neo4j: the spec's neo4j server"
    )
    extractor: Literal["legal_patterns", "llm_simple", "llm_dynamic"] = Field(
        "legal_patterns",
        description="legal_patterns: offline heuristic baseline; llm_simple/llm_dynamic: "
        "LlamaIndex's Simple/DynamicLLMPathExtractor with the spec's llm",
    )
    max_triplets_per_chunk: int = Field(20, gt=0, le=200, description="extraction limit per chunk")
    max_keywords: int = Field(10, gt=0, le=100, description="query entities used as graph entry points")
    path_depth: int = Field(1, gt=0, le=4, description="hops followed from a query entity")
    max_triplets: int = Field(30, gt=0, le=1000, description="knowledge sequence length: triplets kept per query")

    def _graph_suffix(self) -> str:
        return (
            ("-neo4j" if self.store == "neo4j" else "")
            + _EXTRACTOR_LABELS[self.extractor]
            + (f"-d{self.path_depth}" if self.path_depth != 1 else "")
        )

    @property
    def uses_llm(self) -> bool:
        """An LLM path extractor builds this graph."""
        return self.extractor != "legal_patterns"

    def graph_identity(self) -> dict:
        """What determines the extracted graph (not the store it is served from, nor retrieval)."""
        return {"extractor": self.extractor, "max_triplets_per_chunk": self.max_triplets_per_chunk}


class KnowledgeGraphSpec(GraphParams):
    """Knowledge-graph retrieval: query entities -> paths -> the chunks the triplets came from."""

    kind: Literal["knowledge_graph"]
    searches: ClassVar[tuple[str, ...]] = ("graph",)

    def label(self) -> str:
        return self.name or "kg" + self._graph_suffix()


class HybridKGSpec(GraphParams, _Tunable):
    """HyPA-RAG's hybrid: vector + BM25 + knowledge graph fused by reciprocal rank."""

    kind: Literal["hybrid_kg"]
    searches: ClassVar[tuple[str, ...]] = ("vector", "bm25", "graph")
    weights: tuple[float, float, float] | Literal["tune"] | None = Field(
        default=None, description="[vector, bm25, graph], or tune: chosen on the validation questions"
    )

    _non_negative = field_validator("weights")(classmethod(lambda cls, v: _check_weights_or_tune(v)))

    def label(self) -> str:
        if self.name:
            return self.name
        return "hybrid-kg" + self._graph_suffix() + self._weights_suffix()


GraphRetrieverSpec = Union[KnowledgeGraphSpec, HybridKGSpec]

RetrieverSpec = Annotated[
    Union[BM25Spec, TfidfSpec, VectorSpec, FusionSpec, KnowledgeGraphSpec, HybridKGSpec], Field(discriminator="kind")
]

# part name -> the function that builds it in memory from a splitter's chunks, from the kinds' declarations
MEMORY_PARTS: dict[str, str] = {
    kind.searches[0]: kind.part_builder for kind in get_args(get_args(RetrieverSpec)[0]) if kind.part_builder
}
