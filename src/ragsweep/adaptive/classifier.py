"""The question-complexity classifier: TF-IDF + logistic regression, as in HyPA-RAG (Kalra et al. 2024,
arXiv:2409.09046, which reports about 0.84 macro-F1 on three classes).

Deterministic: the training questions are put in id order first (so the input order does not
matter), lbfgs has no randomness, and the folds are stratified and seeded. The
validation questions' own classes are cross-fitted (each is predicted by a model trained on the
other folds), because the verdict chooses configurations on them: a model that had seen the question
would route it better than it routes an unseen one, and flatter the adaptive configuration's
validation mean.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence


@dataclass(frozen=True)
class ClassifierSettings:
    folds: int = 5
    C: float = 1.0
    ngram_max: int = 2
    min_df: int = 1
    class_weight: str = "balanced"  # or "none"
    seed: int = 0


class TooFewExamples(ValueError):
    """A class has fewer training questions than the classifier needs (2, for cross-fitting)."""


def build(settings: ClassifierSettings):
    """An unfitted scikit-learn pipeline: word n-gram TF-IDF, then L2 multinomial logistic regression
    (lbfgs: deterministic, and it handles three or more classes, which liblinear no longer does)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(
        TfidfVectorizer(lowercase=True, ngram_range=(1, settings.ngram_max), min_df=settings.min_df, sublinear_tf=True),
        LogisticRegression(
            C=settings.C,
            solver="lbfgs",
            random_state=settings.seed,
            max_iter=1000,
            class_weight=None if settings.class_weight == "none" else settings.class_weight,
        ),
    )


def _ordered(ids: Sequence[str], texts: Sequence[str], labels: Sequence[str]) -> tuple[list, list, list]:
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    return [ids[i] for i in order], [texts[i] for i in order], [labels[i] for i in order]


def check_counts(labels: Sequence[str], classes: Sequence[str]) -> None:
    """Every class needs at least two training questions (one per side of a fold)."""
    counts = {c: 0 for c in classes}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    few = sorted((n, c) for c, n in counts.items() if n < 2)
    if few:
        n, c = few[0]
        raise TooFewExamples(
            f"class {c!r} has {n} training question(s); the classifier needs at least 2 per "
            "class (label more validation questions, or merge classes in labels)"
        )


def fit(ids: Sequence[str], texts: Sequence[str], labels: Sequence[str], settings: ClassifierSettings):
    """The classifier trained on all the given questions (in id order)."""
    check_counts(labels, sorted(set(labels)))
    _, texts, labels = _ordered(ids, texts, labels)
    return build(settings).fit(texts, labels)


def folds(ids: Sequence[str], labels: Sequence[str], settings: ClassifierSettings) -> list[tuple[list[str], list[str]]]:
    """(training ids, held-out ids) per fold: stratified, seeded, over the questions in id order;
    ``settings.folds`` folds, fewer when the smallest class has fewer questions."""
    from sklearn.model_selection import StratifiedKFold

    ids, _, labels = _ordered(ids, list(ids), labels)
    smallest = min(labels.count(c) for c in set(labels))
    n = max(2, min(settings.folds, smallest))
    splitter = StratifiedKFold(n_splits=n, shuffle=True, random_state=settings.seed)
    return [([ids[i] for i in train], [ids[i] for i in held]) for train, held in splitter.split(ids, labels)]


def out_of_fold(
    ids: Sequence[str], texts: Sequence[str], labels: Sequence[str], settings: ClassifierSettings
) -> dict[str, str]:
    """Each question's class as predicted by a model trained on the other folds only."""
    check_counts(labels, sorted(set(labels)))
    text_of = dict(zip(ids, texts))
    label_of = dict(zip(ids, labels))
    out: dict[str, str] = {}
    for train, held in folds(ids, labels, settings):
        model = build(settings).fit([text_of[i] for i in train], [label_of[i] for i in train])
        out.update(zip(held, (str(p) for p in model.predict([text_of[i] for i in held]))))
    return out


def predict(model: Any, texts: Sequence[str]) -> list[str]:
    return [str(p) for p in model.predict(list(texts))] if texts else []
