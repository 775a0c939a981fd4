"""The records' ``sources`` column, kept compact while ``records.parquet`` is built.

A row's sources, as decoded from the journal, are a list of dicts: about 6 KB of Python objects per
(configuration, question) at top_k 10, the largest part of the records' memory (contractnli: 94 MB of
17,586 rows, growing with every question the corpus adds). Collected here instead, they are one flat list
per field over every source (strings interned: a node id or document name is one object however often it
is retrieved) and each row's offset, and become the same Arrow column pandas would have written from the
lists of dicts: a list of structs, its fields in the order the rows first name them (rows are added in the
frame's order), each field's type inferred from all its values, a missing field null.
"""

from __future__ import annotations

from typing import Any


class SourcesColumn:
    """Each row's sources, added in the frame's row order; ``arrow()`` is the column."""

    def __init__(self) -> None:
        self.fields: dict[str, list[Any]] = {}
        self.offsets: list[int] = [0]
        self._n = 0
        self._strings: dict[str, str] = {}

    def add(self, sources: list[dict] | None) -> None:
        """Append one row's sources (None or [] for a row without any)."""
        for source in sources or []:
            for key, value in source.items():
                column = self.fields.get(key)
                if column is None:
                    column = self.fields[key] = [None] * self._n
                if isinstance(value, str):
                    value = self._strings.setdefault(value, value)
                column.append(value)
            self._n += 1
            for column in self.fields.values():  # a field this source lacks is null in it
                if len(column) < self._n:
                    column.append(None)
        self.offsets.append(self._n)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def arrow(self):
        """The column as a ``pyarrow`` list<struct> array, its fields typed from all their values."""
        import pyarrow as pa

        if not self.fields:  # no row has a source: what pandas makes of empty lists
            return pa.array([[] for _ in range(len(self))])
        struct = pa.StructArray.from_arrays(
            [pa.array(values, from_pandas=True) for values in self.fields.values()], names=list(self.fields)
        )
        return pa.ListArray.from_arrays(pa.array(self.offsets, type=pa.int32()), struct)

    def table_with(self, frame, after: str):
        """``frame`` (without sources, its rows those added here) as an Arrow table with this column inserted after
        column ``after``."""
        import pyarrow as pa

        table = pa.Table.from_pandas(frame, preserve_index=False)
        at = table.column_names.index(after) + 1 if after in table.column_names else table.num_columns
        return table.add_column(at, "sources", self.arrow())
