"""Chunks cached per document, so an edited corpus is split where it changed.

A splitter cuts each document alone (``build.split_corpus`` hands it one document at a time), so a document's
chunks are a function of its id, its text, the splitter's settings and the splitter libraries' versions. The
whole corpus's chunks are cached under the corpus's fingerprint (``stages.chunk``); when that misses (a new
corpus, or one document edited), each document's chunks are looked up here by (settings, id and text hash), and
only the documents not found are split. Editing one document of contractnli x8 (760 documents) split one
document per splitter instead of 760 (BENCHMARKS "Cost against corpus size").
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ragsweep.splitters.build import Chunk

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS doc (splitter TEXT, doc BLOB, rows TEXT, PRIMARY KEY (splitter, doc)) WITHOUT ROWID;"
)


def document_key(doc_id: str, text: str) -> bytes:
    return hashlib.sha256(f"{doc_id}\0{text}".encode()).digest()[:16]


class DocumentChunks:
    """The per-document chunk store at ``path`` for one splitter (``splitter_key``: its settings and versions)."""

    def __init__(self, path: Path, splitter_key: str) -> None:
        from ragsweep.sqlite_store import open_store

        self._db = open_store(path, _SCHEMA, fast_sync=True)
        self._splitter = hashlib.sha256(splitter_key.encode()).hexdigest()[:32]

    def get(self, documents) -> dict[str, list[Chunk]]:
        """The cached chunks of ``documents`` (by doc id), for those the store has."""
        keys = {document_key(d.doc_id, d.text): d.doc_id for d in documents}
        found: dict[str, list[Chunk]] = {}
        wanted = list(keys)
        for i in range(0, len(wanted), 300):
            batch = wanted[i : i + 300]
            marks = ",".join("?" * len(batch))
            sql = f"SELECT doc, rows FROM doc WHERE splitter = ? AND doc IN ({marks})"  # noqa: S608 - marks only
            for doc, rows in self._db.execute(sql, [self._splitter, *batch]):
                found[keys[bytes(doc)]] = [Chunk(*row) for row in json.loads(rows)]
        return found

    def put(self, documents, chunks: list[Chunk]) -> None:
        """Store each of ``documents``' chunks (``chunks``: theirs, in document order; a document may have none)."""
        by_doc: dict[str, list] = {d.doc_id: [] for d in documents}
        for c in chunks:
            by_doc[c.doc_id].append([c.node_id, c.doc_id, c.start, c.end, c.text])
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO doc VALUES (?, ?, ?)",
                [
                    (self._splitter, document_key(d.doc_id, d.text), json.dumps(by_doc[d.doc_id], ensure_ascii=False))
                    for d in documents
                ],
            )

    def close(self) -> None:
        self._db.close()
