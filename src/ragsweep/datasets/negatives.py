"""Negative questions (``dataset.negatives``): questions no corpus of legal or policy documents should
answer (irrelevant ones, jailbreak attempts, unsafe requests), appended to any dataset's questions so
a sweep measures whether a pipeline abstains on them (``abstention_rate``).

The file is JSONL, one question per line: ``{"id": "irr01", "question": "...", "type":
"negative-irrelevant"}`` (``type`` one of ``NEGATIVE_TYPES``; an optional ``reference_answer``). They
carry no gold evidence; ids gain the ``neg-`` prefix so they never collide with the dataset's own.
"""

from __future__ import annotations

import json
from pathlib import Path

from ragsweep.datasets.types import Question
from ragsweep.errors import RagsweepError

NEGATIVE_TYPES = ("negative-irrelevant", "negative-jailbreak", "negative-unsafe")
PREFIX = "neg-"
_KEYS = {"id", "question", "type", "reference_answer"}


def load_negatives(path: str | Path, taken: set[str] | frozenset[str] = frozenset()) -> list[Question]:
    """The negative questions of ``path``; ``taken``: the dataset's question ids (a prefixed id that
    collides is an error). Any problem is one line naming the file and line."""
    out: list[Question] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RagsweepError(f"{where}: not valid JSON ({exc.msg}); write one JSON object per line") from None
            if not isinstance(row, dict):
                raise RagsweepError(f"{where}: expected a JSON object with id, question and type")
            extra = sorted(set(row) - _KEYS)
            if extra:
                hint = "; negative questions have no gold evidence" if "evidence" in extra else ""
                raise RagsweepError(
                    f"{where}: unknown key(s) {', '.join(extra)}; allowed keys: {', '.join(sorted(_KEYS))}{hint}"
                )
            qid, text, qtype = row.get("id"), row.get("question"), row.get("type")
            if not isinstance(qid, str) or not qid.strip():
                raise RagsweepError(f"{where}: 'id' must be a non-empty string")
            if not isinstance(text, str) or not text.strip():
                raise RagsweepError(f"{where}: 'question' must be a non-empty string")
            if qtype not in NEGATIVE_TYPES:
                raise RagsweepError(f"{where}: 'type' is {qtype!r}; choose one of {', '.join(NEGATIVE_TYPES)}")
            ref = row.get("reference_answer")
            if ref is not None and not isinstance(ref, str):
                raise RagsweepError(f"{where}: 'reference_answer' must be a string or absent")
            full = PREFIX + qid
            if full in seen or full in taken:
                raise RagsweepError(
                    f"{where}: question id {full!r} appears twice; give each negative question a distinct id"
                )
            seen.add(full)
            out.append(Question(qid=full, question=text, reference_answer=ref, qtype=qtype))
    if not out:
        raise RagsweepError(f"{path}: no negative questions; write one JSON object per line")
    return out
