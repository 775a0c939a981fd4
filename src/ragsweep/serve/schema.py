"""What the HTTP API reads and writes: ``/query``'s request and answer, and the OpenAI subsets
``/v1/chat/completions`` and ``/v1/completions`` accept (a question in, the answer out, the sources beside it).

Types are strict (``"yes"`` is not a boolean, ``5`` is not a text); a question's text is checked further by
``serve.questions`` (blank, control characters only, too long)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

# the longest question, in characters: /query's question, each chat message, a completion's prompt
MAX_QUESTION_CHARS = 10_000
# all of a chat request's messages together: the question and the conversation before it
MAX_CHAT_CHARS = 4 * MAX_QUESTION_CHARS


class HistoryTurn(BaseModel):
    """One message of the conversation before ``/query``'s question."""

    model_config = ConfigDict(extra="forbid", strict=True)
    role: Literal["user", "assistant"]
    content: StrictStr = Field(max_length=MAX_QUESTION_CHARS)


class QueryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    question: StrictStr = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="the question, free text")
    answer: StrictBool = Field(True, description="false: retrieval only (no call to an LLM generator)")
    history: list[HistoryTurn] | None = Field(
        None,
        description="the conversation before the question, oldest first: used as the configuration's history mode "
        "says (a configuration swept without one answers the question alone)",
    )


class Source(BaseModel):
    rank: int
    doc_id: str | None
    start: int | None
    end: int | None
    page: str | int | None = None
    score: float | None
    text: str


class QueryResponse(BaseModel):
    config_id: str
    answer: str | None
    abstained: bool | None = None
    sources: list[Source]
    retrieval_ms: float | None
    generation_ms: float | None = None


class ContentPart(BaseModel):
    """One part of a message's content; only text parts carry a question (``serve.questions`` refuses others)."""

    model_config = ConfigDict(extra="allow", strict=True)
    type: StrictStr
    text: StrictStr | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: StrictStr | list[ContentPart] | None = None


class ChatRequest(BaseModel):
    """The fields a chat client sends that this endpoint reads; others (temperature, max_tokens, ...) are
    accepted and ignored: the configuration's generator decides them."""

    model_config = ConfigDict(extra="ignore", strict=True)
    model: StrictStr | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    stream: StrictBool = False


class CompletionRequest(BaseModel):
    """OpenAI's legacy completions, as LlamaIndex's ``OpenAILike`` calls them by default (``is_chat_model``
    false): the prompt is the question."""

    model_config = ConfigDict(extra="ignore", strict=True)
    model: StrictStr | None = None
    prompt: StrictStr | list[StrictStr]
    stream: StrictBool = False
