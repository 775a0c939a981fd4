"""Evidence given as text: located in the corpus in tiers, every outcome counted and every miss kept.

Tiers, in order (``locate.CorpusIndex``): **exact** (the text verbatim), **normalised** (equal after
``normalise.py``: whitespace, hyphenation at line breaks, quotes, dashes, ligatures, NFKC), and,
only when ``dataset.fuzzy_evidence`` sets a threshold, **fuzzy** (the most similar place, kept when
its similarity reaches the threshold; reported separately). A text found nowhere is *unlocated*:
kept with its closest match and that match's similarity, so the user can see why.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from ragsweep.datasets.locate import MIN_COPY_CHARS, CorpusIndex, Match
from ragsweep.datasets.types import EvidenceSpan


def snippet(text: str, width: int = 60) -> str:
    """Quote text on one line, shortened, for error messages."""
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= width else flat[: width - 1] + "…", ensure_ascii=False)


class Unlocated(str):
    """A one-line description of evidence text not found in the corpus; ``qid`` names its question,
    ``record`` holds what ``unlocated_evidence.jsonl`` writes (text, closest match, similarity)."""

    qid: str
    record: dict

    def __new__(cls, qid: str, description: str, record: dict | None = None) -> "Unlocated":
        obj = super().__new__(cls, f"question {qid!r} {description}")
        obj.qid = qid
        obj.record = record or {"qid": qid}
        return obj


@dataclass
class TextLocator:
    """Locates evidence given as text, counting each text's tier (``tiers``) and keeping the misses."""

    documents: dict[str, str]
    fuzzy: float | None = None
    tiers: Counter = field(default_factory=Counter)
    unlocated: list[Unlocated] = field(default_factory=list)
    index: CorpusIndex | None = None
    located: set = field(default_factory=set)  # (qid, EvidenceSpan) of every text found

    def __post_init__(self) -> None:
        if self.index is None:
            self.index = CorpusIndex(self.documents)

    @property
    def total(self) -> int:
        return sum(self.tiers.values()) + len(self.unlocated)

    def locate(self, qid: str, where: str, text: str, doc_id: str | None = None) -> EvidenceSpan | None:
        """The text's span (the first place found, in tier order), or None (recorded as unlocated)."""
        from ragsweep.datasets.normalise import normalise_needle

        index = self.index
        assert index is not None  # __post_init__ sets it
        match: Match | None = index.exact(text, doc_id)
        norm = normalise_needle(text)
        if match is None:
            found = index.normalised_all(norm, doc_id)
            whole = [m for m in found if index.at_boundaries(m)]
            # a short quote may match across words once spaces are dropped ("a test" in "latest"): only
            # a long one may be taken from inside words
            match = whole[0] if whole else (found[0] if found and len(norm) >= MIN_COPY_CHARS else None)
        closest = None
        if match is None:
            closest = index.closest(norm, doc_id)
            if closest is not None and self.fuzzy is not None and closest.similarity >= self.fuzzy:
                match = closest
        if match is not None:
            self.tiers[match.tier] += 1
            span = EvidenceSpan(match.doc_id, match.start, match.end)
            self.located.add((qid, span))
            return span
        place = f"{doc_id!r}" if doc_id is not None else "the corpus"
        record: dict[str, object] = {
            "qid": qid,
            "field": where,
            "doc_id": doc_id,
            "text": text,
            "closest_doc_id": None,
            "closest_start": None,
            "closest_end": None,
            "closest_text": None,
            "similarity": 0.0,
        }
        near = ""
        if closest is not None:
            closest_text = self.documents[closest.doc_id][closest.start : closest.end]
            record.update(
                closest_doc_id=closest.doc_id,
                closest_start=closest.start,
                closest_end=closest.end,
                closest_text=closest_text,
                similarity=closest.similarity,
            )
            near = f"; closest: {snippet(closest_text, 40)} in {closest.doc_id!r} (similarity {closest.similarity:.3f})"
        self.unlocated.append(Unlocated(qid, f"{where}: text {snippet(text)} not found in {place}{near}", record))
        return None

    def summary(self) -> dict:
        """Counts per tier plus ``unlocated`` and ``total`` (the manifest's ``evidence_location``)."""
        out: dict[str, int | float | None] = {
            tier: int(self.tiers.get(tier, 0)) for tier in ("exact", "normalised", "fuzzy")
        }
        out.update(unlocated=len(self.unlocated), total=self.total, fuzzy_threshold=self.fuzzy)
        return out

    def note_into(self, notes: list[str] | None) -> None:
        if notes is None or not self.total:
            return
        s = self.summary()
        found = s["total"] - s["unlocated"]
        detail = f"exact {s['exact']}, normalised {s['normalised']}"
        if self.fuzzy is not None:
            detail += f", fuzzy (similarity >= {self.fuzzy}) {s['fuzzy']}"
        notes.append(f"evidence located by text: {found}/{s['total']} ({detail})")
