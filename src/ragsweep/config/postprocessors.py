"""Postprocessors (``postprocessors:``): shape the retrieved context after retrieval (and reranking),
before answering.

Each configuration meets each postprocessor that applies to it (its splitter, retriever and reranker;
``apply_to`` narrows the retrievers); ``none`` hands the generator what was retrieved, and its
configurations keep the ids and hashes they had before postprocessors existed.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Union

from pydantic import Field, model_validator

from ragsweep.config.base import Strict


class NoPostprocessSpec(Strict):
    """What was retrieved, as retrieved."""

    kind: Literal["none"]

    def label(self) -> str:
        return "none"


class _PostParams(Strict):
    """What every postprocessor has: a name, the retrievers it is combined with, what it needs (``requirement``,
    said when it applies to nothing) and the function that applies it (``builder``, ``ragsweep.components``)."""

    requirement: ClassVar[str] = "check apply_to"
    builder: ClassVar[str]
    name: str | None = None
    apply_to: list[str] | None = Field(
        None, description="labels of the retrievers it is combined with; default: every one it applies to"
    )

    def identity(self) -> dict:
        """What determines the shaped context (names and ``apply_to`` do not)."""
        return self.model_dump(mode="json", exclude={"name", "apply_to"})

    def _allows(self, retriever) -> bool:
        return self.apply_to is None or retriever.label() in self.apply_to


class SimilarityCutoffSpec(_PostParams):
    """Drop retrieved nodes scoring below ``cutoff`` (LlamaIndex ``SimilarityPostprocessor``). Scores are
    on each retriever's own scale, so ``absolute`` compares the cosine similarity of plain vector
    retrievers (by default only those, without a reranker; ``apply_to`` extends it to other retrievers,
    on their own scores) and ``relative`` keeps nodes scoring at least ``cutoff`` x the top score (any
    retriever whose scores are positive). An empty context is a legitimate outcome."""

    kind: Literal["similarity_cutoff"]
    builder: ClassVar[str] = "ragsweep.postprocessors.cutoff:apply"
    requirement: ClassVar[str] = (
        "mode absolute applies to vector retrievers without a reranker or transform; use "
        "mode: relative or name the retrievers in apply_to"
    )
    cutoff: float = Field(description="absolute: the lowest score kept; relative: the share of the top score, 0-1")
    mode: Literal["absolute", "relative"] = Field(
        "absolute", description="absolute: scores below cutoff go; relative: scores below cutoff x the top score go"
    )

    @model_validator(mode="after")
    def _relative_share(self) -> "SimilarityCutoffSpec":
        if self.mode == "relative" and not 0 < self.cutoff <= 1:
            raise ValueError("a relative cutoff is a share of the top score: give 0 < cutoff <= 1")
        return self

    def label(self) -> str:
        return self.name or ("cut" if self.mode == "absolute" else "rcut") + f"{self.cutoff:g}"

    def applies_to(self, splitter, retriever, reranker, transform=None) -> bool:
        if self.mode == "absolute" and self.apply_to is None:
            return retriever.kind == "vector" and reranker is None and transform is None
        return self._allows(retriever)


class LongContextReorderSpec(_PostParams):
    """Reorder the context so the best-ranked nodes sit at its start and end, the weakest in the middle
    (LlamaIndex ``LongContextReorder``; Liu et al. 2023, "Lost in the Middle", arXiv:2307.03172). Only
    the generator's order changes: retrieval metrics stay those of the ranking."""

    kind: Literal["long_context_reorder"]
    builder: ClassVar[str] = "ragsweep.postprocessors.reorder:apply"
    requirement: ClassVar[str] = "check apply_to"

    def label(self) -> str:
        return self.name or "reorder"

    def applies_to(self, splitter, retriever, reranker, transform=None) -> bool:
        return self._allows(retriever)


class SentenceWindowPostSpec(_PostParams):
    """Small-to-big: retrieve single sentences (splitter ``sentence_window``), answer from each one's
    window of ``window_size`` sentences either side (LlamaIndex ``SentenceWindowNodeParser`` +
    ``MetadataReplacementPostProcessor``); overlapping windows are merged into one source."""

    kind: Literal["sentence_window"]
    builder: ClassVar[str] = "ragsweep.postprocessors.sentence_window:apply"
    requirement: ClassVar[str] = "it needs a splitter of kind sentence_window"

    def label(self) -> str:
        return self.name or "window"

    def applies_to(self, splitter, retriever, reranker, transform=None) -> bool:
        return splitter.kind == "sentence_window" and self._allows(retriever)


