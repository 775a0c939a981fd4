"""The records' ``sources`` column, kept compact while ``records.parquet`` is built.

A row's sources, as decoded from the journal, are a list of dicts: about 6 KB of Python objects per
(configuration, question) at top_k 10, the largest part of the records' memory (contractnli: 94 MB of
17,586 rows, growing with every question the corpus adds). Collected here instead, they are one flat list
per field over every source (strings interned: a node id or document name is one object however often it
is retrieved) and each row's offset, and become the same Arrow column pandas would have written from the
lists of dicts: a list of structs, its fields in the order pandas first meets them in the sorted frame (kept
per field as the least (row's sort key, source, position) it appears at: the rows arrive in the journal's
order), each field's type inferred from all its values, a missing field null.
"""

from __future__ import annotations

from typing import Any


class SourcesColumn:
    """Each row's sources, added in row order; ``arrow(order)`` is the column in the frame's order."""

    def __init__(self) -> None:
        self.fields: dict[str, list[Any]] = {}
        self.offsets: list[int] = [0]
        self.order: list[int] | None = None  # the frame's row order (set by ``build_records`` when it sorts)
        self._n = 0
        self._strings: dict[str, str] = {}
        self._first: dict[str, tuple] = {}  # field -> where the sorted frame first has it
        self._typed: dict | None = None

    def add(self, sources: list[dict] | None, sort_key: tuple = ()) -> None:
        """Append one row's sources (None or [] for a row without any); ``sort_key``: the row's place in the
        frame's order."""
        at: dict[str, tuple[int, int]] = {}
        for i, source in enumerate(sources or []):
            for j, (key, value) in enumerate(source.items()):
                column = self.fields.get(key)
                if column is None:
                    column = self.fields[key] = [None] * self._n
                if isinstance(value, str):
                    value = self._strings.setdefault(value, value)
                column.append(value)
                at.setdefault(key, (i, j))
            self._n += 1
            for column in self.fields.values():  # a field this source lacks is null in it
                if len(column) < self._n:
                    column.append(None)
        for key, (i, j) in at.items():
            first = (sort_key, i, j)
            if key not in self._first or first < self._first[key]:
                self._first[key] = first
        self.offsets.append(self._n)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def arrow(self, rows: range | None = None):
        """The column as a ``pyarrow`` list<struct> array, its rows in ``order`` (the frame's); ``rows``: only the
        frame's rows at those positions (a row group), its fields typed as in the whole column."""
        import pyarrow as pa

        if rows is None:
            rows = range(len(self))
        if not self.fields:  # no row has a source: what pandas makes of empty lists
            return pa.array([[] for _ in rows])
        picked = [self.order[p] for p in rows] if self.order is not None else rows
        offsets: list[int] = [0]
        at: list[int] = []
        for r in picked:
            at.extend(range(self.offsets[r], self.offsets[r + 1]))
            offsets.append(len(at))
        names = self._names()
        types = self._types()
        struct = pa.StructArray.from_arrays(
            [pa.array([self.fields[k][i] for i in at], type=types[k], from_pandas=True) for k in names], names=names
        )
        return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), struct)

    def _names(self) -> list[str]:
        return sorted(self.fields, key=lambda k: self._first[k])

    def _types(self) -> dict:
        """Each field's Arrow type, inferred from all its values (one field at a time), once."""
        import pyarrow as pa

        if self._typed is None:
            self._typed = {k: pa.array(v, from_pandas=True).type for k, v in self.fields.items()}
        return self._typed

    def table_with(self, frame, after: str, rows: range | None = None, schema=None):
        """``frame`` (without sources; its rows ``rows``, all by default) as an Arrow table with this column
        inserted after column ``after``; ``schema``: the frame's (``pyarrow.Schema.from_pandas``) for a part of it."""
        import pyarrow as pa

        part = frame if rows is None else frame.iloc[rows.start : rows.stop]
        table = pa.Table.from_pandas(part, schema=schema, preserve_index=False)
        at = table.column_names.index(after) + 1 if after in table.column_names else table.num_columns
        return table.add_column(at, "sources", self.arrow(rows))
