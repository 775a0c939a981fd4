"""The whole spec: one pydantic schema every stage reads, with the checks that span sections."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, field_validator, model_validator

from ragsweep.config.adaptive import AdaptiveSpec, adaptive_depth, check_adaptive
from ragsweep.config.base import Strict
from ragsweep.config.baselines import BASELINE_HELP, BaselineName
from ragsweep.config.chunk_context import context_llm, uses_llm
from ragsweep.config.dataset import DatasetSpec
from ragsweep.config.embeddings import EmbeddingSpec, HFEmbeddingSpec
from ragsweep.config.evaluation import ScoringSpec, SplitSpec, Stage2Spec
from ragsweep.config.generate import GenerateSpec
from ragsweep.config.history import HistorySpec, NoHistorySpec
from ragsweep.config.llm import ExtractiveGeneratorSpec, GeneratorSpec, LLMSpec, PriceSpec
from ragsweep.config.postprocessors import NoPostprocessSpec, PostprocessorSpec, check_postprocessors
from ragsweep.config.query_transforms import NoTransformSpec, QueryTransformSpec
from ragsweep.config.rerankers import NoRerankSpec, RerankerSpec
from ragsweep.config.retrievers import GraphParams, RetrieverSpec
from ragsweep.config.search import SearchSpec, parse_search
from ragsweep.config.services import EXECUTOR_NAMES, Neo4jSpec, RaySpec, TrackingSpec, VectorStoreSpec
from ragsweep.config.splitters import SemanticSplitterSpec, SplitterSpec
from ragsweep.config.tracing import TracingSpec


# the default lists, typed as the fields are (a lambda's list of one kind is not a list of the union)
def _no_transform() -> list[QueryTransformSpec]:
    return [NoTransformSpec(kind="none")]


def _no_rerank() -> list[RerankerSpec]:
    return [NoRerankSpec(kind="none")]


def _no_postprocess() -> list[PostprocessorSpec]:
    return [NoPostprocessSpec(kind="none")]


def _no_history() -> list[HistorySpec]:
    return [NoHistorySpec(kind="none")]


class SweepSpec(Strict):
    name: str = Field("sweep", description="the sweep's name: its run directory is output_dir/name")
    seed: int = Field(0, description="seeds the question split, bootstrap resampling, searches and generation")
    dataset: DatasetSpec = Field(DatasetSpec(), description="the corpus and the questions with their gold evidence")
    splitters: list[SplitterSpec] = Field(min_length=1, description="how documents are cut into chunks: one grid axis")
    embeddings: list[EmbeddingSpec] = Field(
        default_factory=lambda: [HFEmbeddingSpec()],  # type: ignore[arg-type]
        description="the embedding models of vector parts: one grid axis (BM25 and graphs need none)",
    )
    retrievers: list[RetrieverSpec] = Field(min_length=1, description="how chunks are found: one grid axis")
    top_k: list[int] = Field(
        [5],
        min_length=1,
        description="how many chunks each configuration hands over: one "
        "grid axis (each index is searched once, at the largest)",
    )
    query_transforms: list[QueryTransformSpec] = Field(
        default_factory=_no_transform,
        min_length=1,
        description="each retriever with each transform it can use; kind none: the question as asked",
    )
    rerankers: list[RerankerSpec] = Field(
        default_factory=_no_rerank,
        min_length=1,
        description="each retriever with each reranker; kind none: the retriever's own order",
    )
    postprocessors: list[PostprocessorSpec] = Field(
        default_factory=_no_postprocess,
        min_length=1,
        description="each configuration with each postprocessor that applies; kind none: the context as retrieved",
    )
    history: list[HistorySpec] = Field(
        default_factory=_no_history,
        min_length=1,
        description="how a follow-up question uses the conversation before it: one grid axis; kind none: the "
        "follow-up alone (concat, condense, condense_plus_context: docs/components.md)",
    )
    adaptive: list[AdaptiveSpec] = Field(
        default_factory=list,
        description="configurations whose top_k, reranker and transform follow each "
        "question's predicted complexity class (HyPA-RAG)",
    )
    vector_store: VectorStoreSpec = Field(
        VectorStoreSpec(), description="where vectors live: embedded Chroma (default) or a Chroma server"
    )
    executor: EXECUTOR_NAMES = Field("local", description="run the units in this process or as Ray tasks")
    ray: RaySpec = Field(RaySpec(), description="the Ray cluster (executor: ray)")
    neo4j: Neo4jSpec | None = Field(None, description="the Neo4j server for retrievers with store: neo4j")
    generator: GeneratorSpec = Field(
        ExtractiveGeneratorSpec(), description="what answers: the offline extractive baseline or an LLM"
    )
    llm: LLMSpec | None = Field(None, description="the LLM for generation, query rewrites and (default) judges")
    prices: dict[str, PriceSpec] = Field(default_factory=dict, description="USD per million tokens, by model")
    split: SplitSpec = Field(SplitSpec(), description="validation questions (choose on) and test questions (report on)")
    stage2: Stage2Spec | None = Field(
        None, description="LLM judges on the configurations stage 1 selects; none: stage 1 only"
    )
    scoring: ScoringSpec = Field(
        default_factory=ScoringSpec, description="BERTScore, bootstrap CIs, the verdict's metric"
    )
    search: SearchSpec = Field(
        default_factory=SearchSpec,
        description="grid (every configuration) or a budgeted search: random, greedy, tpe, nsga2",
    )
    generate: GenerateSpec | None = Field(None, description="test-set generation from the corpus (ragsweep generate)")
    baselines: list[BaselineName] = Field(default_factory=list, description=BASELINE_HELP)
    tracking: TrackingSpec = Field(
        TrackingSpec(), description="experiment tracking: the MLflow server a finished run is logged to"
    )
    tracing: TracingSpec = Field(
        TracingSpec(), description="OpenTelemetry spans of each question's retrieval and answer, and each judge call"
    )
    cache_dir: Path | None = Field(default=None, description="default: .ragsweep/cache")
    output_dir: Path = Field(Path("runs"), description="where run directories are written")

    @field_validator("top_k")
    @classmethod
    def _positive_unique(cls, v: list[int]) -> list[int]:
        if any(k <= 0 for k in v):
            raise ValueError("every top_k must be a positive integer")
        if len(set(v)) != len(v):
            raise ValueError("top_k values must be distinct")
        return sorted(v)

    @field_validator("baselines")
    @classmethod
    def _distinct_baselines(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("each baseline at most once")
        return v

    @field_validator("search", mode="before")
    @classmethod
    def _search_shorthand(cls, v):
        return parse_search(v)

    @field_validator("name")
    @classmethod
    def _safe_name(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", v):
            raise ValueError("name must be letters, digits, '.', '_' or '-' (it names the run directory)")
        return v

    def default_run_dir(self) -> Path:
        """Where the run goes unless told otherwise: ``output_dir/name``."""
        return self.output_dir / self.name

    @property
    def retrieval_depth(self) -> int:
        """Results each base index returns per question: the largest top_k, reranker candidates or
        feedback documents."""
        return max(
            [
                *self.top_k,
                *(r.candidates for r in self.rerankers if r.kind != "none"),
                *(t.fb_docs for t in self.query_transforms if t.kind == "rm3"),
                *adaptive_depth(self),
            ]
        )

    @property
    def uses_neo4j(self) -> bool:
        return any(getattr(r, "store", None) == "neo4j" for r in self.retrievers)

    @model_validator(mode="after")
    def _unique_labels(self) -> "SweepSpec":
        for field_name, items in (
            ("splitters", self.splitters),
            ("embeddings", self.embeddings),
            ("retrievers", self.retrievers),
            ("query_transforms", self.query_transforms),
            ("rerankers", self.rerankers),
            ("postprocessors", self.postprocessors),
            ("history", self.history),
        ):
            labels = [i.label() for i in items]
            dupes = sorted({x for x in labels if labels.count(x) > 1})
            if dupes and dupes[0] == "none":
                raise ValueError(f"{field_name}: list {{kind: none}} once")
            if dupes:
                raise ValueError(
                    f"{field_name}: two entries share the label {dupes[0]!r}; give one of them a distinct 'name'"
                )
            if any(not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", x) for x in labels):
                raise ValueError(f"{field_name}: names must be letters, digits, '.', '_' or '-'")
        emb_labels = {e.label() for e in self.embeddings}
        for s in self.splitters:
            if isinstance(s, SemanticSplitterSpec) and s.embedding is not None and s.embedding not in emb_labels:
                raise ValueError(
                    f"splitters: semantic splitter names embedding {s.embedding!r}, which is not among "
                    f"embeddings {sorted(emb_labels)}"
                )
        needs_emb = any(r.needs_embedding for r in self.retrievers) or any(
            isinstance(s, SemanticSplitterSpec) for s in self.splitters
        )
        if needs_emb and not self.embeddings:
            raise ValueError(
                "embeddings: a vector, fusion or hybrid_kg retriever or a semantic splitter needs at "
                "least one embedding"
            )
        self._check_rerankers()
        check_postprocessors(self)
        check_adaptive(self)
        graph_specs = [r for r in self.retrievers if isinstance(r, GraphParams)]
        if self.uses_neo4j and self.neo4j is None:
            raise ValueError(
                "retrievers: store neo4j needs a 'neo4j' section (url, username_env, password_env); "
                "scripts/neo4j.sh start runs one on loopback"
            )
        for i, sp in enumerate(self.splitters):
            llm = context_llm(sp.context, self.llm)
            if llm is None or not uses_llm(sp.context):  # an LLM only for an LLM context (context_llm's None else)
                continue
            need = sp.context.document_tokens + sp.context.max_tokens + _chunk_tokens(sp) + 128  # + the template
            if need > llm.context_window:
                raise ValueError(
                    f"splitters[{i}].context.document_tokens ({sp.context.document_tokens}) with the "
                    f"chunk ({_chunk_tokens(sp)} tokens), the prompt and the reply ({need} tokens) does "
                    f"not fit the LLM's context_window ({llm.context_window}); lower document_tokens "
                    "or raise context_window"
                )
        if self.llm is None:
            for i, sp in enumerate(self.splitters):
                if uses_llm(sp.context) and sp.context.llm is None:
                    raise ValueError(
                        f"splitters[{i}].context: kind llm asks an LLM for each chunk's context; add an "
                        "'llm' section or context.llm (model, base_url, api_key_env), or use title "
                        "(offline)"
                    )
            if any(r.uses_llm for r in graph_specs):
                raise ValueError(
                    "retrievers: an LLM path extractor needs an 'llm' section; "
                    "or use extractor: legal_patterns (offline)"
                )
            if self.generator.calls_llm:
                raise ValueError("generator: kind llm needs an 'llm' section (model, base_url, api_key_env)")
            if any(getattr(r, "num_queries", 1) > 1 for r in self.retrievers):
                raise ValueError(
                    "retrievers: fusion with num_queries > 1 writes query rewrites with an LLM; "
                    "add an 'llm' section or set num_queries: 1"
                )
            if any(getattr(r, "uses_llm", False) for r in self.rerankers):
                raise ValueError(
                    "rerankers: kind llm reranks with an LLM; add an 'llm' section or use "
                    "late_interaction (offline) or cross_encoder"
                )
            llm_transform = next((t for t in self.query_transforms if getattr(t, "uses_llm", False)), None)
            if llm_transform is not None:
                raise ValueError(
                    f"query_transforms[{llm_transform.label()}]: kind {llm_transform.kind} asks an LLM; "
                    "add an 'llm' section (model, base_url, api_key_env) or use rm3 (offline)"
                )
            llm_history = next((h for h in self.history if getattr(h, "uses_llm", False)), None)
            if llm_history is not None:
                raise ValueError(
                    f"history[{llm_history.label()}]: kind {llm_history.kind} rewrites follow-ups with an LLM; "
                    "add an 'llm' section (model, base_url, api_key_env) or use concat (offline)"
                )
            if self.stage2 is not None and self.stage2.llm is None:
                raise ValueError("stage2: the judges need an LLM; add an 'llm' section or stage2.llm")
            if self.generate is not None and self.generate.generator == "llm" and self.generate.llm is None:
                raise ValueError(
                    "generate: generator llm writes questions with an LLM; add an 'llm' section or "
                    "generate.llm, or use generator: offline"
                )
        return self

    def _check_rerankers(self) -> None:
        """Each reranker reorders at least the largest top_k; rerankers and transforms name only
        retrievers the spec has, and a transform has one it applies to."""
        retrievers = {r.label() for r in self.retrievers}
        for r in self.rerankers:
            if r.kind == "none":
                continue
            if r.candidates < max(self.top_k):
                raise ValueError(
                    f"rerankers[{r.label()}].candidates ({r.candidates}) is smaller than the largest "
                    f"top_k ({max(self.top_k)}); raise candidates so a reranker can fill every top_k"
                )
            _check_apply_to("rerankers", r, retrievers)
        for t in self.query_transforms:
            if t.kind == "none":
                continue
            _check_apply_to("query_transforms", t, retrievers)
            if not any(t.applies_to(r) for r in self.retrievers):
                raise ValueError(f"query_transforms[{t.label()}]: no retriever it can expand ({t.requirement})")
        for ret in self.retrievers:  # a retriever that meets no variant would vanish from the sweep
            if not self.transforms_for(ret):
                raise ValueError(
                    f"retrievers[{ret.label()}]: no query transform applies to it; add {{kind: none}} "
                    "to query_transforms (or widen an apply_to)"
                )
            if not self.rerankers_for(ret.label()):
                raise ValueError(
                    f"retrievers[{ret.label()}]: no reranker applies to it; add {{kind: none}} to "
                    "rerankers (or widen an apply_to)"
                )

    def transforms_for(self, retriever) -> list:
        """The query transforms combined with one retriever: ``none`` and those that apply to it."""
        return [t for t in self.query_transforms if t.kind == "none" or t.applies_to(retriever)]

    def rerankers_for(self, retriever_label: str) -> list:
        """The rerankers combined with one retriever: ``none`` and those whose ``apply_to`` allows it."""
        return [r for r in self.rerankers if r.kind == "none" or r.apply_to is None or retriever_label in r.apply_to]


def _chunk_tokens(splitter) -> int:
    """A splitter's largest chunk in tokens, where its settings say it (token, sentence, hierarchical);
    512 otherwise (a semantic, pattern or character-sized chunk has no fixed token size)."""
    if splitter.kind in ("token", "sentence"):
        return splitter.chunk_size
    if splitter.kind == "hierarchical":
        return max(splitter.chunk_sizes)
    return 512


def _check_apply_to(section: str, entry, retrievers: set[str]) -> None:
    """An ``apply_to`` names only labels of the spec's retrievers."""
    unknown = sorted(set(entry.apply_to or ()) - retrievers)
    if unknown:
        raise ValueError(
            f"{section}[{entry.label()}].apply_to names {unknown[0]!r}, which is not among "
            f"retrievers {sorted(retrievers)}"
        )
