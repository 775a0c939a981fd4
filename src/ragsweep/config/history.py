"""How a follow-up question uses the conversation before it (``history:``): one grid axis, as LlamaIndex's chat
engines offer it. ``none`` is the question alone (today's configurations keep their ids and hashes); the others
change what a configuration searches with, and what its LLM generator reads, only for a question that has a
history: a question asked alone is searched and answered as with ``none``."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Union

from pydantic import Field

from ragsweep.config.base import Strict


class NoHistorySpec(Strict):
    """The follow-up alone, as if it opened the conversation: the baseline."""

    kind: Literal["none"]

    def label(self) -> str:
        return "none"


class HistoryParams(Strict):
    """What every history mode other than ``none`` shares: a name, the module that applies it (``builder``),
    whether it calls the LLM, whether the LLM generator reads the conversation, and its identity."""

    name: str | None = None
    builder: ClassVar[str] = ""
    uses_llm: ClassVar[bool] = False
    generator_reads_history: ClassVar[bool] = False

    def identity(self) -> dict:
        """What determines the text searched with (an LLM's settings are the configuration's ``rewrite_llm``)."""
        return self.model_dump(mode="json", exclude={"name"})


class ConcatHistorySpec(HistoryParams):
    """Offline: the conversation's last ``user_turns`` user messages, then the follow-up, searched as one query
    (and read by the LLM generator as its query)."""

    kind: Literal["concat"]
    builder: ClassVar[str] = "ragsweep.history.concat:ConcatHistory"
    user_turns: int = Field(2, ge=1, le=20, description="the last user messages put before the follow-up")

    def label(self) -> str:
        return self.name or ("concat" if self.user_turns == 2 else f"concat{self.user_turns}")


class CondenseHistorySpec(HistoryParams):
    """The LLM rewrites the follow-up into a standalone question (LlamaIndex's ``CondenseQuestionChatEngine``
    prompt), which is searched and answered; cached like every LLM call, the rewrite recorded per answer."""

    kind: Literal["condense"]
    builder: ClassVar[str] = "ragsweep.history.condense:CondenseHistory"
    uses_llm: ClassVar[bool] = True

    def label(self) -> str:
        return self.name or "condense"


class CondensePlusContextSpec(HistoryParams):
    """LlamaIndex's ``CondensePlusContextChatEngine``: the LLM's standalone rewrite (its condense prompt) is
    searched; the LLM generator reads the conversation and the follow-up as asked."""

    kind: Literal["condense_plus_context"]
    builder: ClassVar[str] = "ragsweep.history.condense:CondensePlusContextHistory"
    uses_llm: ClassVar[bool] = True
    generator_reads_history: ClassVar[bool] = True

    def label(self) -> str:
        return self.name or "condense_ctx"


HistorySpec = Annotated[
    Union[NoHistorySpec, ConcatHistorySpec, CondenseHistorySpec, CondensePlusContextSpec], Field(discriminator="kind")
]
ActiveHistory = Union[ConcatHistorySpec, CondenseHistorySpec, CondensePlusContextSpec]  # a mode other than none