class AutoMergingSpec(_PostParams):
    """Replace retrieved leaves by their parent when more than ``ratio`` of the parent's children were
    retrieved, level by level up (LlamaIndex ``AutoMergingRetriever`` over a ``HierarchicalNodeParser``
    tree; splitter ``hierarchical``)."""

    kind: Literal["auto_merging"]
    builder: ClassVar[str] = "ragsweep.postprocessors.auto_merging:apply"
    requirement: ClassVar[str] = "it needs a splitter of kind hierarchical"
    ratio: float = Field(
        0.5, ge=0, lt=1, description="share of a parent's children that merges them (LlamaIndex's simple_ratio_thresh)"
    )

    def label(self) -> str:
        return self.name or ("merge" if self.ratio == 0.5 else f"merge{self.ratio:g}")

    def applies_to(self, splitter, retriever, reranker, transform=None) -> bool:
        return splitter.kind == "hierarchical" and self._allows(retriever)


class MMRSpec(_PostParams):
    """Maximal marginal relevance (Carbonell & Goldstein 1998): re-rank the retrieved nodes so each next one is
    relevant and unlike those before it, ``relevance`` x its normalised score - (1 - ``relevance``) x its
    greatest similarity (term vectors' cosine) to a node already ranked. Fewer near-duplicate chunks in the
    context; the retrieval metrics are those of the new ranking. ``relevance: 1`` keeps the ranking."""

    kind: Literal["mmr"]
    builder: ClassVar[str] = "ragsweep.postprocessors.mmr:apply"
    relevance: float = Field(0.7, ge=0, le=1, description="MMR's lambda: the weight of relevance against novelty")

    def label(self) -> str:
        return self.name or ("mmr" if self.relevance == 0.7 else f"mmr{self.relevance:g}")

    def applies_to(self, splitter, retriever, reranker, transform=None) -> bool:
        return self._allows(retriever)


PostprocessorSpec = Annotated[
    Union[
        NoPostprocessSpec,
        SimilarityCutoffSpec,
        LongContextReorderSpec,
        SentenceWindowPostSpec,
        AutoMergingSpec,
        MMRSpec,
    ],
    Field(discriminator="kind"),
]
ActivePostprocessor = Union[
    SimilarityCutoffSpec, LongContextReorderSpec, SentenceWindowPostSpec, AutoMergingSpec, MMRSpec
]


def postprocessors_for(spec, splitter, retriever, reranker, transform=None) -> list:
    """The postprocessors combined with one (splitter, retriever, reranker, query transform): ``none``
    and those that apply."""
    return [
        p for p in spec.postprocessors if p.kind == "none" or p.applies_to(splitter, retriever, reranker, transform)
    ]


def check_postprocessors(spec) -> None:
    """Each postprocessor names only the spec's retrievers and applies to some configuration; every
    configuration meets at least one postprocessor (else it would vanish from the sweep)."""
    retrievers = {r.label() for r in spec.retrievers}
    combos = [
        (s, r, None if k.kind == "none" else k, None if t.kind == "none" else t)
        for s in spec.splitters
        for r in spec.retrievers
        for k in spec.rerankers_for(r.label())
        for t in spec.transforms_for(r)
    ]
    for p in spec.postprocessors:
        if p.kind == "none":
            continue
        unknown = sorted(set(p.apply_to or ()) - retrievers)
        if unknown:
            raise ValueError(
                f"postprocessors[{p.label()}].apply_to names {unknown[0]!r}, which is not among "
                f"retrievers {sorted(retrievers)}"
            )
        if not any(p.applies_to(*c) for c in combos):
            raise ValueError(f"postprocessors[{p.label()}]: applies to no configuration ({p.requirement})")
    for s, r, k, t in combos:
        if not postprocessors_for(spec, s, r, k, t):
            raise ValueError(
                f"splitters[{s.label()}] with retrievers[{r.label()}]: no postprocessor applies to "
                "it; add {kind: none} to postprocessors (or widen an apply_to)"
            )
