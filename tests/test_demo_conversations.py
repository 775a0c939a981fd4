"""The demo's follow-up questions (``dataset.questions.conversations``): off, the demo questions are exactly what
they were; on, the follow-ups come after them, each with its history and its gold evidence located."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ragsweep.config import DatasetSpec
from ragsweep.datasets.load import load_dataset

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "scripts" / "demo-data"
DEMO = ROOT / "src" / "ragsweep" / "datasets" / "demo"
DEMO_QUESTIONS = 107


@pytest.fixture(scope="module")
def plain():
    return load_dataset(DatasetSpec())


@pytest.fixture(scope="module")
def with_follow_ups():
    return load_dataset(DatasetSpec(questions={"format": "demo", "conversations": True}))


def _follow_ups(dataset):
    return [q for q in dataset.questions if q.qtype == "conversational"]


def test_the_flag_off_gives_the_demo_questions_unchanged(plain):
    flag_off = load_dataset(DatasetSpec(questions={"format": "demo", "conversations": False}))
    assert len(flag_off.questions) == DEMO_QUESTIONS and not _follow_ups(flag_off)
    assert flag_off.fingerprint() == plain.fingerprint()
    assert all(not q.history for q in flag_off.questions)


def test_the_flag_on_appends_the_follow_ups(plain, with_follow_ups):
    questions = with_follow_ups.questions
    follow_ups = questions[DEMO_QUESTIONS:]
    assert [q.qid for q in questions[:DEMO_QUESTIONS]] == [q.qid for q in plain.questions]
    assert questions[:DEMO_QUESTIONS] == plain.questions
    assert 28 <= len(follow_ups) <= 32 and follow_ups == _follow_ups(with_follow_ups)
    assert len({q.qid for q in questions}) == len(questions)
    assert [q.qid for q in follow_ups] == [f"c{n:03d}" for n in range(1, len(follow_ups) + 1)]
    assert with_follow_ups.fingerprint() != plain.fingerprint()
    assert not with_follow_ups.evidence["unlocated"]


def test_each_follow_up_has_a_history_an_answer_and_located_evidence(with_follow_ups):
    from ragsweep.datasets.normalise import normalise

    texts = {d.doc_id: d.text for d in with_follow_ups.documents}
    lines = (DEMO / "conversations.jsonl").read_text(encoding="utf-8").splitlines()
    rows = {r["id"]: r for r in map(json.loads, lines)}
    for q in _follow_ups(with_follow_ups):
        assert q.reference_answer and 1 <= len(q.history) <= 3, q.qid
        assert q.history[0].role == "user", q.qid
        assert all(t.role in ("user", "assistant") and t.content.strip() for t in q.history), q.qid
        quoted = [(e["doc_id"], e["text"]) for e in rows[q.qid]["evidence"]]
        gold = [e for e in q.evidence if e.copy_of is None]  # a copy found elsewhere would follow its original
        assert len(gold) == len(quoted) >= 1, q.qid
        for span, (doc_id, text) in zip(gold, quoted):
            found = texts[span.doc_id][span.start : span.end]
            assert span.doc_id == doc_id, q.qid
            # verbatim in a plain document; a clean quote of a PDF-like one matches its text once normalised
            assert normalise(found).text == normalise(text).text, q.qid


NAMES = ("Tessaly", "Dunmore", "Ashby Vale", "Kestrel Valley", "Orinth", "Quillfeather", "Skyvault", "Harlan Braddock")
NAMES += ("Greenway", "Meridian")


def test_no_follow_up_names_its_document(with_follow_ups):
    titles = {d.doc_id: d.metadata.get("title", "") for d in with_follow_ups.documents}
    assert all(titles.values())
    for q in _follow_ups(with_follow_ups):
        assert all(titles[e.doc_id].lower() not in q.question.lower() for e in q.evidence), q.qid
        assert not any(name in q.question for name in NAMES), q.qid
        # ...and its history does name the organisation (so the follow-up can be resolved)
        assert any(name in t.content for t in q.history if t.role == "user" for name in NAMES), q.qid


def test_every_document_is_cited(with_follow_ups):
    cited = {e.doc_id for q in _follow_ups(with_follow_ups) for e in q.evidence if e.copy_of is None}
    assert cited == {d.doc_id for d in with_follow_ups.documents}


def test_shipped_conversations_are_built_from_the_yaml_source():
    spec = importlib.util.spec_from_file_location("demo_data_build_demo_conv", SOURCES / "build_demo.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    docs = build.build_documents()
    questions, _ = build.build_questions(docs)
    conversations, _ = build.build_conversations(docs, questions)
    lines = [json.dumps(r, ensure_ascii=False) for r in conversations]
    assert lines == (DEMO / "conversations.jsonl").read_text(encoding="utf-8").splitlines()
