"""The in-memory dataset every loader produces and every stage reads."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Document:
    """One source document; ``doc_id`` is stable across runs (a file name or a given id)."""

    doc_id: str
    text: str
    metadata: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class EvidenceSpan:
    """Gold evidence: the half-open character range ``[start, end)`` of ``doc_id``'s text.

    ``copy_of``: for a copy of gold text found elsewhere (``duplicates.add_copies``), the index in the
    question's evidence of the span it copies; the metrics treat a span and its copies as
    alternatives (retrieving any one of them finds that piece of evidence)."""

    doc_id: str
    start: int
    end: int
    copy_of: int | None = None

    def __post_init__(self) -> None:
        if self.start < 0 or self.end <= self.start:
            raise ValueError(f"evidence span [{self.start}, {self.end}) of {self.doc_id!r} is empty or negative")


@dataclass(frozen=True)
class Turn:
    """One message of the conversation before a question: ``role`` is ``user`` or ``assistant``."""

    role: str
    content: str


@dataclass(frozen=True)
class Question:
    """A question with its reference answer (may be None), gold evidence, type and the conversation before it
    (``history``: empty for a question asked alone; a follow-up's earlier turns, oldest first)."""

    qid: str
    question: str
    reference_answer: str | None = None
    evidence: tuple[EvidenceSpan, ...] = ()
    qtype: str | None = None
    history: tuple[Turn, ...] = ()


@dataclass
class Dataset:
    """Documents plus questions; the fingerprint is a content hash of both."""

    name: str
    documents: list[Document]
    questions: list[Question]
    notes: list[str] = field(default_factory=list)
    # how gold evidence was found: tiers of text location, copies counted as gold, unlocated texts
    evidence: dict = field(default_factory=dict)

    def document(self, doc_id: str) -> Document:
        return self._by_id()[doc_id]

    def _by_id(self) -> dict[str, Document]:
        cached = getattr(self, "_index", None)
        if cached is None or len(cached) != len(self.documents):
            cached = {d.doc_id: d for d in self.documents}
            self._index = cached
        return cached

    def corpus_fingerprint(self) -> str:
        """Content hash of the documents (memoised: a loaded dataset is not mutated)."""
        cached = self.__dict__.get("_corpus_fp")
        if cached is not None:
            return cached
        h = hashlib.sha256()
        for d in sorted(self.documents, key=lambda d: d.doc_id):
            h.update(d.doc_id.encode())
            h.update(b"\0")
            h.update(d.text.encode())
            h.update(b"\0")
        self._corpus_fp = h.hexdigest()[:16]
        return self._corpus_fp

    def fingerprint(self) -> str:
        """Content hash of documents and questions (memoised)."""
        cached = self.__dict__.get("_fp")
        if cached is not None:
            return cached
        h = hashlib.sha256(self.corpus_fingerprint().encode())
        for q in self.questions:
            h.update(
                json.dumps(
                    [
                        q.qid,
                        q.question,
                        q.reference_answer,
                        [
                            [e.doc_id, e.start, e.end] + ([e.copy_of] if e.copy_of is not None else [])
                            for e in q.evidence
                        ],
                        q.qtype,
                    ]
                    # a question asked alone hashes as before histories existed (datasets and runs keep theirs)
                    + ([[[t.role, t.content] for t in q.history]] if q.history else []),
                    ensure_ascii=False,
                ).encode()
            )
        self._fp = h.hexdigest()[:16]
        return self._fp

    def validate(self, source: str, corpus_source: str | None = None) -> None:
        """Check that the dataset is usable; raise one clear line naming the file otherwise."""
        from ragsweep.errors import RagsweepError

        corpus_source = corpus_source or source
        if not self.documents:
            raise RagsweepError(f"{corpus_source}: the corpus has no documents; point it at a non-empty folder or file")
        if not self.questions:
            raise RagsweepError(f"{source}: no questions were loaded; check the questions file")
        ids = self._by_id()
        if len(ids) != len(self.documents):
            raise RagsweepError(f"{corpus_source}: document ids are not unique; give each document a distinct id")
        seen: set[str] = set()
        for q in self.questions:
            if q.qid in seen:
                raise RagsweepError(f"{source}: question id {q.qid!r} appears twice; question ids must be unique")
            seen.add(q.qid)
            for e in q.evidence:
                doc = ids.get(e.doc_id)
                if doc is None:
                    raise RagsweepError(
                        f"{source}: question {q.qid!r} cites document {e.doc_id!r}, which is not in the corpus"
                    )
                if e.end > len(doc.text):
                    raise RagsweepError(
                        f"{source}: question {q.qid!r} has evidence span [{e.start}, {e.end}) past the end of "
                        f"{e.doc_id!r} ({len(doc.text)} characters)"
                    )
