"""Validation/test split of the questions."""

from __future__ import annotations

import random

import pytest

from ragsweep.datasets.types import Question
from ragsweep.evaluation.split import UNTYPED, allocate, split_counts, split_questions


def _questions(types: dict[str | None, int]) -> list[Question]:
    return [
        Question(qid=f"{t or 'none'}-{i}", question="?", qtype=t) for t, count in types.items() for i in range(count)
    ]


def _validation(assignment: dict[str, str]) -> set[str]:
    return {qid for qid, split in assignment.items() if split == "validation"}


def test_deterministic_and_order_free():
    qs = _questions({"fact": 20, "multi": 11, None: 5})
    a = split_questions(qs, seed=1)
    shuffled = qs[:]
    random.Random(0).shuffle(shuffled)
    assert split_questions(shuffled, seed=1) == a
    assert set(a) == {q.qid for q in qs} and set(a.values()) == {"validation", "test"}
    assert split_questions(qs, seed=2) != a


def test_stratified_in_proportion():
    qs = _questions({"fact": 40, "multi": 20, None: 10})
    a = split_questions(qs, validation_fraction=0.3)
    counts = split_counts(a, qs)
    assert counts["validation"] == {"fact": 12, "multi": 6, UNTYPED: 3}
    assert counts["test"] == {"fact": 28, "multi": 14, UNTYPED: 7}


def test_unstratified_one_stratum():
    qs = _questions({"fact": 10, "multi": 10})
    a = split_questions(qs, validation_fraction=0.25, stratify=False)
    assert len(_validation(a)) == 5  # round(0.25 * 20)


def test_largest_remainder_keeps_total_across_small_strata():
    # Ten singleton types at 0.5: per-stratum rounding would put all ten in validation.
    qs = _questions({f"t{i}": 1 for i in range(10)})
    a = split_questions(qs, validation_fraction=0.5)
    assert len(_validation(a)) == 5
    # Three strata of 3 at 0.5: quotas 1.5 each, total round(4.5) = 5 -> 2, 2, 1 in some order.
    counts = allocate({"a": 3, "b": 3, "c": 3}, 0.5, seed=0)
    assert sum(counts.values()) == 5 and sorted(counts.values()) == [1, 2, 2]
    # Every stratum within one of its quota.
    sizes = {"a": 7, "b": 5, "c": 2, None: 1}
    counts = allocate(sizes, 0.37, seed=4)
    assert sum(counts.values()) == round(0.37 * 15)
    assert all(abs(counts[s] - 0.37 * n) < 1 for s, n in sizes.items())


@pytest.mark.parametrize("fraction", [0.01, 0.5, 0.99])
def test_both_splits_non_empty(fraction):
    for n in (2, 3, 7):
        a = split_questions(_questions({"fact": n}), validation_fraction=fraction)
        assert 1 <= len(_validation(a)) <= n - 1
    a = split_questions(_questions({"x": 1, "y": 1}), validation_fraction=fraction)
    assert len(_validation(a)) == 1


def test_invalid_inputs():
    qs = _questions({"fact": 4})
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError):
            split_questions(qs, validation_fraction=bad)
    with pytest.raises(ValueError):
        split_questions(qs + qs[:1])  # duplicate qid
    with pytest.raises(ValueError):
        split_counts({}, qs)
    assert split_questions([]) == {}
    assert split_counts({}, []) == {"validation": {}, "test": {}}
