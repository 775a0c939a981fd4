"""``records.parquet`` written a few configurations at a time, so the sweep's outputs never hold every answer.

Built whole, the records frame held every row's answer text and sources beside the columns the summary reads: at
contractnli x4 (70,344 rows) about 300 MB, the outputs' peak, growing with every question and configuration
(BENCHMARKS "Cost against corpus size"). ``build_records`` hands whole configurations' rows here as it makes them
(``RecordsFile.add``: written to a part file in a scratch folder) and keeps only the columns the summary, the
comparisons and the verdict read; ``write`` then puts the parts into one file, each column typed as the frame made
whole would type it: a column the kept frame holds takes its type (and pandas metadata) from there, the others
(the answer, the sources and the other texts only written: ``columns.WRITTEN_ONLY``) from their parts' types
unified (a part with no value gives no type), the sources' fields in the order the sorted rows first have them.
The file reads back equal to the one written from the whole frame (tests/test_sources_column.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROW_GROUP = 8192  # rows of records.parquet converted and written at a time


class RecordsFile:
    """Parts of records.parquet in ``folder`` (each the rows of whole configurations, in the frame's order)."""

    def __init__(self, folder: Path) -> None:
        self._folder = Path(folder)
        self._parts: list[Path] = []
        self._types: dict[str, list] = {}  # column -> its type in each part that has it, first named first
        self._fields: dict[str, list] = {}  # the sources' field -> its type in each part, first met first

    def add(self, frame, sources) -> None:
        """Whole configurations' rows (``frame``, sorted, without sources) and their ``SourcesColumn``."""
        import pyarrow.parquet as pq

        if frame.empty:
            return
        path = self._folder / f"part-{len(self._parts):06d}.parquet"
        with _system_pool():
            table = sources.table_with(frame, after="generator")
            pq.write_table(table, path)
        self._parts.append(path)
        for field in table.schema:
            self._types.setdefault(field.name, []).append(field.type)
        struct = table.schema.field("sources").type.value_type
        if hasattr(struct, "fields"):
            for field in struct.fields:
                self._fields.setdefault(field.name, []).append(field.type)

    def schema(self, kept):
        """The whole file's schema: ``kept`` (the frame of the columns kept in memory) types its own columns."""
        import pyarrow as pa
        from pyarrow.pandas_compat import get_logical_type

        from ragsweep.pipelines.outputs.arrow_schema import frame_schema

        known = frame_schema(kept)
        meta = json.loads(known.metadata[b"pandas"])
        entries = {c["name"]: c for c in meta["columns"]}
        fields, columns = [], []
        for name, types in self._types.items():
            if name in entries:
                fields.append(known.field(name))
            else:
                kind = self._sources_type() if name == "sources" else _unified(types)
                fields.append(pa.field(name, kind))
                entries[name] = {
                    "name": name,
                    "field_name": name,
                    "pandas_type": get_logical_type(kind),
                    "numpy_type": "object",
                    "metadata": None,
                }
            columns.append(entries[name])
        meta["columns"] = columns
        return pa.schema(fields, metadata={b"pandas": json.dumps(meta).encode("utf-8")})

    def _sources_type(self):
        import pyarrow as pa

        if not self._fields:  # no row has a source: what pandas makes of empty lists
            return _unified(self._types["sources"])
        return pa.list_(pa.struct([pa.field(k, _unified(t)) for k, t in self._fields.items()]))

    def write(self, path: Path, kept, row_group: int = ROW_GROUP) -> None:
        """The parts as one file at ``path``, ``row_group`` rows at a time; ``kept`` as in ``schema``."""
        if not self._parts:
            kept.to_parquet(path, index=False)
            return
        with _system_pool():
            self._write(path, kept, row_group)

    def _write(self, path: Path, kept, row_group: int) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = self.schema(kept)
        buffered: list = []
        rows = 0  # in ``buffered``
        with pq.ParquetWriter(path, schema) as writer:
            for part in self._parts:
                buffered.append(_conformed(pq.read_table(part), schema))
                rows += buffered[-1].num_rows
                if rows >= row_group:
                    writer.write_table(pa.concat_tables(buffered), row_group_size=row_group)
                    buffered, rows = [], 0
            if buffered:
                writer.write_table(pa.concat_tables(buffered), row_group_size=row_group)


@contextmanager
def _system_pool() -> Iterator[None]:
    """Arrow's buffers from the C library's allocator while inside: its default pool (mimalloc) keeps what it frees
    for reuse, which held about 70 MB more at contractnli x4's end (writing the records last)."""
    import pyarrow as pa

    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


def _unified(types: list):
    """The type of a column whose parts have ``types`` (null where a part has no value): as pyarrow infers one
    from all its values (an integer part and a float part give float)."""
    import pyarrow as pa

    schemas = [pa.schema([pa.field("c", t)]) for t in types]
    return pa.unify_schemas(schemas, promote_options="permissive").field("c").type


def _conformed(table, schema):
    """``table`` with ``schema``'s columns in its order and types; a column it lacks is null."""
    import pyarrow as pa

    columns = []
    for field in schema:
        if field.name in table.column_names:
            column = table.column(field.name)
            columns.append(column if column.type == field.type else column.cast(field.type))
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=schema)
