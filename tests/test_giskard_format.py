"""Giskard RAGET test sets (``questions: {format: giskard}``), the ``history`` of table questions, and what
``ragsweep validate`` says about follow-up questions."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest
import yaml

from ragsweep.config import DatasetSpec, GiskardQuestions
from ragsweep.datasets import load_dataset
from ragsweep.datasets.giskard import context_blocks, load_giskard_questions
from ragsweep.datasets.types import Dataset, Document, EvidenceSpan, Question, Turn
from ragsweep.datasets.validation import evidence_lines, history_line
from ragsweep.errors import RagsweepError

RENT = "The tenant shall pay rent on the first day of each month.\n\nLate payment incurs a fee of 5%."
DOCS = {
    "lease": RENT + "\nThe landlord may end the lease after two missed payments.",
    "privacy": "We collect your email address. We never sell personal data to third parties.",
    "refunds": "Refunds are issued within 30 days of a returned purchase.",
}
UUID = "6f1c2a9e-3b7d-4e58-9a0b-2c4d6e8f0a1b"
INTRO = [{"role": "user", "content": "I want to know which personal data you collect."}]


def documents() -> list[Document]:
    return [Document(k, v) for k, v in DOCS.items()]


def context(*blocks: tuple[object, str]) -> str:
    """What giskard writes: ``"\\n\\n".join(f"Document {doc.id}: {doc.content}")``."""
    return "\n\n".join(f"Document {doc_id}: {content}" for doc_id, content in blocks)


def records() -> list[dict]:
    return [
        {
            "id": UUID,
            "question": "When is rent due, and what if it is late?",
            "reference_answer": "On the first day of the month; late payment costs 5%.",
            "reference_context": context((0, RENT), (1, "We never sell personal data to third parties.")),
            "conversation_history": [],
            "metadata": {"question_type": "double", "seed_document_id": 0, "topic": "Rent"},
        },
        {
            "id": "q-conv",
            "question": "What is it?",
            "reference_answer": "Your email address.",
            "reference_context": context(("0b7e4f2a-1c3d-4e5f-8a9b-0c1d2e3f4a5b", "We collect your email address.")),
            "conversation_history": INTRO,
            "metadata": {"question_type": " conversational ", "seed_document_id": 1, "topic": "Privacy"},
        },
        {
            "id": "q-oos",
            "question": "How much does a refund cost?",
            "reference_answer": "This question can not be answered by the context.",
            "reference_context": context((2, DOCS["refunds"])),
            "conversation_history": [],
            "metadata": {"question_type": "out of scope", "seed_document_id": 2, "fake_fact": "a fee"},
        },
        {
            "id": "q-missing",
            "question": "Are pets allowed?",
            "reference_answer": "No.",
            "reference_context": context((3, "Pets are not allowed in the building.")),
            "conversation_history": [],
            "metadata": {"question_type": "simple", "seed_document_id": 3, "topic": "Pets"},
        },
        {
            "question": "Can the landlord end the lease?",
            "reference_answer": "After two missed payments.",
            "reference_context": "",
            "conversation_history": [],
            "metadata": {"question_type": "simple"},
            "agent_answer": "Yes.",  # a column giskard's evaluation adds: ignored
        },
    ]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def stringified(row: dict) -> dict:
    """The row as pandas writes a CSV cell: ``str(list)`` and ``str(dict)`` (Python literals)."""
    return {k: str(v) if isinstance(v, (list, dict)) else v for k, v in row.items()}


def write_csv(path: Path, rows: list[dict]) -> Path:
    columns = ["id", "question", "reference_answer", "reference_context", "conversation_history", "metadata"]
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[*columns, "agent_answer"])
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in stringified(row).items()})
    return path


def load(path: Path, notes: list[str] | None = None):
    return load_giskard_questions(GiskardQuestions(format="giskard", path=path), documents(), notes)


def span_of(doc_id: str, text: str) -> EvidenceSpan:
    start = DOCS[doc_id].index(text)
    return EvidenceSpan(doc_id, start, start + len(text))


def check(questions: list[Question], unlocated: list[str] | None = None) -> None:
    """What every form of the test set loads to (``unlocated``: what the loader returned, when given)."""
    by_id = {q.qid: q for q in questions}
    assert list(by_id) == [UUID, "q-conv", "q-oos", "q-missing", "q0005"]
    double = by_id[UUID]
    assert double.qtype == "double" and double.history == ()
    assert double.reference_answer == "On the first day of the month; late payment costs 5%."
    # the first block spans a blank line and is located whole
    assert double.evidence == (
        span_of("lease", RENT),
        span_of("privacy", "We never sell personal data to third parties."),
    )
    lease = double.evidence[0]
    assert DOCS["lease"][lease.start : lease.end] == RENT
    conv = by_id["q-conv"]
    assert conv.qtype == "conversational"  # surrounding whitespace dropped, the word kept
    assert conv.history == (Turn("user", "I want to know which personal data you collect."),)
    assert conv.evidence == (span_of("privacy", "We collect your email address."),)
    assert by_id["q-oos"].qtype == "out of scope" and by_id["q-oos"].evidence == ()
    assert by_id["q-missing"].evidence == ()
    assert by_id["q0005"].evidence == () and by_id["q0005"].qtype == "simple"
    if unlocated is None:
        return
    assert len(unlocated) == 1
    assert unlocated[0].qid == "q-missing" and "reference_context[0]" in unlocated[0]
    assert "Pets are not allowed" in unlocated[0]


# --------------------------------------------------------------------------- reading the file
def test_jsonl_as_giskard_saves_it(tmp_path: Path) -> None:
    notes: list[str] = []
    questions, unlocated = load(write_jsonl(tmp_path / "testset.jsonl", records()), notes)
    check(questions, unlocated)
    assert "evidence located by text: 3/4 (exact 3, normalised 0)" in notes
    assert any("1 out-of-scope question(s)" in n for n in notes)


def test_jsonl_with_stringified_history_and_metadata(tmp_path: Path) -> None:
    rows = records()
    for row in rows:
        row["metadata"] = str(row["metadata"])  # Python literal
    rows[1]["conversation_history"] = json.dumps(INTRO)  # JSON text
    rows[0]["conversation_history"] = "[]"
    check(*load(write_jsonl(tmp_path / "testset.jsonl", rows)))


def test_csv_with_the_same_columns(tmp_path: Path) -> None:
    rows = records()
    rows[1]["metadata"] = json.dumps(rows[1]["metadata"])  # a JSON cell reads as well as a Python literal
    check(*load(write_csv(tmp_path / "testset.csv", rows)))


def test_history_kept_in_metadata_by_early_giskard(tmp_path: Path) -> None:
    row = records()[1]
    row["conversation_history"] = []
    row["metadata"]["conversation_history"] = INTRO
    (question,), _ = load(write_jsonl(tmp_path / "t.jsonl", [row]))
    assert question.history == (Turn("user", INTRO[0]["content"]),)


def test_context_blocks() -> None:
    two = context((12, "first\n\nstill first"), (UUID, "second"))
    assert context_blocks(two) == ["first\n\nstill first", "second"]
    assert context_blocks("") == [] and context_blocks("  \n") == []
    # a marker only counts at the start or after a blank line
    assert context_blocks("Document 1: see Document 2: x") == ["see Document 2: x"]
    assert context_blocks("Document 1: a\nDocument 2: b") == ["a\nDocument 2: b"]
    # no marker: giskard's early "------" separated form, else the whole text
    assert context_blocks("\n------\nalpha\n------\nbeta\n------\n") == ["alpha", "beta"]
    assert context_blocks("just a quote") == ["just a quote"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"conversation_history": [{"role": "bot", "content": "hi"}]}, "conversation_history[0].role is 'bot'"),
        ({"conversation_history": {"role": "user", "content": "hi"}}, "must be a list of {role, content} turns"),
        ({"conversation_history": "not a list ["}, "neither a JSON list nor a Python list literal"),
        ({"question": "  "}, "field 'question' is missing or empty"),
        ({"metadata": ["simple"]}, "field 'metadata' must be an object"),
        ({"metadata": "{'question_type': "}, "field 'metadata' is neither JSON nor a Python literal"),
        ({"metadata": {"question_type": 3}}, "metadata.question_type must be a string"),
        ({"reference_context": ["a"]}, "field 'reference_context' must be a string"),
    ],
)
def test_a_bad_line_is_one_line_naming_file_line_and_field(tmp_path: Path, change: dict, expected: str) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [records()[0], {**records()[1], **change}])
    with pytest.raises(RagsweepError) as exc:
        load(path)
    message = str(exc.value)
    assert "\n" not in message and message.startswith(f"{path}:line 2: ") and expected in message


def test_every_bad_line_is_reported_together(tmp_path: Path) -> None:
    rows = records()
    rows[1]["conversation_history"] = [{"role": "bot", "content": "hi"}]
    rows[3]["conversation_history"] = "{'role': 'user'}"
    path = write_jsonl(tmp_path / "t.jsonl", rows)
    with pytest.raises(RagsweepError) as exc:
        load(path)
    lines = str(exc.value).splitlines()
    assert lines[0] == f"2 bad line(s) in {path}; fix them:"
    assert lines[1].startswith(f"  {path}:line 2: ") and "'bot'" in lines[1]
    assert lines[2].startswith(f"  {path}:line 4: ") and "must be a list" in lines[2]


def test_csv_bad_history_names_the_row_line(tmp_path: Path) -> None:
    rows = records()[:2]
    rows[1]["conversation_history"] = [{"role": "bot", "content": "hi"}]
    path = write_csv(tmp_path / "t.csv", rows)
    with pytest.raises(RagsweepError, match=r":line 7: conversation_history\[0\]\.role is 'bot'"):
        load(path)  # the header is line 1 and the first row's context, with its blank lines, lines 2-6


# --------------------------------------------------------------------------- through load_dataset and validate
def corpus(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "corpus.jsonl", [{"id": k, "text": v} for k, v in DOCS.items()])


def test_load_dataset_with_a_giskard_spec(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "testset.jsonl", records())
    dataset = {"corpus": {"format": "jsonl", "path": str(corpus(tmp_path))}, "questions": {"format": "giskard"}}
    dataset["questions"]["path"] = str(path)
    with pytest.raises(RagsweepError, match="1 evidence text"):  # unlocated_evidence: error by default
        load_dataset(DatasetSpec(**dataset))
    ds = load_dataset(DatasetSpec(**dataset, unlocated_evidence="keep_question"))
    check(ds.questions)
    assert ds.evidence["located_by_text"] == 3 and ds.evidence["unlocated"][0]["field"] == "reference_context[0]"
    assert history_line(ds) == "follow-up questions with history: 1 of 5 (types: conversational 1)"
    assert evidence_lines(ds)[0] == history_line(ds)
    dropped = load_dataset(DatasetSpec(**dataset, unlocated_evidence="drop_question"))
    assert "q-missing" not in {q.qid for q in dropped.questions}


def test_validate_prints_the_history_line(tmp_path: Path, run_cli) -> None:
    write_jsonl(tmp_path / "testset.jsonl", records())
    corpus(tmp_path)
    spec = {
        "name": "giskard",
        "output_dir": str(tmp_path / "runs"),
        "dataset": {
            "corpus": {"format": "jsonl", "path": "corpus.jsonl"},
            "questions": {"format": "giskard", "path": "testset.jsonl"},
            "unlocated_evidence": "keep_question",
        },
        "splitters": [{"kind": "token", "chunk_size": 64, "chunk_overlap": 0}],
        "embeddings": [],
        "retrievers": [{"kind": "bm25"}],
        "top_k": [3],
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    proc = run_cli("validate", tmp_path / "spec.yaml")
    assert proc.returncode == 0, proc.stderr
    assert "follow-up questions with history: 1 of 5 (types: conversational 1)" in proc.stdout


def test_no_history_line_without_follow_ups() -> None:
    ds = Dataset("d", documents(), [Question("q1", "When?"), Question("q2", "Who?", qtype="simple")])
    assert history_line(ds) is None
    assert not any("history" in line for line in evidence_lines(ds))
    ds.questions.append(Question("q3", "And then?", history=(Turn("user", "Rent."),)))
    assert history_line(ds) == "follow-up questions with history: 1 of 3 (types: untyped 1)"


# --------------------------------------------------------------------------- history in a jsonl table
def old_fingerprint(ds: Dataset) -> str:
    """``Dataset.fingerprint`` as it was before questions had a history."""
    corpus_hash = hashlib.sha256()
    for d in sorted(ds.documents, key=lambda d: d.doc_id):
        corpus_hash.update(d.doc_id.encode() + b"\0" + d.text.encode() + b"\0")
    h = hashlib.sha256(corpus_hash.hexdigest()[:16].encode())
    for q in ds.questions:
        evidence = [[e.doc_id, e.start, e.end] + ([e.copy_of] if e.copy_of is not None else []) for e in q.evidence]
        h.update(json.dumps([q.qid, q.question, q.reference_answer, evidence, q.qtype], ensure_ascii=False).encode())
    return h.hexdigest()[:16]


def table_spec(tmp_path: Path, rows: list[dict]) -> DatasetSpec:
    path = write_jsonl(tmp_path / "q.jsonl", rows)
    return DatasetSpec(
        corpus={"format": "jsonl", "path": corpus(tmp_path)}, questions={"format": "jsonl", "path": path}
    )


def test_jsonl_table_history_and_unchanged_fingerprint_without_it(tmp_path: Path) -> None:
    alone = {"id": "q1", "question": "When is rent due?", "reference_contexts": [RENT], "type": "simple"}
    ds = load_dataset(table_spec(tmp_path, [alone]))
    assert ds.questions[0].history == ()
    assert ds.fingerprint() == old_fingerprint(ds) == "05042c4ef7c54bfe"  # computed with the code before histories
    follow_up = {"id": "q2", "question": "And if late?", "history": INTRO + [{"role": "assistant", "content": "Ok."}]}
    with_history = load_dataset(table_spec(tmp_path, [alone, follow_up]))
    assert with_history.questions[1].history == (Turn("user", INTRO[0]["content"]), Turn("assistant", "Ok."))
    assert with_history.fingerprint() != old_fingerprint(with_history)  # a history is part of the content
    assert history_line(with_history) == "follow-up questions with history: 1 of 2 (types: untyped 1)"
