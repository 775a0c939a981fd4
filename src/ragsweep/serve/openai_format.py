"""Answers in OpenAI's wire formats: a chat completion and a text completion, whole or as server-sent events.

Streaming follows the OpenAI API: ``data: {chunk}`` lines, the first chat chunk carrying the role, then the
answer's text in ``delta.content`` (``choices[0].text`` for completions), a last chunk with ``finish_reason`` and
the sources in its extra ``sources`` field, then ``data: [DONE]``. The pipeline answers a question whole (the
extractive generator writes no tokens; an LLM generator's answer is cached and checked as a whole), so the answer
streams in a few pieces of about ``PIECE_CHARS`` characters, cut at spaces, as soon as it is there.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

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


def chat_events(model: str, answer: str, sources: list[dict]) -> Iterator[str]:
    """A chat completion as server-sent events."""
    head = _head("chat.completion.chunk", model)

    def chunk(delta: dict, finish: str | None = None, **extra) -> str:
        return _event({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra})

    yield chunk({"role": "assistant", "content": ""})
    for piece in pieces(answer):
        yield chunk({"content": piece})
    yield chunk({}, "stop", sources=sources)
    yield "data: [DONE]\n\n"


def completion_events(model: str, answer: str, sources: list[dict]) -> Iterator[str]:
    """A text completion as server-sent events."""
    head = _head("text_completion", model)

    def chunk(text: str, finish: str | None = None, **extra) -> str:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        return _event({**head, "choices": [choice], **extra})

    for piece in pieces(answer):
        yield chunk(piece)
    yield chunk("", "stop", sources=sources)
    yield "data: [DONE]\n\n"


def _event(payload: dict) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"
