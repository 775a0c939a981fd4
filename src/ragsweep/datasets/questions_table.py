"""Questions as a table: JSON Lines or CSV, one question per record.

Fields: ``question`` (required), ``id``, ``reference_answer`` (alias ``answer``), ``type`` (alias
``question_type``), ``evidence`` (objects with ``doc_id`` and ``start``/``end`` and/or ``text``) and
``reference_contexts`` (strings found anywhere in the corpus) and ``history`` (alias ``conversation_history``:
the ``{role, content}`` turns before a follow-up question, ``datasets/history.py``). In CSV the list columns hold
JSON. Evidence given only as text is located here (in tiers: ``text_evidence.TextLocator``); what was
not found is returned, not raised, because ``dataset.unlocated_evidence`` (applied in ``load.py``)
decides what to do with it.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsweep.datasets.files import bad_lines_error, read_text_strict
from ragsweep.datasets.history import parse_history
from ragsweep.datasets.jsonl_corpus import iter_jsonl
from ragsweep.datasets.text_evidence import TextLocator, snippet
from ragsweep.datasets.types import Document, EvidenceSpan, Question
from ragsweep.errors import RagsweepError

if TYPE_CHECKING:
    from ragsweep.config import TableQuestions

_ALIASES = {"reference_answer": "answer", "type": "question_type", "history": "conversation_history"}
_KNOWN = {
    "id",
    "question",
    "reference_answer",
    "answer",
    "type",
    "question_type",
    "evidence",
    "reference_contexts",
    "history",
    "conversation_history",
}
_EVIDENCE_KEYS = {"doc_id", "start", "end", "text"}


def default_qid(position: int) -> str:
    return f"q{position:04d}"


def same_text(a: str, b: str) -> bool:
    """Equal up to whitespace (the same tolerance ``find_span`` applies)."""
    return a.split() == b.split()


def unique_spans(spans: list[EvidenceSpan]) -> tuple[EvidenceSpan, ...]:
    return tuple(dict.fromkeys(spans))


# --------------------------------------------------------------------------- reading records
def json_records(path: Path, errors: list[str]) -> Iterator[tuple[str, dict]]:
    """Records with their location; lines that are no JSON object are described in ``errors``."""
    for n, obj in iter_jsonl(path, errors):
        yield f"{path}:line {n}", obj


def csv_records(path: Path, errors: list[str]) -> Iterator[tuple[str, dict]]:
    """Rows as dicts; empty cells count as absent. The location is the line the row starts on. A row
    with too many cells is described in ``errors``; malformed quoting ends the file there. The header must
    name a ``question`` column (also read for giskard's CSV, ``giskard.py``)."""
    if not path.is_file():
        raise RagsweepError(f"{path}: file not found; fix the path in the spec")
    text = read_text_strict(path).removeprefix("\ufeff")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return
    header = [h.strip() for h in header]
    if "question" not in header:
        raise RagsweepError(
            f"{path}:line 1: no 'question' column (columns: {', '.join(header) or 'none'}); "
            f"the header row must name a 'question' column"
        )
    start = reader.line_num + 1
    try:
        for row in reader:
            where = f"{path}:line {start}"
            start = reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(header):
                errors.append(
                    f"{where}: {len(row)} cells but the header has {len(header)} columns; "
                    f"quote cells that contain commas"
                )
                continue
            yield where, {k: v for k, v in zip(header, row) if v.strip()}
    except csv.Error as exc:
        errors.append(f"{path}:line {reader.line_num}: malformed CSV ({exc}); check the quoting")


# --------------------------------------------------------------------------- one record
def _check_keys(where: str, record: dict) -> None:
    """Ignore extra columns, but refuse near-misses of known names (a typo would silently drop evidence)."""
    for key in record:
        if key in _KNOWN:
            continue
        close = difflib.get_close_matches(str(key), sorted(_KNOWN), n=1, cutoff=0.8)
        if close:
            raise RagsweepError(f"{where}: unknown field {key!r}; did you mean {close[0]!r}?")
    for name, alias in _ALIASES.items():
        if name in record and alias in record:
            raise RagsweepError(f"{where}: both {name!r} and its alias {alias!r} are given; keep one")


def _optional_str(where: str, record: dict, name: str) -> str | None:
    value = record.get(name, record.get(_ALIASES.get(name, ""), None))
    if value is None:
        return None
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise RagsweepError(f"{where}: field {name!r} must be a string, got {type(value).__name__}")
    return str(value) if str(value).strip() else None


def _json_list(where: str, record: dict, name: str) -> list:
    value = record.get(name)
    if value is None:
        return []
    if isinstance(value, str):  # a CSV cell (or a JSONL value stored as a string)
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise RagsweepError(
                f"{where}: field {name!r} is not valid JSON ({exc.msg} at column {exc.colno}); write it as a JSON list"
            ) from None
    if not isinstance(value, list):
        raise RagsweepError(f"{where}: field {name!r} must be a JSON list, got {type(value).__name__}")
    return value


def _doc_text(where: str, what: str, doc_id: Any, documents: dict[str, str]) -> str:
    if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool):
        raise RagsweepError(f"{where}: {what}.doc_id must be a string")
    text = documents.get(str(doc_id))
    if text is None:
        examples = ", ".join(repr(d) for d in list(documents)[:3])
        raise RagsweepError(
            f"{where}: {what}.doc_id {str(doc_id)!r} is not in the corpus (ids look like {examples}); fix the id"
        )
    return text


