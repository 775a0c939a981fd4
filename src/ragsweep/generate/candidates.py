"""A proposed question before it is checked: what every generator produces and the checks read."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Quote:
    """Evidence as text plus where it should be: the checks locate ``text`` (in ``doc_id`` first)."""

    text: str
    doc_id: str | None = None


@dataclass
class Candidate:
    qtype: str
    method: str  # definition | duty | ict | llm | ...
    question: str
    reference_answer: str | None
    quotes: list[Quote] = field(default_factory=list)
    out_of_scope_term: str | None = None  # offline out-of-scope: the term verified absent from ``doc_id``
    doc_id: str | None = None  # the document the question is about (out of scope: where the term is absent)
    source: dict = field(default_factory=dict)  # provenance written with the question (passages, facts)
    history: list[dict] = field(default_factory=list)  # a follow-up's conversation before it ({role, content})

    @property
    def out_of_scope(self) -> bool:
        return self.qtype == "out_of_scope"
