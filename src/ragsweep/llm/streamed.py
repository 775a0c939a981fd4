"""A chat call read as a stream: each piece of the reply's text handed on as it arrives (``serve`` relays an LLM
generator's answer token by token), the whole reply returned as the engine records any other.

Only a caller that asks for the pieces gets a streamed request (``SweepLLM.astream_chat``, which LlamaIndex's
streaming synthesizer calls); the reply is cached, counted, priced and traced as a whole one is, under the same
cache key, so a question streamed once is answered whole from the cache, and the other way round. A stream that
stops before its end (a dropped connection, no ``finish_reason``) is sent again like any failed request; the text
already handed on cannot be taken back, so the new reply's beginning must repeat it (a server at temperature 0
does), and only what follows is handed on; one that begins differently fails the call.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from types import SimpleNamespace

from ragsweep.llm.response_facts import finish_reason
from ragsweep.llm.tokens import count_message_tokens, count_tokens


class StreamBroken(Exception):
    """The reply's stream stopped before its end: the request is sent again (``LLMEngine._send``)."""


class StreamDiverged(Exception):
    """Sent again after a break, the reply began differently from the text already handed on."""


class StreamTap:
    """Where one call's text goes as it arrives (``on_delta``, called on the engine's thread), over its attempts:
    ``shown`` is what went. A consumer that fails (gone, its loop closed) is let go; the reply is still read to its
    end, so it is cached and paid for once."""

    def __init__(self, on_delta: Callable[[str], None]) -> None:
        self.on_delta: Callable[[str], None] | None = on_delta
        self.shown = ""
        self._seen = 0  # characters of the current attempt so far

    @property
    def chars(self) -> int:
        return len(self.shown)

    def attempt(self) -> None:
        """A new attempt begins: its text first repeats ``shown``."""
        self._seen = 0

    def __call__(self, text: str) -> None:
        if not text:
            return
        start, self._seen = self._seen, self._seen + len(text)
        if start < len(self.shown):  # the part a broken attempt already handed on
            again = self.shown[start : start + len(text)]
            if not text.startswith(again):
                raise StreamDiverged(f"sent again, the reply differs from the {len(self.shown)} characters shown")
            text = text[len(again) :]
            if not text:
                return
        self.shown += text
        if self.on_delta is not None:
            try:
                self.on_delta(text)
            except Exception:  # noqa: BLE001 - the consumer is gone; the reply is read to its end all the same
                self.on_delta = None


# the tap of the call being made, set by the engine in that call's own task (each call runs as a task of its own,
# so the value is the call's alone; a call that joins another already in flight gets the whole reply instead)
CURRENT_TAP: ContextVar[StreamTap | None] = ContextVar("ragsweep_stream_tap", default=None)


async def streamed_reply(llm, messages, kwargs: dict, tap: StreamTap, ask_usage: bool):
    """The reply to a chat request sent with ``stream: true``, each text delta passed to ``tap`` on the way, as
    the ``ChatResponse`` a whole request would have given: the text, the ``finish_reason`` and server timings of
    the chunks (``raw``), and the usage the server reported (asked for with ``stream_options`` where
    ``ask_usage``: a server that refuses the option is asked without it) or else the tokens counted here."""
    import httpx
    import openai
    from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole

    tap.attempt()
    extra = {"stream_options": {"include_usage": True}} if ask_usage else {}
    stream = await llm._raw_astream(messages, **kwargs, **extra)
    text, finish, timings, usage = "", None, None, {}
    try:
        async for chunk in stream:
            tap(chunk.delta or "")
            text += chunk.delta or ""
            finish = finish_reason(chunk.raw) or finish
            got = (getattr(chunk.raw, "model_extra", None) or {}).get("timings")
            timings = got if isinstance(got, dict) else timings
            if "prompt_tokens" in (chunk.additional_kwargs or {}):
                usage = dict(chunk.additional_kwargs)
    except (httpx.TransportError, openai.APIConnectionError) as exc:
        raise StreamBroken(f"the stream broke after {len(text)} characters ({type(exc).__name__}: {exc})") from exc
    finally:
        await stream.aclose()
    if finish is None:  # a server ends every reply with one: a stream cut short (a proxy's timeout, say)
        raise StreamBroken(f"the stream ended after {len(text)} characters without a finish_reason")
    if not usage:
        usage = {"prompt_tokens": count_message_tokens(messages), "completion_tokens": count_tokens(text)}
    raw = SimpleNamespace(choices=[SimpleNamespace(finish_reason=finish)], model_extra={"timings": timings})
    return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text), raw=raw, additional_kwargs=usage)
