"""The endpoint lines docs/llms.md quotes are the lines the code prints for those figures (a quoted line the code no
longer printed went unnoticed once)."""

from __future__ import annotations

from pathlib import Path

from ragsweep.llm.endpoint_text import endpoint_line

DOC = Path(__file__).resolve().parent.parent / "docs" / "llms.md"


def _doc() -> str:
    return " ".join(DOC.read_text(encoding="utf-8").split())


def test_the_queueing_line_the_docs_quote():
    e = {
        "endpoint": "http://127.0.0.1:8089/v1",
        "model": "smollm2-135m-instruct",
        "capacity": {
            "adaptive": True,
            "queued_at": None,
            "limit": 4,
            "maximum": 8,
            "lowest": 1,
            "highest": 4,
            "waited": 11,
            "wait_s": 11 * 12.1,
            "queued": 4,
            "queue_s": 6.1,
        },
        "structured": {"mode": "json_object", "source": "probe", "asked": 12, "reasks": 0, "unreadable": 0},
    }
    line = endpoint_line(e)
    assert f"`{line}`" in _doc(), line


def test_the_free_text_line_the_docs_quote():
    e = {
        "endpoint": "http://127.0.0.1:8089/v1",
        "model": "m",
        "structured": {
            "mode": "text",
            "source": "probe; json_schema ignored; json_object ignored",
            "asked": 2,
            "reasks": 2,
            "reask_usd": 0.0001,
            "repaired": 1,
            "unreadable": 1,
        },
    }
    line = endpoint_line(e)
    tail = line.split(": ", 1)[1]
    assert f"`...: {tail}`" in _doc(), line
    held = endpoint_line({**e, "structured": {"mode": "json_object", "asked": 12}}).split(": ", 1)[1]
    assert f"`...: {held}`" in _doc(), held
