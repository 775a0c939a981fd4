"""Rows collected as columns (``RowColumns``) make the frame ``pandas.DataFrame(rows)`` makes from the dicts."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from ragsweep.pipelines.outputs.row_columns import RowColumns

ROWS = [
    {"config_id": "a", "qid": "q1", "ndcg": 0.5, "error": None, "abstained": False, "n": 3, "tags": ["x"]},
    {"config_id": "a", "qid": "q2", "ndcg": None, "error": "boom", "abstained": None, "n": None, "tags": []},
    {"config_id": "b", "qid": "q1", "ndcg": 1, "error": None, "abstained": True, "n": 4, "adaptive_class": "hard"},
    {"qid": "q3", "config_id": "b", "ndcg": math.nan, "error": None, "abstained": False, "n": 5, "tags": None},
]


@pytest.mark.parametrize("rows", [ROWS, ROWS[:1], ROWS[2:], list(reversed(ROWS))])
def test_the_frame_is_what_pandas_makes_from_the_dicts(rows):
    collected = RowColumns()
    for row in rows:
        collected.add(row)
    assert len(collected) == len(rows)
    got = collected.frame()
    expected = pd.DataFrame(rows)
    assert list(got.columns) == list(expected.columns)  # first named first; a missing key is NaN
    pd.testing.assert_frame_equal(got, expected)
    assert len(collected) == 0 and collected.columns == {}  # handed over


def test_no_rows():
    assert RowColumns().frame().empty
