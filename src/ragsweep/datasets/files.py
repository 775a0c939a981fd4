"""Reading dataset files strictly: exact UTF-8 (offsets must stay valid) and JSON with clear errors.

Files written for ragsweep (questions, JSON) are read strictly here; corpus files users already
have are decoded more leniently by ``datasets/encoding.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragsweep.errors import RagsweepError


def read_text_strict(path: Path) -> str:
    """Decode a file as UTF-8 exactly as stored (no newline translation, so offsets stay valid)."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RagsweepError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); re-save it as UTF-8"
        ) from None


def read_json_strict(path: Path) -> Any:
    """Parse a UTF-8 JSON file; a missing file or bad JSON is one line naming the file and the place."""
    if not Path(path).is_file():
        raise RagsweepError(f"{path}: file not found; fix the path in the spec")
    try:
        return json.loads(read_text_strict(path))
    except json.JSONDecodeError as exc:
        raise RagsweepError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); fix the file"
        ) from None


MAX_LISTED = 50


def bad_lines_error(source: Path | str, errors: list[str]) -> RagsweepError:
    """One error for every bad record of a file, so a user fixes them all in one pass; a single bad
    record keeps its own one-line message."""
    if len(errors) == 1:
        return RagsweepError(errors[0])
    more = len(errors) - MAX_LISTED
    lines = [f"{len(errors)} bad line(s) in {source}; fix them:", *(f"  {e}" for e in errors[:MAX_LISTED])]
    if more > 0:
        lines.append(f"  and {more} more")
    return RagsweepError("\n".join(lines))
