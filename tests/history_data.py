"""A Giskard RAGET test set (``QATestset.save``'s JSON Lines) written from the demo's questions and follow-ups, for
the history tests (``test_history.py``, ``test_ray.py``): the gold evidence becomes ``Document n: ...`` blocks,
the history a stringified list (as pandas writes it into a CSV-born frame) or a list."""

from __future__ import annotations

import json
from pathlib import Path

from ragsweep.datasets.demo import DEMO_CONVERSATIONS, DEMO_QUESTIONS

FOLLOW_UPS = 6
ALONE = 3


def _rows(path: Path, n: int) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if r.get("evidence")][:n]


def giskard_file(dest: Path, follow_ups: int = FOLLOW_UPS, alone: int = ALONE) -> Path:
    """``alone`` demo questions (no history, type simple) then ``follow_ups`` demo follow-ups (type
    conversational), in giskard's format: every other follow-up's history stringified."""
    out = []
    for i, r in enumerate(_rows(DEMO_QUESTIONS, alone) + _rows(DEMO_CONVERSATIONS, follow_ups)):
        history = r.get("history") or []
        out.append(
            {
                "id": r["id"],
                "question": r["question"],
                "reference_answer": r["reference_answer"],
                "reference_context": "\n\n".join(f"Document {j}: {e['text']}" for j, e in enumerate(r["evidence"])),
                "conversation_history": str(history) if i % 2 else history,
                "metadata": {"question_type": "conversational" if history else "simple", "seed_document_id": i},
            }
        )
    dest.write_text("".join(json.dumps(o) + "\n" for o in out), encoding="utf-8")
    return dest
