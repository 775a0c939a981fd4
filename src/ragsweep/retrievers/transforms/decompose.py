"""Question decomposition (Khot et al. 2023, "Decomposed Prompting", ICLR; Press et al. 2023, "Measuring
and Narrowing the Compositionality Gap", self-ask): the LLM splits the question into at most
``max_subquestions`` sub-questions; the question and each sub-question go through the whole
retriever, fused by reciprocal rank fusion (``fanout``). LlamaIndex's ``DecomposeQueryTransform``
is one step of a multi-step engine and ``SubQuestionQueryEngine`` needs query-engine tools, so the
prompt is ours: a numbered list, read strictly, or a JSON list where the endpoint is held to a schema
(``subquestions_form``; one repair re-ask). A reply still unreadable falls back to the question alone,
and the record says so.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ragsweep.llm.reply_form import ReplyForm, strict_object
from ragsweep.retrievers.transforms.fanout import FanOutTransform

DECOMPOSE_PROMPT = (
    "Break the question below into at most {max_subquestions} simpler sub-questions, each answerable on its "
    "own from a document collection, that together answer it. Write one sub-question per line, numbered "
    "1., 2., and so on, and nothing else. If the question is already simple, write it alone as 1.\n"
    "Question: {question}\n"
    "Sub-questions:\n"
)
_NUMBERED = re.compile(r"^\s*(\d{1,2})[.)]\s+(\S.*?)\s*$")


def prompt(spec, question: str) -> str:
    return DECOMPOSE_PROMPT.format(max_subquestions=spec.max_subquestions, question=question)


def parse_subquestions(reply: str, limit: int) -> tuple[list[str] | None, str | None]:
    """(sub-questions, None) from a reply that is a numbered list ("1. ...", "2) ..."; blank lines
    allowed, numbers in order from 1), at most ``limit`` of them, repeats dropped; else (None, why)."""
    items: list[str] = []
    for line in reply.splitlines():
        if not line.strip():
            continue
        m = _NUMBERED.match(line)
        if m is None:
            return None, f"line {line.strip()[:60]!r} is not a numbered sub-question"
        if int(m.group(1)) != len(items) + 1:
            return None, f"sub-question numbered {m.group(1)} where {len(items) + 1} was due"
        items.append(m.group(2))
    if not items:
        return None, "the reply lists no sub-question"
    unique = list(dict.fromkeys(items))
    return unique[:limit], None


@lru_cache(maxsize=16)
def subquestions_form(limit: int) -> ReplyForm:
    """The reply's form: at most ``limit`` sub-questions (a numbered list, as text)."""

    def from_json(obj: dict) -> list[str]:
        subs = list(dict.fromkeys(q.strip() for q in obj["subquestions"] if q.strip()))
        if not subs:
            raise ValueError("the list holds no sub-question")
        return subs[:limit]

    def text(reply: str):
        return parse_subquestions(reply, limit)

    return ReplyForm(
        name=f"subquestions_{limit}",
        schema=strict_object(
            {"subquestions": {"type": "array", "items": {"type": "string", "maxLength": 300}, "maxItems": limit}}
        ),
        from_json=from_json,
        parse_text=text,
        text_format="one sub-question per line, numbered 1., 2., and so on",
        json_hint='Reply with one JSON object: {"subquestions": ["<a sub-question>", ...]}.',
    )


class DecomposeTransform(FanOutTransform):
    def _write(self, question: str) -> tuple[list[str], str | None]:
        from ragsweep.llm.ask import ask_text

        reply = ask_text(self._llm, prompt(self.spec, question), subquestions_form(self.spec.max_subquestions))
        if reply.value is None:
            return [question], f"decomposition unusable ({reply.reason}): searched with the question alone"
        key = question.strip().casefold()
        return [question, *(s for s in reply.value if s.strip().casefold() != key)], None
