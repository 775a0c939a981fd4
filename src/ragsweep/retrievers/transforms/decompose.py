"""Question decomposition (Khot et al. 2023, "Decomposed Prompting", ICLR; Press et al. 2023, "Measuring
and Narrowing the Compositionality Gap", self-ask): the LLM splits the question into at most
``max_subquestions`` sub-questions; the question and each sub-question go through the whole
retriever, fused by reciprocal rank fusion (``fanout``). LlamaIndex's ``DecomposeQueryTransform``
is one step of a multi-step engine and ``SubQuestionQueryEngine`` needs query-engine tools, so the
prompt is ours: a numbered list, read strictly. A reply that is not such a list falls back to the
question alone, and the record says so.
"""

from __future__ import annotations

import re

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


class DecomposeTransform(FanOutTransform):
    def _write(self, question: str) -> tuple[list[str], str | None]:
        reply = self._llm.complete(prompt(self.spec, question)).text
        subs, why = parse_subquestions(reply, self.spec.max_subquestions)
        if subs is None:
            return [question], f"decomposition unusable ({why}): searched with the question alone"
        key = question.strip().casefold()
        return [question, *(s for s in subs if s.strip().casefold() != key)], None
