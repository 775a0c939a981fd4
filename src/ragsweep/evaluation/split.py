"""Validation/test split of the questions, stratified by question type.

Configurations are chosen on the validation questions and reported on the held-out test
questions, so the reported scores are not inflated by the selection (Hastie, Tibshirani &
Friedman 2009, "The Elements of Statistical Learning", 2nd ed., sec. 7.2).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence

from ragsweep.datasets.types import Question

VALIDATION = "validation"
TEST = "test"
SPLITS = (VALIDATION, TEST)
# Key for questions without a type in ``split_counts`` (JSON object keys must be strings).
UNTYPED = "(untyped)"


def split_questions(
    questions: Sequence[Question],
    validation_fraction: float = 0.5,
    seed: int = 0,
    stratify: bool = True,
) -> dict[str, str]:
    """Map each qid to ``"validation"`` or ``"test"``, deterministically and independent of input order.

    Strata are the question types when ``stratify`` (``None`` types form their own stratum),
    else one stratum. The validation total is ``round(validation_fraction * N)`` (halves round
    up), clamped to ``[1, N - 1]`` so both splits are non-empty when ``N >= 2``. The total is
    shared among strata by largest remainders (Hamilton's method; Balinski & Young 2001,
    "Fair Representation", 2nd ed.): each stratum gets the floor of its quota
    ``fraction * n_s`` and the leftover seats go to the largest fractional parts, ties broken
    by a seeded hash of the stratum. Unlike rounding each stratum on its own, this keeps the
    total exact and every stratum within one question of its quota; per-stratum rounding
    puts every singleton stratum in validation at fraction 0.5, leaving test empty. Within a
    stratum, qids are ordered by ``sha256(f"{seed}:{qid}")`` and the first ones go to
    validation, so a question's place does not depend on the order questions are listed in.
    """
    if not 0.0 < validation_fraction < 1.0:
        raise ValueError(f"validation_fraction must be in (0, 1), got {validation_fraction}")
    strata: dict[str | None, list[str]] = {}
    seen: set[str] = set()
    for q in questions:
        if q.qid in seen:
            raise ValueError(f"question id {q.qid!r} appears twice; question ids must be unique")
        seen.add(q.qid)
        strata.setdefault(q.qtype if stratify else None, []).append(q.qid)
    sizes = {s: len(qids) for s, qids in strata.items()}
    quotas = allocate(sizes, validation_fraction, seed)
    assignment: dict[str, str] = {}
    for s, qids in strata.items():
        ordered = sorted(qids, key=lambda qid: (_digest(f"{seed}:{qid}"), qid))
        k = quotas[s]
        assignment.update({qid: VALIDATION for qid in ordered[:k]})
        assignment.update({qid: TEST for qid in ordered[k:]})
    return assignment


def allocate(sizes: Mapping[str | None, int], fraction: float, seed: int = 0) -> dict[str | None, int]:
    """Validation count per stratum by largest remainders, summing to the clamped rounded total.

    See ``split_questions``. The sum of floors never exceeds the total and the leftover is at
    most the number of strata, so no stratum gets more than one extra seat or exceeds its size.
    """
    n = sum(sizes.values())
    total = math.floor(fraction * n + 0.5)
    if n >= 2:
        total = min(max(total, 1), n - 1)
    quotas = {s: fraction * size for s, size in sizes.items()}
    counts = {s: math.floor(q) for s, q in quotas.items()}
    leftover = total - sum(counts.values())
    by_remainder = sorted(sizes, key=lambda s: (-(quotas[s] - counts[s]), _digest(f"{seed}:{s!r}")))
    for s in by_remainder[:leftover]:
        counts[s] += 1
    return counts


def split_counts(assignment: Mapping[str, str], questions: Sequence[Question]) -> dict[str, dict[str, int]]:
    """Per split, the number of questions of each type (``UNTYPED`` for none), for the run manifest.

    Both splits are always present; types are sorted. Every question must be in ``assignment``.
    """
    counts: dict[str, dict[str, int]] = {split: {} for split in SPLITS}
    for q in questions:
        split = assignment.get(q.qid)
        if split not in counts:
            raise ValueError(f"question {q.qid!r} has no validation/test assignment (got {split!r})")
        key = UNTYPED if q.qtype is None else q.qtype
        counts[split][key] = counts[split].get(key, 0) + 1
    return {split: dict(sorted(by_type.items())) for split, by_type in counts.items()}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def question_split(spec, dataset) -> dict[str, str]:
    """The spec's split of the dataset: over the whole question set, so ``--limit`` does not reshuffle it."""
    return split_questions(dataset.questions, spec.split.validation_fraction, spec.seed, spec.split.stratify)


def validation_questions(spec, dataset) -> list[Question]:
    """The dataset's validation questions, all of them whatever ``--limit`` says: what a run tunes on
    (fusion weights, abstention thresholds, the adaptive classifier), so a resumed or limited run tunes
    the same."""
    split = question_split(spec, dataset)
    return [q for q in dataset.questions if split.get(q.qid) == "validation"]
