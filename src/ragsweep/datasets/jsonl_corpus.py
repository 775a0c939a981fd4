"""A corpus stored as JSON Lines: one ``{"id": ..., "text": ..., ...}`` object per line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ragsweep.datasets.files import read_text_strict
from ragsweep.datasets.types import Document
from ragsweep.errors import RagsweepError

if TYPE_CHECKING:
    from ragsweep.config import JsonlCorpus


def iter_jsonl(path: Path, errors: list[str] | None = None) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, object)``; blank lines are skipped, anything else must be a JSON object.

    A bad line raises, or with ``errors`` given is described there and skipped (so every bad line
    of a questions file is reported at once). Splits on ``\\n`` only: JSON strings may legally hold
    U+2028, which ``str.splitlines`` breaks on.
    """
    path = Path(path)
    if not path.is_file():
        raise RagsweepError(f"{path}: file not found; fix the path in the spec")
    text = read_text_strict(path).removeprefix("\ufeff")
    for n, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problem = f"not valid JSON ({exc.msg} at column {exc.colno})"
        else:
            if isinstance(obj, dict):
                yield n, obj
                continue
            problem = f"expected a JSON object ({{...}}), got {type(obj).__name__}"
        message = f"{path}:line {n}: {problem}; each line must be one JSON object"
        if errors is None:
            raise RagsweepError(message)
        errors.append(message)


def load_jsonl_corpus(spec: JsonlCorpus, notes: list[str] | None = None) -> list[Document]:
    """Documents from ``spec.id_field``/``spec.text_field``; every other key goes to metadata."""
    path = Path(spec.path)
    documents: list[Document] = []
    seen: dict[str, int] = {}
    empty: list[str] = []
    for n, obj in iter_jsonl(path):
        for name, key in (("id_field", spec.id_field), ("text_field", spec.text_field)):
            if key not in obj:
                raise RagsweepError(
                    f"{path}:line {n}: missing field {key!r} (keys: {', '.join(sorted(obj)) or 'none'}); add it or "
                    f"set dataset.corpus.{name}"
                )
        doc_id, text = obj[spec.id_field], obj[spec.text_field]
        if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool) or str(doc_id) == "":
            raise RagsweepError(f"{path}:line {n}: field {spec.id_field!r} must be a non-empty string or integer")
        if not isinstance(text, str):
            raise RagsweepError(
                f"{path}:line {n}: field {spec.text_field!r} must be a string, got {type(text).__name__}"
            )
        doc_id = str(doc_id)
        if doc_id in seen:
            raise RagsweepError(
                f"{path}:line {n}: document id {doc_id!r} already used on line {seen[doc_id]}; "
                f"document ids must be unique"
            )
        seen[doc_id] = n
        if not text.strip():
            empty.append(doc_id)
            continue
        meta = {k: v for k, v in obj.items() if k not in (spec.id_field, spec.text_field)}
        documents.append(Document(doc_id=doc_id, text=text, metadata=meta))
    if empty and notes is not None:
        notes.append(
            f"skipped {len(empty)} empty document(s) in {path.name}: {', '.join(empty[:3])}"
            + (f" and {len(empty) - 3} more" if len(empty) > 3 else "")
        )
    return documents
