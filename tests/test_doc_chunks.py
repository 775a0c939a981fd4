"""An edited corpus is split where it changed: each document's chunks are cached on their own."""

from __future__ import annotations

import copy

from conftest import BASE_SPEC, PATTERN, SENTENCE256

from ragsweep.cache_dir import CacheDir
from ragsweep.config import parse_spec
from ragsweep.datasets.demo import load_demo_corpus
from ragsweep.datasets.types import Dataset, Document
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.grid import expand
from ragsweep.pipelines.stages import chunk


def _chunks(cache, documents, splitter):
    spec = parse_spec({**copy.deepcopy(BASE_SPEC), "splitters": [splitter], "retrievers": [{"kind": "bm25"}]})
    config = expand(spec)[0]
    ctx = StageContext(spec=spec, dataset=Dataset("d", documents, []), cache=CacheDir(cache), models=None)
    return chunk.chunk(ctx, config), ctx.stats.documents_split


def test_one_edited_document_is_the_only_one_split_again(tmp_path):
    documents = load_demo_corpus()
    assert len(documents) > 3
    edited = list(documents)
    doc = edited[2]
    middle = len(doc.text) // 2
    edited[2] = Document(doc_id=doc.doc_id, text=doc.text[:middle] + " An inserted sentence. " + doc.text[middle:])
    for splitter in (SENTENCE256, PATTERN):
        first, split = _chunks(tmp_path / "cache", documents, splitter)
        assert split == len(documents)
        again, split = _chunks(tmp_path / "cache", edited, splitter)
        assert split == 1  # the edited document alone
        fresh, split = _chunks(tmp_path / f"fresh-{splitter['kind']}", edited, splitter)
        assert split == len(edited)
        assert again == fresh  # the same chunks, ids and offsets as the edited corpus split whole
        assert again != first
        same, split = _chunks(tmp_path / "cache", edited, splitter)
        assert split == 0 and same == fresh  # the whole corpus's chunks cached: nothing split
