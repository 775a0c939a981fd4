"""Text that occurs in more than one place: gold evidence in every copy, and near-duplicate documents.

Real corpora repeat themselves: a rule quotes its law, a contract its template, a crawl keeps two
versions of a page. When the gold evidence of a question also stands verbatim elsewhere, a
retriever that returns the copy has found the answer; counting only the first copy as gold scores
it as a miss, and can reverse the ranking of retrievers (it did on a real legal set: hit +.115,
MRR +.195, BM25 from last to first). So by default every copy counts, and the user is told.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace

from ragsweep.datasets.locate import MIN_COPY_CHARS, CorpusIndex
from ragsweep.datasets.types import EvidenceSpan, Question


@dataclass
class CopyReport:
    """What ``add_copies`` did: questions that gained spans, spans added, and where copies were."""

    questions: list[str] = field(default_factory=list)
    spans_added: int = 0
    documents: Counter = field(default_factory=Counter)  # (evidence document, copy document) -> copies

    def summary(self) -> dict:
        pairs = [
            {"evidence_doc": a, "copy_doc": b, "copies": n}
            for (a, b), n in sorted(self.documents.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        return {"questions": len(self.questions), "spans_added": self.spans_added, "documents": pairs}

    def note(self) -> str | None:
        if not self.questions:
            return None
        pairs = self.summary()["documents"]
        shown = ", ".join(f"{p['evidence_doc']} -> {p['copy_doc']} ({p['copies']})" for p in pairs[:3])
        more = f" and {len(pairs) - 3} more document pair(s)" if len(pairs) > 3 else ""
        return (
            f"gold evidence of {len(self.questions)} question(s) also occurs elsewhere in the corpus; "
            f"{self.spans_added} copy span(s) count as gold too: {shown}{more} "
            f"(dataset.duplicate_evidence: first keeps only the given ones)"
        )


def _overlaps(span: EvidenceSpan, others: list[EvidenceSpan]) -> bool:
    return any(o.doc_id == span.doc_id and o.start < span.end and span.start < o.end for o in others)


def add_copies(
    questions: list[Question], index: CorpusIndex, min_chars: int = MIN_COPY_CHARS
) -> tuple[list[Question], CopyReport]:
    """Every question's evidence plus each other place (any document) where its text occurs under
    normalisation, marked ``copy_of`` its original (the metrics count a span and its copies as one
    piece of evidence found in any of its places); evidence shorter than ``min_chars`` normalised
    characters is not expanded."""
    from ragsweep.datasets.normalise import normalise_needle

    report = CopyReport()
    out: list[Question] = []
    for q in questions:
        spans = list(q.evidence)
        added = 0
        for i, e in enumerate(q.evidence):
            text = index.documents.get(e.doc_id)
            if text is None or e.end > len(text):  # Dataset.validate names it
                continue
            needle = normalise_needle(text[e.start : e.end])
            if len(needle) < min_chars:
                continue
            for m in index.normalised_all(needle):
                copy = EvidenceSpan(m.doc_id, m.start, m.end, copy_of=i)
                if not _overlaps(copy, spans):
                    spans.append(copy)
                    report.documents[(e.doc_id, m.doc_id)] += 1
                    added += 1
        if added:
            report.questions.append(q.qid)
            report.spans_added += added
            q = replace(q, evidence=tuple(spans))
        out.append(q)
    return out, report


def _shingles(text: str, width: int = 8) -> set[int]:
    """Hashes of the ``width``-word windows of the text, lower-cased (w-shingling; Broder 1997,
    "On the resemblance and containment of documents")."""
    words = text.lower().split()
    return {
        int.from_bytes(hashlib.blake2b(" ".join(words[i : i + width]).encode(), digest_size=8).digest(), "big")
        for i in range(max(0, len(words) - width + 1))
    }


def near_duplicate_documents(documents: dict[str, str], threshold: float = 0.8, max_df: int = 50) -> list[dict]:
    """Pairs of documents where one's 8-word shingles are mostly (``>= threshold``) in the other:
    ``containment(A, B) = |S(A) & S(B)| / |S(A)|`` (Broder 1997). An inverted index makes it
    linear in the corpus; shingles in more than ``max_df`` documents (boilerplate) are skipped."""
    shingles = {d: _shingles(t) for d, t in documents.items()}
    postings: dict[int, list[str]] = defaultdict(list)
    for d, s in shingles.items():
        for h in s:
            postings[h].append(d)
    shared: Counter = Counter()
    for docs in postings.values():
        if 1 < len(docs) <= max_df:
            for i, a in enumerate(docs):
                for b in docs[i + 1 :]:
                    shared[(a, b)] += 1
    out = []
    for (a, b), n in shared.items():
        for x, y in ((a, b), (b, a)):
            size = len(shingles[x])
            if size and n / size >= threshold:
                out.append({"document": x, "within": y, "containment": round(n / size, 3)})
    return sorted(out, key=lambda r: (-r["containment"], r["document"], r["within"]))
