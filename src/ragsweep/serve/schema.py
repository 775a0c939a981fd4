"""What the HTTP API reads and writes: ``/query``'s request and answer, and the OpenAI chat-completions subset
``/v1/chat/completions`` accepts (a user message in, the answer out, the sources beside it)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class QueryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=10_000, description="the question, free text")
    answer: bool = Field(True, description="false: retrieval only (no call to an LLM generator)")


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


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str | list | None = None


class ChatRequest(BaseModel):
    """The fields a chat client sends that this endpoint reads; others (temperature, max_tokens, ...) are
    accepted and ignored: the configuration's generator decides them."""

    model_config = ConfigDict(extra="ignore")
    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
