"""Adaptive retrieval in the answer stage (HyPA-RAG; Kalra et al. 2024, arXiv:2409.09046): a
question-complexity classifier trained once per run on the validation questions, and per question the
(top_k, reranker, transform) of its predicted class, served by the memoised base retrievers.

The test questions are classified by the model trained on every validation question; each validation
question by a model trained on the other folds (cross-fitting), so the verdict, which chooses on the
validation questions, does not see routing better than a new question would get. Training uses the
whole dataset's validation questions whatever ``--limit`` says, so a resumed run routes the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from ragsweep.adaptive.config_map import AdaptiveMap
from ragsweep.datasets.types import Question
from ragsweep.errors import RagsweepError


@dataclass(frozen=True)
class Classified:
    """The classifier of one ``adaptive`` entry and its predictions for the dataset's questions."""

    classes: tuple[str, ...]
    gold: dict[str, str]  # qid -> labelled class
    predicted: dict[str, str]  # qid -> predicted class (validation: out of fold; test: the full model)
    split: dict[str, str]  # qid -> validation | test
    model: Any  # trained on every validation question; classifies questions outside the dataset (ask)

    def class_of(self, q: Question) -> str:
        known = self.predicted.get(q.qid)
        if known is not None:
            return known
        from ragsweep.adaptive.classifier import predict

        return predict(self.model, [q.question])[0]


def classify(spec, dataset, amap: AdaptiveMap) -> Classified:
    """Train on the validation questions; a label problem or too few examples: one RagsweepError line."""
    from ragsweep.adaptive.classifier import ClassifierSettings, TooFewExamples, fit, out_of_fold, predict
    from ragsweep.adaptive.labels import gold_classes
    from ragsweep.evaluation.split import question_split, validation_questions

    a = amap.spec
    settings = ClassifierSettings(
        folds=a.classifier.folds,
        C=a.classifier.C,
        ngram_max=a.classifier.ngram_max,
        min_df=a.classifier.min_df,
        class_weight=a.classifier.class_weight,
        seed=spec.seed,
    )
    gold = gold_classes(a, dataset.questions, amap.where)
    split = question_split(spec, dataset)
    train = validation_questions(spec, dataset)
    ids, texts, labels = [q.qid for q in train], [q.question for q in train], [gold[q.qid] for q in train]
    try:
        from ragsweep.adaptive.classifier import check_counts

        check_counts(labels, sorted(a.classes))
        model = fit(ids, texts, labels, settings)
        predicted = out_of_fold(ids, texts, labels, settings)
    except TooFewExamples as exc:
        raise RagsweepError(f"{amap.where}.classes: {exc} ({len(train)} validation questions in all)") from None
    others = [q for q in dataset.questions if split.get(q.qid) != "validation"]
    predicted.update(zip((q.qid for q in others), predict(model, [q.question for q in others])))
    return Classified(tuple(sorted(a.classes)), gold, predicted, split, model)


def classified(ctx, amap: AdaptiveMap) -> Classified:
    """``classify`` once per run and classifier (memoised in the ``StageContext``)."""
    key = json.dumps(amap.classifier_identity(), sort_keys=True, default=list)
    if key not in ctx.adaptive:
        ctx.adaptive[key] = classify(ctx.spec, ctx.dataset, amap)
    return ctx.adaptive[key]


def router(ctx, config, retrievers, spec_r) -> Callable[[Question], tuple]:
    """question -> (retriever, top_k, reranker, transform, payload fields) of its predicted class; every
    class's retriever is made here, so a failure is the configuration's, before its first question."""
    amap: AdaptiveMap = config.adaptive
    cls = classified(ctx, amap)
    made = {r.name: retrievers.make(spec_r, r.top_k, r.reranker, r.transform) for r in amap.routes}

    def route(q: Question) -> tuple:
        c = cls.class_of(q)
        r = amap.route(c)
        return made[c], r.top_k, r.reranker, r.transform, {"adaptive_class": c, "top_k": r.top_k}

    return route


