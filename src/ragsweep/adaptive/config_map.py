"""An ``adaptive:`` entry resolved against the spec: each class's top_k, reranker and query transform
as the objects the retrievers factory takes, and what decides the classifier (its labels, settings
and the validation questions it learns from), which is part of the configuration's hash."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from ragsweep.config import ActiveReranker, ActiveTransform, SweepSpec
from ragsweep.config.adaptive import AdaptiveSpec
from ragsweep.config.base import absent


@dataclass(frozen=True)
class ClassRoute:
    """What questions of one class are retrieved with."""

    name: str
    top_k: int
    reranker: ActiveReranker | None
    transform: ActiveTransform | None


@dataclass(frozen=True)
class AdaptiveMap:
    index: int  # position in the spec's ``adaptive`` list, for messages (``adaptive[0].labels``)
    spec: AdaptiveSpec
    routes: tuple[ClassRoute, ...]  # in class-name order
    classifier_key: tuple[tuple[str, object], ...]  # what decides the predicted classes (hashable, ordered)

    @property
    def where(self) -> str:
        return f"adaptive[{self.index}]"

    @property
    def top_k_max(self) -> int:
        return max(r.top_k for r in self.routes)

    def route(self, cls: str) -> ClassRoute:
        return next(r for r in self.routes if r.name == cls)

    def classifier_identity(self) -> dict:
        return dict(self.classifier_key)


def file_sha256(path: Path | None) -> str | None:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path is not None else None


def resolve(spec: SweepSpec, index: int) -> AdaptiveMap:
    """The spec's ``adaptive[index]`` with its labels looked up (``check_adaptive`` vouched for them)."""
    a = spec.adaptive[index]
    rerankers = {r.label(): cast(ActiveReranker, r) for r in spec.rerankers if not absent(r)}
    transforms = {t.label(): cast(ActiveTransform, t) for t in spec.query_transforms if not absent(t)}
    routes = tuple(
        ClassRoute(
            c, a.classes[c].top_k, rerankers.get(a.classes[c].reranker), transforms.get(a.classes[c].query_transform)
        )
        for c in sorted(a.classes)
    )
    key = (
        ("labels", tuple(sorted(a.type_to_class().items()))),
        ("labels_file_sha256", file_sha256(a.labels_file)),
        ("default_class", a.default_class),
        ("classifier", tuple(sorted(a.classifier.model_dump(mode="json").items()))),
        ("split", tuple(sorted({"seed": spec.seed, **spec.split.model_dump(mode="json")}.items()))),
    )
    return AdaptiveMap(index, a, routes, key)
