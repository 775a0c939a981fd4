"""The records' sources column built compactly (``SourcesColumn``) is the column pandas writes from the rows'
lists of dicts, and the retrievers return the indexed nodes themselves (one object per chunk, not per hit)."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa
import pytest

from ragsweep.pipelines.outputs.sources_column import SourcesColumn

ROWS = [
    [{"rank": 1, "node_id": "s:a:0", "doc_id": "a", "start": 0, "end": 10, "score": 0.5, "rank_bm25": None}],
    [],
    None,
    [
        {"rank": 1, "node_id": "s:a:0", "doc_id": "a", "start": 0, "end": 10, "score": 1, "rank_bm25": 2},
        {"rank": 2, "node_id": "s:b:3", "doc_id": "b", "start": 5, "end": 9, "score": math.nan, "triplets": ["x"]},
    ],
    [{"rank": 1, "node_id": "s:c:1", "doc_id": "c", "start": 3, "end": 4, "score": 0.25, "merged_from": ["p", "q"]}],
]


def _pandas_column(rows: list) -> pa.ChunkedArray:
    frame = pd.DataFrame({"x": range(len(rows)), "sources": [r or [] for r in rows]})
    return pa.Table.from_pandas(frame, preserve_index=False).column("sources")


def test_the_column_is_what_pandas_writes():
    column = SourcesColumn()
    for row in ROWS:
        column.add(row)
    expected = _pandas_column(ROWS)
    got = column.arrow()
    assert got.type == expected.type
    assert got.to_pylist() == expected.to_pylist()


def test_no_sources_at_all():
    column = SourcesColumn()
    for _ in range(3):
        column.add([])
    assert column.arrow().to_pylist() == _pandas_column([[], [], []]).to_pylist()


def test_the_table_puts_the_column_where_the_frame_had_it():
    column = SourcesColumn()
    for row in ROWS[:2]:
        column.add(row)
    table = column.table_with(pd.DataFrame({"generator": ["e", "e"], "error": [None, None]}), after="generator")
    assert table.column_names == ["generator", "sources", "error"]


def test_bm25_returns_the_indexed_nodes():
    from llama_index.core.schema import QueryBundle

    from ragsweep.retrievers.factory import bm25_retriever
    from ragsweep.splitters.build import Chunk

    words = ["notice", "party", "confidential", "term", "shall", "disclose"]
    chunks = [
        Chunk(node_id=f"s:d:{i}", doc_id="d", start=i, end=i + 1, text=" ".join(words[i % 6 :] + words[: i % 6]))
        for i in range(30)
    ]
    retriever = bm25_retriever(chunks, 5)
    first = {n.node.node_id: n.node for n in retriever.retrieve(QueryBundle("confidential notice"))}
    again = {n.node.node_id: n.node for n in retriever.retrieve(QueryBundle("confidential term"))}
    assert any(first[i] is again[i] for i in set(first) & set(again))  # one node object per chunk
    assert all(first[i] is again[i] for i in set(first) & set(again))


def test_chroma_returns_the_indexed_nodes(tmp_path):
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.retrievers import VectorIndexRetriever

    from ragsweep.retrievers.chroma import client_for, open_or_build
    from ragsweep.splitters.build import Chunk

    chunks = [Chunk(node_id=f"s:d:{i}", doc_id="d", start=i, end=i + 1, text=f"chunk {i}") for i in range(12)]
    embed = MockEmbedding(embed_dim=8)
    for built in (True, False):  # built now, then reopened
        index, was_built = open_or_build(client_for(tmp_path, None), "key", chunks, embed)
        assert was_built is built
        retriever = VectorIndexRetriever(index, similarity_top_k=4, embed_model=embed)
        first, again = retriever.retrieve("a question"), retriever.retrieve("another question")
        assert [n.node.node_id for n in first] == ["s:d:0", "s:d:1", "s:d:10", "s:d:11"]  # equal scores: by id
        assert all(a.node is b.node for a, b in zip(first, again))  # one node object per chunk, not per hit
        assert first[0].node.text == "chunk 0" and first[0].node.metadata == {"doc_id": "d"}


def _rows() -> list[dict]:
    """Five records rows: no answer in the first two, a column (``top_k``) only in the last, an integer weight
    beside float ones, texts only written (``answer``, ``fusion_weights``) and kept ones (``ndcg``)."""
    rows = []
    for i, sources in enumerate(ROWS):
        row = {
            "config_id": "a" if i < 2 else "b" if i < 4 else "c",
            "answer": None if i < 2 else f"answer {i}",
            "generator": "extractive",  # the sources follow it, as in ``records._row``
            "sources": sources or [],
            "fusion_weights": None if i < 3 else [1, 0] if i == 3 else [0.25, 0.75],
            "ndcg": [0.5, math.nan, 1.0, 0.0, 0.25][i],
        }
        if i == 4:
            row["top_k"] = 3
        rows.append(row)
    return rows


@pytest.mark.parametrize("row_group", [2, 8192])
def test_records_written_a_configuration_at_a_time_read_back_as_one_table(tmp_path, row_group):
    """``records.parquet`` from parts (one per configuration, each typed from its own rows) reads back as the file
    pandas writes from the whole frame: each column typed from all its rows (a part whose values are all missing
    keeps the column's type; an integer part beside a float one is float), the sources' fields in the order the
    rows first have them, a column a part lacks null there."""
    import pyarrow.parquet as pq

    from ragsweep.pipelines.outputs.columns import WRITTEN_ONLY
    from ragsweep.pipelines.outputs.records_file import RecordsFile
    from ragsweep.pipelines.outputs.row_columns import RowColumns

    rows = _rows()
    whole = RowColumns()
    for row in rows:
        whole.add(row)
    whole.frame().to_parquet(tmp_path / "whole.parquet", index=False)
    parts, kept = RecordsFile(tmp_path), RowColumns()
    for config in ("a", "b", "c"):
        part, found = RowColumns(), SourcesColumn()
        for row in (r for r in rows if r["config_id"] == config):
            row = dict(row)
            found.add(row.pop("sources"))
            part.add(row)
            kept.add({k: v for k, v in row.items() if k not in WRITTEN_ONLY})
        parts.add(part.frame(), found)
    parts.write(tmp_path / "records.parquet", kept.frame(), row_group=row_group)
    got, want = pq.ParquetFile(tmp_path / "records.parquet"), pq.read_table(tmp_path / "whole.parquet")
    assert got.metadata.num_row_groups == (3 if row_group == 2 else 1)
    assert got.schema_arrow.equals(want.schema, check_metadata=True)
    assert got.read().to_pylist() == want.to_pylist()
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "records.parquet"), pd.read_parquet(tmp_path / "whole.parquet")
    )


@pytest.mark.parametrize("part_rows", [1, 4, 10**6])
def test_records_from_parts_of_several_configurations_equal_the_whole_frame(tmp_path, monkeypatch, part_rows):
    """``build_records`` hands ``RecordsFile`` whole configurations, several at a time up to ``PART_ROWS`` rows: the
    file reads back as the whole frame written by pandas, however the configurations fall into parts."""
    from ragsweep.pipelines import journal as journal_mod
    from ragsweep.pipelines.outputs import records as records_mod
    from ragsweep.pipelines.outputs.records_file import RecordsFile

    questions = [
        {"qid": f"q{i}", "question": "?", "qtype": "simple", "reference_answer": "ten days", "split": "test"}
        | {"evidence": []}
        for i in range(3)
    ]
    configs = [{"config_id": f"c{i}", "config_hash": f"h{i}"} for i in range(4)]
    journal = journal_mod.Journal(tmp_path / "journal.sqlite")
    for i, c in enumerate(configs):
        for j, q in enumerate(reversed(questions)):  # journal order is not the frame's
            sources = ROWS[(i + j) % len(ROWS)]
            payload = {"answer": None if i == 0 else f"answer {i}{j}", "sources": sources}
            if i == 3:
                payload["fusion_weights"] = [1, 0] if j else [0.25, 0.75]
            journal.add_answer(c["config_hash"], q["qid"], c["config_id"], payload)
    whole = records_mod.build_records(questions, configs, journal)
    whole.to_parquet(tmp_path / "whole.parquet", index=False)
    monkeypatch.setattr(records_mod, "PART_ROWS", part_rows)
    folder = tmp_path / "parts"
    folder.mkdir()
    parts = RecordsFile(folder)
    kept = records_mod.build_records(questions, configs, journal, sources=parts)
    journal.close()
    assert len(list(folder.glob("part-*.parquet"))) == {1: 4, 4: 2, 10**6: 1}[part_rows]
    assert "answer" not in kept.columns and "sources" not in kept.columns
    parts.write(tmp_path / "records.parquet", kept)
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "records.parquet"), pd.read_parquet(tmp_path / "whole.parquet")
    )
