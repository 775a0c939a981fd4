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


def _pandas_column(rows: list, order: list[int]) -> pa.ChunkedArray:
    frame = pd.DataFrame({"x": range(len(rows)), "sources": [r or [] for r in rows]}).iloc[order]
    return pa.Table.from_pandas(frame.reset_index(drop=True), preserve_index=False).column("sources")


@pytest.mark.parametrize("order", [None, [4, 2, 0, 3, 1]])
def test_the_column_is_what_pandas_writes(order):
    column = SourcesColumn()
    place = {r: i for i, r in enumerate(order or range(len(ROWS)))}  # each row's place in the frame
    for r, row in enumerate(ROWS):
        column.add(row, (place[r],))
    column.order = order
    expected = _pandas_column(ROWS, order or list(range(len(ROWS))))
    got = column.arrow()
    assert got.type == expected.type
    assert got.to_pylist() == expected.to_pylist()


def test_no_sources_at_all():
    column = SourcesColumn()
    for _ in range(3):
        column.add([])
    assert column.arrow().to_pylist() == _pandas_column([[], [], []], [0, 1, 2]).to_pylist()


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


@pytest.mark.parametrize("order", [None, [4, 2, 0, 3, 1]])
def test_records_written_in_row_groups_read_back_as_one_table(tmp_path, order):
    """``records.parquet`` written 2 rows at a time: the frame and the sources as the whole table has them, each
    column typed from all its rows (a group whose values are all missing keeps the column's type)."""
    import pyarrow.parquet as pq

    from ragsweep.pipelines.outputs.write import _write_records

    column = SourcesColumn()
    place = {r: i for i, r in enumerate(order or range(len(ROWS)))}
    for r, row in enumerate(ROWS):
        column.add(row, (place[r],))
    column.order = order
    frame = pd.DataFrame(
        {
            "generator": ["extractive"] * 5,
            "answer": [None, None, "a", "b", "c"],  # the first group has no answer at all
            "ndcg": [0.5, math.nan, 1.0, 0.0, 0.25],
        }
    )
    _write_records(frame, column, tmp_path / "groups.parquet", row_group=2)
    pq.write_table(column.table_with(frame, after="generator"), tmp_path / "whole.parquet")
    groups, whole = pq.ParquetFile(tmp_path / "groups.parquet"), pq.read_table(tmp_path / "whole.parquet")
    assert groups.metadata.num_row_groups == 3
    got = groups.read()
    assert got.schema.equals(whole.schema)
    assert got.to_pylist() == whole.to_pylist()
    assert got.column("sources").to_pylist() == _pandas_column(ROWS, order or list(range(5))).to_pylist()
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "groups.parquet"), whole.to_pandas())
