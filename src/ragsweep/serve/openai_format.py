"""Answers in OpenAI's wire formats: a chat completion and a text completion, whole or as server-sent events.

Streaming follows the OpenAI API: ``data: {chunk}`` lines, the first chat chunk carrying the role, then the
answer's text in ``delta.content`` (``choices[0].text`` for completions), a last chunk with ``finish_reason`` and
the sources in its extra ``sources`` field, then ``data: [DONE]``. The text comes as the pipeline gives it
(``serve.relay``): an LLM generator's tokens as its server writes them (a reply from the LLM call cache in one
piece); an extractive answer in pieces of about ``PIECE_CHARS`` characters, cut at spaces. A failure after the
stream began is an ``{"error": ...}`` event, which OpenAI's clients raise, and no ``finish_reason``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

PIECE_CHARS = 200


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """``text`` in pieces of about ``size`` characters, cut after a space where there is one; joined they are
    ``text`` exactly."""
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            cut = text.rfind(" ", start + 1, end)
            end = cut + 1 if cut > start else end
        out.append(text[start:end])
        start = end
    return out


def _head(kind: str, model: str) -> dict:
    """What every reply and chunk of one answer carries: its id, object type, time and model."""
    prefix = "chatcmpl" if kind.startswith("chat") else "cmpl"
    return {"id": f"{prefix}-{uuid.uuid4().hex}", "object": kind, "created": int(time.time()), "model": model}


def chat_completion(model: str, answer: str, sources: list[dict]) -> dict:
    message = {"role": "assistant", "content": answer}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return {**_head("chat.completion", model), "choices": [choice], "sources": sources}


def text_completion(model: str, answer: str, sources: list[dict]) -> dict:
    choice = {"index": 0, "text": answer, "logprobs": None, "finish_reason": "stop"}
    return {**_head("text_completion", model), "choices": [choice], "sources": sources}


@dataclass(frozen=True)
class Ending:
    """How a streamed answer ends: its sources, or the one-line failure that cut it short."""

    sources: list[dict]
    error: dict | None = None  # {"message", "type"}


async def chat_events(model: str, parts: AsyncIterator[str | Ending]) -> AsyncIterator[str]:
    """A chat completion as server-sent events, from the answer's text pieces and then its ``Ending``."""
    head = _head("chat.completion.chunk", model)

    def chunk(delta: dict, finish: str | None = None, **extra) -> str:
        return _event({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra})

    yield chunk({"role": "assistant", "content": ""})
    async for part in parts:
        if isinstance(part, str):
            yield chunk({"content": part})
        else:
            yield _event({"error": part.error}) if part.error else chunk({}, "stop", sources=part.sources)
    yield "data: [DONE]\n\n"


async def completion_events(model: str, parts: AsyncIterator[str | Ending]) -> AsyncIterator[str]:
    """A text completion as server-sent events, from the answer's text pieces and then its ``Ending``."""
    head = _head("text_completion", model)

    def chunk(text: str, finish: str | None = None, **extra) -> str:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        return _event({**head, "choices": [choice], **extra})

    async for part in parts:
        if isinstance(part, str):
            yield chunk(part)
        else:
            yield _event({"error": part.error}) if part.error else chunk("", "stop", sources=part.sources)
    yield "data: [DONE]\n\n"


def _event(payload: dict) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"
