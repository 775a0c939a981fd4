"""Adaptive retrieval (``adaptive:``): retrieval settings chosen per question by a complexity classifier.

HyPA-RAG (Kalra et al. 2024, "HyPA-RAG: A Hybrid Parameter Adaptive Retrieval-Augmented Generation
System for AI Legal and Policy Applications", arXiv:2409.09046) classifies each question's
complexity (TF-IDF + logistic regression) and retrieves more, and rewrites more, for harder
questions. Here a class names a ``top_k`` and, by label, one of the spec's rerankers and query
transforms; the classifier learns the classes from the validation questions' types (``labels``) or
from a labels file. Each entry is one more configuration per (splitter, embedding) of its retriever.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ragsweep.config.base import Strict

_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"


class AdaptiveClassSpec(Strict):
    """What one complexity class retrieves with; reranker and transform by label, ``none`` for neither."""

    top_k: int = Field(gt=0, le=1000, description="chunks retrieved for a question of this class")
    reranker: str = Field("none", description="label of one of the spec's rerankers, or none")
    query_transform: str = Field("none", description="label of one of the spec's query_transforms, or none")


class ClassifierSpec(Strict):
    """TF-IDF + logistic regression, as HyPA-RAG's complexity classifier; ``folds``: the cross-fitting
    of the validation questions' own classes (each is predicted by a model that never saw it)."""

    folds: int = Field(5, ge=2, le=20, description="stratified folds for the validation questions' classes")
    C: float = Field(1.0, gt=0, description="inverse L2 regularisation strength of the logistic regression")
    ngram_max: int = Field(2, ge=1, le=3, description="word n-grams 1..ngram_max")
    min_df: int = Field(1, ge=1, description="terms in fewer questions are dropped")
    class_weight: Literal["balanced", "none"] = Field(
        "balanced",
        description="balanced: classes weighted inversely to their frequency (on a few dozen "
        "questions an unweighted model predicts the majority class only)",
    )


class AdaptiveSpec(Strict):
    name: str | None = None
    retriever: str = Field(description="label of one of the spec's retrievers")
    labels: dict[str, list[str]] | None = Field(
        None,
        description="class -> the question types (or labels_file labels) it covers; default: each "
        "class covers the type of its own name",
    )
    labels_file: Path | None = Field(
        None, description='JSON lines {"qid": ..., "label": ...}: labels instead of the dataset\'s question types'
    )
    default_class: str | None = Field(None, description="class of questions whose type or label maps to none")
    classes: dict[str, AdaptiveClassSpec] = Field(
        min_length=2, max_length=10, description="class name -> what its questions retrieve with"
    )
    classifier: ClassifierSpec = Field(
        ClassifierSpec(), description="the question classifier, trained on the validation questions"
    )

    @field_validator("name")
    @classmethod
    def _safe_name(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(_NAME, v):
            raise ValueError("name must be letters, digits, '.', '_' or '-' (it is part of configuration ids)")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "AdaptiveSpec":
        for c in self.classes:
            if not re.fullmatch(_NAME, c):
                raise ValueError(f"classes: {c!r}: class names must be letters, digits, '.', '_' or '-'")
        unknown = sorted(set(self.labels or {}) - set(self.classes))
        if unknown:
            raise ValueError(f"labels names class {unknown[0]!r}, which is not among classes {sorted(self.classes)}")
        seen: dict[str, str] = {}
        labels = self.labels or {}
        for c in sorted(labels):
            for t in labels[c]:
                if t in seen:
                    raise ValueError(f"labels: type {t!r} is listed under both {seen[t]!r} and {c!r}; list it once")
                seen[t] = c
        if self.default_class is not None and self.default_class not in self.classes:
            raise ValueError(f"default_class {self.default_class!r} is not among classes {sorted(self.classes)}")
        return self

    def label(self) -> str:
        """The configuration id's tail: ``adaptive`` or ``adaptive-NAME``."""
        return "adaptive" + (f"-{self.name}" if self.name else "")

    def type_to_class(self) -> dict[str, str]:
        """Question type (or file label) -> class; without ``labels``, each class is its own type."""
        if self.labels is None:
            return {c: c for c in self.classes}
        return {t: c for c, types in self.labels.items() for t in types}


def check_adaptive(spec) -> None:
    """Cross-section checks: the retriever, rerankers and transforms an entry names exist, a transform
    can change that retriever, a reranker fills the class's top_k; entries have distinct labels."""
    retrievers = {r.label(): r for r in spec.retrievers}
    rerankers = {r.label(): r for r in spec.rerankers}
    transforms = {t.label(): t for t in spec.query_transforms}
    labels = [(a.retriever, a.label()) for a in spec.adaptive]
    for i, a in enumerate(spec.adaptive):
        where = f"adaptive[{i}]"
        if labels.count((a.retriever, a.label())) > 1:
            raise ValueError(
                f"{where}: two adaptive entries over retriever {a.retriever!r} share the label "
                f"{a.label()!r}; give one a distinct 'name'"
            )
        retriever = retrievers.get(a.retriever)
        if retriever is None:
            raise ValueError(f"{where}.retriever: {a.retriever!r} is not among retrievers {sorted(retrievers)}")
        for c in sorted(a.classes):
            cls = a.classes[c]
            if cls.reranker != "none" and cls.reranker not in rerankers:
                raise ValueError(
                    f"{where}.classes.{c}.reranker: {cls.reranker!r} is not among rerankers "
                    f"{sorted(k for k in rerankers if k != 'none')}; add it to rerankers or use none"
                )
            if cls.query_transform != "none" and cls.query_transform not in transforms:
                raise ValueError(
                    f"{where}.classes.{c}.query_transform: {cls.query_transform!r} is not among "
                    f"query_transforms {sorted(k for k in transforms if k != 'none')}; add it to "
                    "query_transforms or use none"
                )
            if cls.reranker != "none" and rerankers[cls.reranker].candidates < cls.top_k:
                raise ValueError(
                    f"{where}.classes.{c}.top_k ({cls.top_k}) is larger than reranker "
                    f"{cls.reranker!r}'s candidates ({rerankers[cls.reranker].candidates})"
                )
            if cls.query_transform != "none":
                t = transforms[cls.query_transform]
                free = t.model_copy(update={"apply_to": None}) if getattr(t, "apply_to", None) else t
                if not free.applies_to(retriever):
                    raise ValueError(
                        f"{where}.classes.{c}.query_transform: {cls.query_transform!r} cannot "
                        f"transform retriever {a.retriever!r} ({retriever.kind})"
                    )


def adaptive_depth(spec) -> list[int]:
    """Every class's top_k: each base index is queried deep enough for the largest."""
    return [c.top_k for a in spec.adaptive for c in a.classes.values()]
