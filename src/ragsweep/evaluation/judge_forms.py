"""The forms of the judges' replies: a correctness score with its reasoning, and a YES/NO verdict (declared once
here, for stage 2, ``ragsweep judges evaluate`` and the claims detector).

Held to the schema, a reply is ``{"score": 1-5, "reasoning": "..."}`` or ``{"verdict": "YES" | "NO"}``: the
score comes first, as LlamaIndex's correctness prompt asks, and the reasoning is bounded so that a grammar
closes it before ``max_tokens``. Free text is read strictly, as before: a first line that is the score alone
(correctness), or a reply that begins with YES or NO; anything else is unmeasured, with its reason (LlamaIndex's
own parsing counts any reply containing "yes" as a pass, and crashes on a one-line correctness reply).
"""

from __future__ import annotations

import re

from ragsweep.llm.reply_form import Read, ReplyForm, strict_object

REASONING_CHARS = 400

_SCORE = re.compile(
    r"^\s*(?:\*\*)?(?:score\s*[:=]\s*)?(?:\*\*)?\s*(\d+(?:\.\d+)?)\s*(?:/\s*5)?\s*(?:\*\*)?\s*$", re.IGNORECASE
)
_YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


def parse_correctness(raw: str) -> tuple[float | None, str | None, str]:
    """``(score, reason_if_unmeasured, reasoning)`` from a free-text correctness reply.

    The first non-empty line must be the score alone (``4``, ``4.5``, ``Score: 4``, ``4/5``),
    within 1-5, as LlamaIndex's prompt asks.
    """
    lines = [ln for ln in (raw or "").splitlines() if ln.strip()]
    if not lines:
        return None, "empty reply", ""
    m = _SCORE.match(lines[0])
    if m is None:
        return None, f"first line is not a score: {lines[0].strip()[:80]!r}", "\n".join(lines[1:])
    score = float(m.group(1))
    if not 1.0 <= score <= 5.0:
        return None, f"score {score:g} outside 1-5", "\n".join(lines[1:])
    return score, None, "\n".join(lines[1:]).strip()


def parse_yes_no(raw: str) -> tuple[bool | None, str | None]:
    """``(passing, reason_if_unmeasured)``: a free-text reply must begin with YES or NO."""
    m = _YES_NO.match(raw or "")
    if m is None:
        text = (raw or "").strip()
        return None, "empty reply" if not text else f"reply does not start with YES or NO: {text[:80]!r}"
    return m.group(1).lower() == "yes", None


def _correctness_text(raw: str) -> Read:
    score, reason, reasoning = parse_correctness(raw)
    return ((score, reasoning), None) if score is not None else (None, reason)


def _verdict_text(raw: str) -> Read:
    passing, reason = parse_yes_no(raw)
    return (passing, None) if passing is not None else (None, reason)


CORRECTNESS = ReplyForm(
    name="correctness",
    schema=strict_object(
        {
            "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
            "reasoning": {"type": "string", "maxLength": REASONING_CHARS},
        }
    ),
    from_json=lambda o: (float(o["score"]), o["reasoning"].strip()),
    parse_text=_correctness_text,
    text_format="the score (a number from 1 to 5) alone on the first line, then your reasoning",
    json_hint='Reply with one JSON object: {"score": <a whole number from 1 to 5>, "reasoning": "<one or two '
    'sentences>"}.',
)

VERDICT = ReplyForm(
    name="verdict",
    schema=strict_object({"verdict": {"type": "string", "enum": ["YES", "NO"]}}),
    from_json=lambda o: o["verdict"] == "YES",
    parse_text=_verdict_text,
    text_format="YES or NO first",
    json_hint='Reply with one JSON object: {"verdict": "YES"} or {"verdict": "NO"}.',
)