def check_classifiers(spec, dataset) -> None:
    """At start-up: every adaptive entry's labels map and classifier train (one error line otherwise)."""
    from ragsweep.adaptive.config_map import resolve

    for i in range(len(spec.adaptive)):
        classify(spec, dataset, resolve(spec, i))


def adaptive_record(spec, dataset, previous: dict | None = None) -> dict:
    """For the manifest, per adaptive entry (by label): its classes and settings, labelled and predicted
    counts per split, macro-F1 with a bootstrap CI and the confusion matrix on the test questions and
    (out of fold) on the validation ones; over the whole dataset, whatever ``--limit`` says. An entry
    of ``previous`` (the last manifest's) with the same key is kept: a no-op re-run trains nothing."""
    import hashlib

    from ragsweep.adaptive.config_map import resolve

    out: dict = {}
    sc = spec.scoring
    for i, a in enumerate(spec.adaptive):
        amap = resolve(spec, i)
        key = hashlib.sha256(
            json.dumps(
                [
                    amap.classifier_identity(),
                    a.model_dump(mode="json", exclude={"name"}),
                    dataset.fingerprint(),
                    sc.bootstrap_samples,
                    sc.confidence,
                ],
                sort_keys=True,
                default=list,
            ).encode()
        ).hexdigest()[:16]
        label = f"{a.retriever}-{a.label()}"
        old = (previous or {}).get(label)
        out[label] = old if old and old.get("key") == key else {"key": key, **_entry(spec, dataset, amap)}
    return out


def _entry(spec, dataset, amap: AdaptiveMap) -> dict:
    from ragsweep.adaptive.agreement import confusion, macro_f1_ci

    a, sc = amap.spec, spec.scoring
    cls = classify(spec, dataset, amap)
    entry: dict = {
        "retriever": a.retriever,
        "classes": list(cls.classes),
        "routes": {
            r.name: {
                "top_k": r.top_k,
                "reranker": r.reranker.label() if r.reranker else None,
                "query_transform": r.transform.label() if r.transform else None,
            }
            for r in amap.routes
        },
        "classifier": {"model": "tfidf+logistic_regression", **a.classifier.model_dump(mode="json")},
    }
    for split, name in (("test", "test"), ("validation", "validation_out_of_fold")):
        qids = [q.qid for q in dataset.questions if cls.split.get(q.qid) == split]
        truth, pred = [cls.gold[x] for x in qids], [cls.predicted[x] for x in qids]
        f1, lo, hi = macro_f1_ci(truth, pred, cls.classes, sc.bootstrap_samples, sc.confidence, spec.seed)
        entry[name] = {
            "n": len(qids),
            "macro_f1": round(f1, 4),
            "macro_f1_lo": round(lo, 4),
            "macro_f1_hi": round(hi, 4),
            "labelled": {c: truth.count(c) for c in cls.classes},
            "predicted": {c: pred.count(c) for c in cls.classes},
            "confusion": confusion(truth, pred, cls.classes),
        }
    return entry


def describe(record: dict | None) -> list[str]:
    """One line per adaptive entry, for ``ragsweep show`` and the end of a run."""
    lines = []
    for label, e in (record or {}).items():
        t, v = e["test"], e["validation_out_of_fold"]
        routes = ", ".join(
            f"{c}: k{r['top_k']}" + "".join(f"+{x}" for x in (r["query_transform"], r["reranker"]) if x)
            for c, r in e["routes"].items()
        )
        lines.append(
            f"{label}: classifier macro-F1 {t['macro_f1']:.3f} [{t['macro_f1_lo']:.3f}, "
            f"{t['macro_f1_hi']:.3f}] on {t['n']} test questions, {v['macro_f1']:.3f} "
            f"[{v['macro_f1_lo']:.3f}, {v['macro_f1_hi']:.3f}] on {v['n']} validation (out of fold); {routes}"
        )
    return lines
