"""Giskard RAGET test sets: what ``QATestset.save`` writes (pandas ``to_json(orient="records", lines=True)``),
one JSON object per line; or a ``.csv`` file with the same columns (cells stringified, as pandas' ``to_csv``).

Fields read: ``id`` (a uuid; else ``q0001``...), ``question``, ``reference_answer``, ``reference_context``,
``conversation_history`` (``{role, content}`` turns, or that list stringified: ``history.parse_history``) and
``metadata`` (an object, or stringified) whose ``question_type`` (simple, complex, distracting element,
situational, double, conversational, out of scope) is the question's type. Other columns (``agent_answer``,
``correctness``...) are ignored.

``reference_context`` is giskard's ``"\\n\\n".join(f"Document {doc.id}: {doc.content}")``: it is split into
blocks at ``Document <id>: `` markers that start the text or follow a blank line (a block's content may hold
blank lines of its own), and each block's content is located in the corpus like any evidence given as text
(``text_evidence.TextLocator``; field ``reference_context[i]``). Giskard's ids are its knowledge base's, not
the corpus's, so a block is looked for anywhere. An out-of-scope question's context holds the documents its
fake detail was made up around, not an answer: it is not evidence (a question without gold evidence is
unanswerable, ``metrics/abstention.py``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ragsweep.datasets.files import bad_lines_error
from ragsweep.datasets.history import parse_history, unstring
from ragsweep.datasets.questions_table import csv_records, default_qid, json_records, unique_spans
from ragsweep.datasets.text_evidence import TextLocator
from ragsweep.datasets.types import Document, EvidenceSpan, Question, Turn
from ragsweep.errors import RagsweepError

if TYPE_CHECKING:
    from ragsweep.config import GiskardQuestions

OUT_OF_SCOPE = "out of scope"
# a block starts the text or follows a blank line; an id is a number or a uuid (no spaces)
_MARKER = re.compile(r"(?:\A|\n\n)Document (\S+?): ")
# giskard's first RAGET versions stored the contexts as "\n------\n".join(["", *contents, ""])
_OLD_SEPARATOR = re.compile(r"(?:\A|\n)------(?:\n|\Z)")


def context_blocks(text: str) -> list[str]:
    """The documents' contents in a ``reference_context``, surrounding whitespace stripped, blank ones left
    out; text before the first marker is a block too. Without any marker: the old ``------`` separated
    form, else the whole text as one block."""
    marks = list(_MARKER.finditer(text))
    if not marks:
        return [b.strip() for b in _OLD_SEPARATOR.split(text) if b.strip()]
    ends = [m.start() for m in marks[1:]] + [len(text)]
    blocks = [text[: marks[0].start()]] + [text[m.end() : end] for m, end in zip(marks, ends)]
    return [b.strip() for b in blocks if b.strip()]


def _metadata(where: str, value: object) -> dict:
    if isinstance(value, str):
        value = unstring(where, "metadata", value, "JSON nor a Python literal; write it as a JSON object")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RagsweepError(
            f"{where}: field 'metadata' must be an object (with question_type), got {type(value).__name__}"
        )
    return value


def _string(where: str, record: dict, name: str) -> str | None:
    """A text field: None when absent or blank; numbers are taken as their text."""
    value = record.get(name)
    if value is None:
        return None
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise RagsweepError(f"{where}: field {name!r} must be a string, got {type(value).__name__}")
    return str(value).strip() or None


def _qtype(where: str, metadata: dict) -> str | None:
    value = metadata.get("question_type")
    if value is None:
        return None
    if not isinstance(value, str):
        raise RagsweepError(f"{where}: metadata.question_type must be a string, got {type(value).__name__}")
    return value.strip() or None


def is_out_of_scope(qtype: str | None) -> bool:
    """Giskard's ``out of scope`` (also written ``out_of_scope`` or ``out-of-scope``, any case)."""
    return qtype is not None and " ".join(qtype.lower().replace("_", " ").replace("-", " ").split()) == OUT_OF_SCOPE


def _history(where: str, record: dict, metadata: dict) -> tuple[Turn, ...]:
    """``conversation_history``; giskard's first conversational questions kept it in ``metadata``."""
    history = parse_history(where, record.get("conversation_history"), "conversation_history")
    if not history and metadata.get("conversation_history") is not None:
        history = parse_history(where, metadata["conversation_history"], "metadata.conversation_history")
    return history


def _evidence(where: str, qid: str, context: str | None, locator: TextLocator) -> list[EvidenceSpan]:
    spans: list[EvidenceSpan] = []
    for i, block in enumerate(context_blocks(context or "")):
        hit = locator.locate(qid, f"reference_context[{i}]", block)
        if hit is not None:
            spans.append(hit)
    return spans


def _question(where: str, position: int, record: dict, locator: TextLocator) -> Question:
    text = record.get("question")
    if not isinstance(text, str) or not text.strip():
        raise RagsweepError(f"{where}: field 'question' is missing or empty; every record needs a question")
    metadata = _metadata(where, record.get("metadata"))
    qid = _string(where, record, "id") or default_qid(position)
    qtype = _qtype(where, metadata)
    history = _history(where, record, metadata)
    context = _string(where, record, "reference_context")
    spans = [] if is_out_of_scope(qtype) else _evidence(where, qid, context, locator)
    return Question(
        qid=qid,
        question=text.strip(),
        reference_answer=_string(where, record, "reference_answer"),
        evidence=unique_spans(spans),
        qtype=qtype,
        history=history,
    )


def load_giskard_questions(
    spec: GiskardQuestions,
    documents: list[Document],
    notes: list[str] | None = None,
    locator: TextLocator | None = None,
) -> tuple[list[Question], list[str]]:
    """Questions of a giskard test set (JSONL, or CSV by the ``.csv`` suffix), and descriptions (``Unlocated``)
    of context blocks not found in the corpus. Every bad line is reported in one error."""
    path = Path(spec.path)
    errors: list[str] = []
    records = csv_records(path, errors) if path.suffix.lower() == ".csv" else json_records(path, errors)
    locator = locator or TextLocator({d.doc_id: d.text for d in documents})
    questions: list[Question] = []
    for i, (where, record) in enumerate(records, 1):
        try:
            questions.append(_question(where, i, record, locator))
        except RagsweepError as exc:
            errors.append(str(exc))
    if errors:
        raise bad_lines_error(path, errors)
    out_of_scope = sum(is_out_of_scope(q.qtype) for q in questions)
    if notes is not None and out_of_scope:
        notes.append(
            f"{out_of_scope} out-of-scope question(s): their reference_context is not gold evidence "
            f"(no evidence: counted as unanswerable)"
        )
    locator.note_into(notes)
    return questions, list(locator.unlocated)