def _span(where: str, what: str, item: dict, doc_id: str, doc: str) -> EvidenceSpan:
    start, end = item["start"], item["end"]
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)):
        raise RagsweepError(f"{where}: {what}.start and .end must be integers")
    if start < 0 or end <= start:
        raise RagsweepError(f"{where}: {what} span [{start}, {end}) is empty or negative; need 0 <= start < end")
    if end > len(doc):
        raise RagsweepError(
            f"{where}: {what} span [{start}, {end}) is past the end of {doc_id!r} "
            f"({len(doc)} characters); fix start/end"
        )
    if "text" in item and not same_text(str(item["text"]), doc[start:end]):
        raise RagsweepError(
            f"{where}: {what}.text {snippet(str(item['text']))} does not match its span [{start}, "
            f"{end}) of {doc_id!r}, which reads {snippet(doc[start:end])}; fix start/end or the text"
        )
    return EvidenceSpan(doc_id, start, end)


def _evidence(where: str, qid: str, items: list, documents: dict[str, str], locator: TextLocator) -> list[EvidenceSpan]:
    spans: list[EvidenceSpan] = []
    for i, item in enumerate(items):
        what = f"evidence[{i}]"
        if not isinstance(item, dict):
            raise RagsweepError(f"{where}: {what} must be an object with doc_id and start/end or text")
        extra = set(item) - _EVIDENCE_KEYS
        if extra:
            raise RagsweepError(
                f"{where}: {what} has unknown key(s) {', '.join(sorted(map(repr, extra)))}; "
                f"allowed: doc_id, start, end, text"
            )
        has_span = "start" in item or "end" in item
        if has_span and not ("start" in item and "end" in item):
            raise RagsweepError(f"{where}: {what} gives only one of start/end; give both, or only text")
        if not has_span and not (isinstance(item.get("text"), str) and item["text"].strip()):
            raise RagsweepError(f"{where}: {what} needs start and end, or a non-empty text")
        if has_span:
            if "doc_id" not in item:
                raise RagsweepError(f"{where}: {what} has a span but no doc_id; add the document id")
            doc = _doc_text(where, what, item["doc_id"], documents)
            spans.append(_span(where, what, item, str(item["doc_id"]), doc))
        else:
            doc_id = None
            if "doc_id" in item:
                _doc_text(where, what, item["doc_id"], documents)
                doc_id = str(item["doc_id"])
            hit = locator.locate(qid, what, item["text"], doc_id)
            if hit is not None:
                spans.append(hit)
    return spans


def _contexts(where: str, qid: str, items: list, locator: TextLocator) -> list[EvidenceSpan]:
    spans: list[EvidenceSpan] = []
    for i, text in enumerate(items):
        if not isinstance(text, str) or not text.strip():
            raise RagsweepError(f"{where}: reference_contexts[{i}] must be a non-empty string")
        hit = locator.locate(qid, f"reference_contexts[{i}]", text)
        if hit is not None:
            spans.append(hit)
    return spans


def _history(where: str, record: dict):
    name = "history" if "history" in record else "conversation_history"
    return parse_history(where, record.get(name), name)


def _question(where: str, position: int, record: dict, documents: dict[str, str], locator: TextLocator) -> Question:
    _check_keys(where, record)
    text = record.get("question")
    if not isinstance(text, str) or not text.strip():
        raise RagsweepError(f"{where}: field 'question' is missing or empty; every record needs a question")
    qid = _optional_str(where, record, "id") or default_qid(position)
    spans = _evidence(where, qid, _json_list(where, record, "evidence"), documents, locator)
    spans += _contexts(where, qid, _json_list(where, record, "reference_contexts"), locator)
    return Question(
        qid=qid,
        question=text.strip(),
        reference_answer=_optional_str(where, record, "reference_answer"),
        evidence=unique_spans(spans),
        qtype=_optional_str(where, record, "type"),
        history=_history(where, record),
    )


def load_table_questions(
    spec: TableQuestions,
    documents: list[Document],
    notes: list[str] | None = None,
    locator: TextLocator | None = None,
) -> tuple[list[Question], list[str]]:
    """Questions from JSONL or CSV, and descriptions (``Unlocated``) of evidence text not found.
    ``locator`` (made by ``load.py`` with the spec's settings) also counts the tiers."""
    path = Path(spec.path)
    errors: list[str] = []  # every bad record, reported together
    records = csv_records(path, errors) if spec.format == "csv" else json_records(path, errors)
    texts = {d.doc_id: d.text for d in documents}
    locator = locator or TextLocator(texts)
    questions = []
    for i, (where, rec) in enumerate(records, 1):
        try:
            questions.append(_question(where, i, rec, texts, locator))
        except RagsweepError as exc:
            errors.append(str(exc))
    if errors:
        raise bad_lines_error(path, errors)
    locator.note_into(notes)
    return questions, list(locator.unlocated)
