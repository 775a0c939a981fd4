"""Rows collected as columns, for a frame of many rows.

``pandas.DataFrame(rows)`` from a list of dicts holds every row's dict (about 1.5 KB each for the records'
80 columns) beside the frame it builds: at contractnli x2, 51 MB of dicts and 35 MB of pandas' own 2-D
object array, the outputs' peak. Appended here one row at a time, a row costs a pointer per column, and the
frame is what ``DataFrame(rows)`` makes: the columns in the order the rows first name them, a column a row
lacks NaN in that row.
"""

from __future__ import annotations

import math
from typing import Any

SHARED_LENGTH = 64  # strings up to this long are held once however many rows repeat them (labels, not answers)


class RowColumns:
    """One list per column, each as long as the rows added."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {}
        self._n = 0
        self._labels: dict[str, str] = {}

    def add(self, row: dict) -> None:
        for key, value in row.items():
            column = self.columns.get(key)
            if column is None:
                column = self.columns[key] = [math.nan] * self._n
            if type(value) is str and len(value) <= SHARED_LENGTH:  # a label decoded anew for every row
                value = self._labels.setdefault(value, value)
            column.append(value)
        self._n += 1
        if len(row) < len(self.columns):  # a column this row lacks
            for column in self.columns.values():
                if len(column) < self._n:
                    column.append(math.nan)

    def __len__(self) -> int:
        return self._n

    def frame(self):
        """The rows as a ``pandas.DataFrame``; the lists are handed over (emptied here)."""
        import pandas as pd

        columns, self.columns, self._n = self.columns, {}, 0
        frame = pd.DataFrame(columns)
        columns.clear()
        return frame
