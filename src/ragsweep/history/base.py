"""The contract of a history mode: a question's standalone text (what is searched with) and its generator query
(what the LLM generator answers), both from the question and the conversation before it.

A question asked alone (no history) is the question for every mode: no LLM call, the same search as ``none``, so
two modes differ on the follow-ups alone. LLM-written texts are kept in the run's ``TransformMemo`` (one per
(mode, conversation, question) per process; the LLM cache across runs), and their time is replayed to every
configuration that uses them, as a query transform's is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragsweep.datasets.types import Question, Turn

if TYPE_CHECKING:
    from ragsweep.llm.usage import LLMUse


@dataclass(frozen=True)
class Standalone:
    """What a configuration searched with for one question, and what writing it cost."""

    text: str
    note: str | None = None  # why it fell back to the follow-up alone, when it did
    llm: LLMUse | None = None  # its time is in the configuration's retrieval_ms (replayed from the memo)

    def record(self, question: str) -> dict:
        """The answer record's fields: ``standalone_question`` (when it is not the question), ``history_llm``,
        ``history_note``."""
        out: dict = {}
        if self.text != question:
            out["standalone_question"] = self.text
        if self.llm:
            out["history_llm"] = self.llm
        if self.note:
            out["history_note"] = self.note
        return out


def user_turns(history: tuple[Turn, ...], n: int) -> list[str]:
    """The contents of the last ``n`` user messages, oldest first."""
    said = [t.content for t in history if t.role == "user"]
    return said[-n:] if n > 0 else []


def transcript(history: tuple[Turn, ...]) -> str:
    """The conversation as LlamaIndex's ``messages_to_history_str`` writes it: ``role: content`` lines."""
    return "\n".join(f"{t.role}: {t.content}" for t in history)


def in_full(question: Question) -> str:
    """A follow-up with the conversation before it, as one text (what the judges read, and the LLM generator of
    ``condense_plus_context``); a question asked alone as it is."""
    if not question.history:
        return question.question
    return f"Conversation so far:\n{transcript(question.history)}\nFollow-up question: {question.question}"


def memo_key(question: Question) -> str:
    """A question with its conversation, as one key of the memo."""
    return json.dumps([[[t.role, t.content] for t in question.history], question.question], ensure_ascii=False)


class HistoryMode:
    """A history mode applied with the run's LLM (``llm``, None offline) and memo (``memo``); ``standalone`` and
    ``generator_query`` take a question with its ``history``. The defaults: the question as asked."""

    def __init__(self, spec, llm=None, memo=None) -> None:
        self.spec, self.llm, self.memo = spec, llm, memo

    def standalone(self, question: Question) -> Standalone:
        return Standalone(question.question)

    def generator_query(self, question: Question, searched: str) -> str:
        """What the LLM generator answers: by default what was searched with."""
        return searched


def history_mode(spec, llm=None, memo=None) -> HistoryMode:
    """The ``HistoryMode`` of ``spec`` (a ``history`` entry other than none), its module imported on first use."""
    from ragsweep.components import builder

    return builder(spec)(spec, llm, memo)


def offline_text(spec, question: Question) -> str | None:
    """What ``spec``'s mode searches ``question`` with when no model writes it (concat), else None."""
    from ragsweep.components import module_of

    if not question.history:
        return None
    text = getattr(module_of(spec), "offline_text", None)
    return text(spec, question) if text is not None else None


def query_texts(spec, question: Question) -> list[str]:
    """The texts whose vectors a configuration with history mode ``spec`` (None: none) searches ``question`` with,
    where they are known ahead: the question, and an offline mode's text of a follow-up."""
    extra = offline_text(spec, question) if spec is not None else None
    return [question.question] + ([extra] if extra else [])
