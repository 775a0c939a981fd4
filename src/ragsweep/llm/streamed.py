"""A chat call read as a stream: each piece of the reply's text handed on as it arrives (``serve`` relays an LLM
generator's answer token by token), the whole reply returned as the engine records any other.

Only a caller that asks for the pieces gets a streamed request (``SweepLLM.astream_chat``, which LlamaIndex's
streaming synthesizer calls); the reply is cached, counted, priced and traced as a whole one is, under the same
cache key, so a question streamed once is answered whole from the cache, and the other way round. A stream that
breaks after some of its text was handed on is not sent again: the text already shown cannot be taken back.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from types import SimpleNamespace

from ragsweep.llm.response_facts import finish_reason
from ragsweep.llm.tokens import count_tokens


class StreamTap:
    """Where one call's text goes as it arrives (``on_delta``, called on the engine's thread), and how much went."""

    def __init__(self, on_delta: Callable[[str], None]) -> None:
        self.on_delta = on_delta
        self.chars = 0

    def __call__(self, text: str) -> None:
        if text:
            self.chars += len(text)
            self.on_delta(text)


# the tap of the call being made, set by the engine in that call's own task (each call runs as a task of its own,
# so the value is the call's alone; a call that joins another already in flight gets the whole reply instead)
CURRENT_TAP: ContextVar[StreamTap | None] = ContextVar("ragsweep_stream_tap", default=None)


async def streamed_reply(llm, messages, kwargs: dict, tap: StreamTap, openai_api: bool):
    """The reply to a chat request sent with ``stream: true``, each text delta passed to ``tap`` on the way, as
    the ``ChatResponse`` a whole request would have given: the text, the ``finish_reason`` and server timings of
    the chunks (``raw``), and the usage the server reported (OpenAI's API reports it when asked, which other
    servers may refuse) or else the completion's tokens counted here."""
    from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole

    extra = {"stream_options": {"include_usage": True}} if openai_api else {}
    stream = await llm._raw_astream(messages, **kwargs, **extra)
    text, finish, timings, usage = "", None, None, {}
    async for chunk in stream:
        tap(chunk.delta or "")
        text += chunk.delta or ""
        finish = finish_reason(chunk.raw) or finish
        got = (getattr(chunk.raw, "model_extra", None) or {}).get("timings")
        timings = got if isinstance(got, dict) else timings
        if "prompt_tokens" in (chunk.additional_kwargs or {}):
            usage = dict(chunk.additional_kwargs)
    if not usage:
        usage = {"completion_tokens": count_tokens(text)}
    raw = SimpleNamespace(choices=[SimpleNamespace(finish_reason=finish)], model_extra={"timings": timings})
    return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text), raw=raw, additional_kwargs=usage)
