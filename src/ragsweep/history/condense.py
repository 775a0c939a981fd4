"""Condensing (LlamaIndex's chat engines): the LLM rewrites the follow-up into a standalone question, with the
prompt and the call LlamaIndex makes, so a ``CondenseQuestionChatEngine`` or ``CondensePlusContextChatEngine``
over the same LLM sends the same text (and meets the same cached reply).

- ``condense`` (``CondenseQuestionChatEngine``): ``llm.predict`` with its ``DEFAULT_PROMPT``; the rewrite is searched
  and answered.
- ``condense_plus_context`` (``CondensePlusContextChatEngine``): ``llm.complete`` with its
  ``DEFAULT_CONDENSE_PROMPT_TEMPLATE``; the rewrite is searched, and the generator reads the conversation and the
  follow-up as asked (``generator_query``), as that engine's chat with its context does.

An empty rewrite falls back to the follow-up alone, and the record says so.
"""

from __future__ import annotations

import json

from ragsweep.datasets.types import Question
from ragsweep.history.base import HistoryMode, Standalone, in_full, memo_key, transcript

STAGE = "history"  # the LLM calls' stage in the run's costs


def prompt(spec, question: Question) -> str:
    """The text sent for ``question`` (the dry run counts its tokens)."""
    if spec.kind == "condense":
        from llama_index.core.chat_engine.condense_question import DEFAULT_PROMPT

        return DEFAULT_PROMPT.format(question=question.question, chat_history=transcript(question.history))
    from llama_index.core.chat_engine.condense_plus_context import DEFAULT_CONDENSE_PROMPT_TEMPLATE

    return DEFAULT_CONDENSE_PROMPT_TEMPLATE.format(
        question=question.question, chat_history=transcript(question.history)
    )


class CondenseHistory(HistoryMode):
    def _key(self) -> str:
        return "history:" + json.dumps(self.spec.identity(), sort_keys=True)

    def standalone(self, question: Question) -> Standalone:
        if not question.history:  # as LlamaIndex: nothing to condense, no call
            return Standalone(question.question)
        if self.llm is None:
            raise ValueError(f"history mode {self.spec.kind} needs the spec's llm")
        out = self.memo.get(self._key(), memo_key(question), lambda _key: self._write(question), stage=STAGE)
        return Standalone(out.queries[0], out.note, out.llm)

    def _write(self, question: Question) -> tuple[list[str], str | None]:
        text = self._ask(question).strip()
        if not text:
            return [question.question], "the LLM wrote an empty rewrite: searched with the follow-up alone"
        return [text], None

    def _ask(self, question: Question) -> str:
        from llama_index.core.chat_engine.condense_question import DEFAULT_PROMPT

        return self.llm.predict(DEFAULT_PROMPT, question=question.question, chat_history=transcript(question.history))


class CondensePlusContextHistory(CondenseHistory):
    def _ask(self, question: Question) -> str:
        return str(self.llm.complete(prompt(self.spec, question)))

    def generator_query(self, question: Question, searched: str) -> str:
        return in_full(question)
