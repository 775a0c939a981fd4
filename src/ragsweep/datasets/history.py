"""A question's conversation history as the files of this field hold it: a list of ``{role, content}`` turns,
or that list stringified (JSON, or Python's ``str(list)`` as pandas writes a list into a CSV cell)."""

from __future__ import annotations

import ast
import json

from ragsweep.datasets.types import Turn
from ragsweep.errors import RagsweepError

ROLES = ("user", "assistant")


def parse_history(where: str, value: object, field: str = "history") -> tuple[Turn, ...]:
    """The turns of ``value`` (None or an empty list: none); one clear line naming ``where`` and ``field`` when a
    turn is not a ``{role, content}`` object with role user or assistant and a non-empty content."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = unstring(where, field, value)
    if not isinstance(value, list):
        raise RagsweepError(
            f"{where}: field {field!r} must be a list of {{role, content}} turns, got {type(value).__name__}"
        )
    turns: list[Turn] = []
    for i, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("role"), str):
            raise RagsweepError(f"{where}: {field}[{i}] must be an object with 'role' and 'content'")
        role = item["role"].strip().lower()
        if role == "system":  # an instruction to the assistant, not something the user said: not history
            continue
        if role not in ROLES:
            raise RagsweepError(f"{where}: {field}[{i}].role is {item['role']!r}; use 'user' or 'assistant'")
        content = item.get("content")
        if not isinstance(content, str) or not content.strip():
            raise RagsweepError(f"{where}: {field}[{i}].content must be a non-empty string")
        turns.append(Turn(role, content.strip()))
    return tuple(turns)


# what a history cell should be, for the error of one that does not parse
HISTORY_CELL = 'a JSON list nor a Python list literal; write it as a JSON list of {"role": ..., "content": ...} turns'


def unstring(where: str, field: str, text: str, expected: str = HISTORY_CELL) -> object:
    """A stringified cell: JSON, or Python's ``str(...)`` of a list or dict as pandas writes it into a CSV cell;
    None for a blank one. ``expected`` ends the error's line: what the field is not, and how to write it."""
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise RagsweepError(f"{where}: field {field!r} is neither {expected}") from None
