"""Reference baselines: their contexts (pure), then (work in progress) their rows in a sweep."""

from __future__ import annotations

import pytest

from ragsweep.baselines.contexts import Span, context_spans, document_spans, oracle_spans
from ragsweep.datasets.types import EvidenceSpan

LENGTHS = {"a": 1000, "b": 300, "c": 50}


def test_oracle_is_the_gold_spans_merged_in_document_order_without_copies():
    ev = (
        EvidenceSpan("b", 10, 40),
        EvidenceSpan("a", 100, 200),
        EvidenceSpan("a", 150, 260),  # overlaps the one before: one passage
        EvidenceSpan("c", 0, 20, copy_of=0),  # a copy of b's text elsewhere: the same evidence
        EvidenceSpan("a", 500, 520),
    )
    assert oracle_spans(ev) == [Span("a", 100, 260), Span("a", 500, 520), Span("b", 10, 40)]
    assert context_spans("oracle", ev, LENGTHS.__getitem__) == oracle_spans(ev)


def test_full_documents_in_evidence_order_until_the_budget_is_spent():
    ev = (EvidenceSpan("b", 10, 40), EvidenceSpan("a", 100, 200), EvidenceSpan("b", 50, 60))
    assert document_spans(ev, LENGTHS.__getitem__) == [Span("b", 0, 300), Span("a", 0, 1000)]
    assert document_spans(ev, LENGTHS.__getitem__, 500) == [Span("b", 0, 300), Span("a", 0, 200)]
    assert document_spans(ev, LENGTHS.__getitem__, 300) == [Span("b", 0, 300)]
    assert document_spans((), LENGTHS.__getitem__, 300) == []


def test_no_retrieval_has_no_context_and_unknown_kinds_are_refused():
    assert context_spans("no_retrieval", (EvidenceSpan("a", 0, 5),), LENGTHS.__getitem__) == []
    with pytest.raises(ValueError, match="unknown baseline 'bm25'"):
        context_spans("bm25", (), LENGTHS.__getitem__)
