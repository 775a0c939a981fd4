"""The checks every generated question passes before it is written: its evidence occurs in the corpus.

Evidence quotes are located by the same tiers as a dataset's evidence text (``datasets.text_evidence``:
exact, normalised, then fuzzy only above ``generate.fuzzy_evidence``), in the document they were drawn
from first, then anywhere. An out-of-scope question instead names terms that must occur nowhere it asks
about (a word-boundary, case- and normalisation-insensitive search). Before that, placeholders and text
copied from the prompt template are rejected (``placeholders``): a placeholder term is "absent" too. Anything
that cannot be verified is rejected with a reason, and counted.
"""

from __future__ import annotations

from ragsweep.datasets.text_evidence import TextLocator, snippet
from ragsweep.datasets.types import EvidenceSpan
from ragsweep.generate import placeholders
from ragsweep.generate.candidates import Candidate
from ragsweep.generate.placeholders import fold

REASONS = (
    placeholders.EMPTY,
    placeholders.PROMPT_ECHO,
    "unparseable reply",
    "empty question",
    "no earlier question",
    *placeholders.REASONS,
    "no evidence",
    "evidence too short",
    "evidence not in corpus",
    "out-of-scope term in corpus",
    "no out-of-scope term",
    "near-duplicate",
)


class Checker:
    def __init__(self, documents: dict[str, str], fuzzy: float | None = None, min_chars: int = 20) -> None:
        self.documents = documents
        self.locator = TextLocator(documents, fuzzy)
        self.min_chars = min_chars
        self._folded = {d: fold(t) for d, t in documents.items()}

    def verbatim(self, text: str) -> bool:
        """Whether ``text`` occurs character for character in some document."""
        return any(text in t for t in self.documents.values())

    def present(self, term: str, doc_id: str | None) -> bool:
        """Whether ``term`` occurs (as whole words, case, punctuation and line breaks aside) in ``doc_id`` or,
        when None, anywhere; an empty term counts as present (it cannot be verified absent)."""
        needle = fold(term)
        if needle == " ":
            return True
        texts = [self._folded[doc_id]] if doc_id is not None else self._folded.values()
        return any(needle in t for t in texts)

    def check(self, qid: str, c: Candidate) -> tuple[list[EvidenceSpan], str | None]:
        """The question's located evidence spans, or a rejection reason (one of ``REASONS``) with detail."""
        if not c.question.strip():
            return [], "empty question"
        if c.qtype == "conversational" and not c.history:  # a follow-up without the conversation it follows
            return [], 'no earlier question: a follow-up is written "Earlier: ... Follow-up: ..."'
        fake = placeholders.problem(c, self.verbatim)
        if fake is not None:
            return [], fake
        if c.out_of_scope:
            terms = c.source.get("absent_terms") or ([c.out_of_scope_term] if c.out_of_scope_term else [])
            if not terms:
                return [], "no out-of-scope term"
            found = next((t for t in terms if self.present(t, c.doc_id)), None)
            if found is not None:
                return [], f"out-of-scope term in corpus: {snippet(found, 40)}"
            return [], None
        if not c.quotes:
            return [], "no evidence"
        spans: list[EvidenceSpan] = []
        for i, q in enumerate(c.quotes):
            if len(q.text.strip()) < self.min_chars:
                return [], f"evidence too short: {snippet(q.text, 40)} ({len(q.text.strip())} < {self.min_chars} chars)"
            span = self.locator.locate(qid, f"evidence[{i}]", q.text, q.doc_id) if q.doc_id in self.documents else None
            if span is None:
                span = self.locator.locate(qid, f"evidence[{i}]", q.text)
            if span is None:
                return [], f"evidence not in corpus: {snippet(q.text, 60)}"
            spans.append(span)
        return list(dict.fromkeys(spans)), None

    def tiers(self) -> dict:
        s = self.locator.summary()
        return {k: s[k] for k in ("exact", "normalised", "fuzzy")}
