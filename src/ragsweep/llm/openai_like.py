"""``SweepLLM``: LlamaIndex's OpenAI-compatible LLM class, with every call sent through the engine.

It *is* an ``OpenAILike`` (so synthesizers, evaluators and QueryFusionRetriever take it as any
LlamaIndex LLM); only the low-level chat call is replaced, so caching, limits, retries and
accounting apply to whatever LlamaIndex component calls it. Chat completions only.
"""

from __future__ import annotations

import asyncio
from typing import Any, Sequence

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.llms.openai import OpenAI
from llama_index.llms.openai_like import OpenAILike
from pydantic import PrivateAttr

from ragsweep.config import LLMSpec


class SweepLLM(OpenAILike):
    _engine: Any = PrivateAttr(default=None)

    def __init__(self, spec: LLMSpec, engine, api_key: str | None) -> None:
        super().__init__(
            model=spec.model,
            api_base=spec.base_url or "https://api.openai.com/v1",
            api_key=api_key or "not-needed",
            temperature=spec.temperature,
            max_tokens=spec.max_tokens,
            timeout=spec.timeout,
            max_retries=0,
            context_window=spec.context_window,
            is_chat_model=True,
            additional_kwargs={"seed": spec.seed} if spec.seed is not None else {},
        )
        self._engine = engine

    @classmethod
    def class_name(cls) -> str:
        return "SweepLLM"

    def _get_model_kwargs(self, **kwargs: Any) -> dict[str, Any]:
        """LlamaIndex's request parameters, but a call's own ``max_tokens`` (a formed reply's room, the schema
        probe's few) and ``seed`` (a judgement's repeat) over the spec's, which LlamaIndex would put back."""
        wanted: dict[str, Any] = {k: kwargs.pop(k) for k in ("max_tokens", "seed") if k in kwargs}  # a repeat's seed
        return {**super()._get_model_kwargs(**kwargs), **wanted}

    def request_params(self, kwargs: dict) -> dict:
        """The request's parameters other than model and messages (part of the cache key)."""
        params = self._get_model_kwargs(**kwargs)
        params.pop("model", None)
        return params

    async def _raw_achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return await OpenAI._achat(self, messages, **kwargs)

    async def _raw_astream(self, messages: Sequence[ChatMessage], **kwargs: Any):
        return await OpenAI._astream_chat(self, messages, **kwargs)

    def _chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return _response(self._engine.submit(self, messages, kwargs).result())

    async def _achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return _response(await asyncio.wrap_future(self._engine.submit(self, messages, kwargs)))

    def _stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any):
        response = self._chat(messages, **kwargs)
        response.delta = response.message.content
        yield response

    async def _astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any):
        """The reply as the server writes it (the engine sends the request with ``stream: true``); a reply from
        the cache, or from a call already in flight, comes whole as one delta."""
        loop = asyncio.get_running_loop()
        pieces: asyncio.Queue[str | None] = asyncio.Queue()

        def push(piece: str | None) -> None:  # on the engine's thread
            try:
                loop.call_soon_threadsafe(pieces.put_nowait, piece)
            except RuntimeError:  # the caller's loop is closed: the engine reads the reply to its end, caches it
                pass

        call = self._engine.submit(self, messages, kwargs, on_delta=push)
        call.add_done_callback(lambda _: push(None))  # after every piece: both go through the same loop queue

        async def gen():
            text = ""
            while (piece := await pieces.get()) is not None:
                text += piece
                yield ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text), delta=piece)
            whole = _response(await asyncio.wrap_future(call))
            rest = whole.message.content or ""
            rest = rest[len(text) :] if rest.startswith(text) else ""
            yield ChatResponse(message=whole.message, delta=rest, additional_kwargs=whole.additional_kwargs)

        return gen()


def _response(call) -> ChatResponse:
    return ChatResponse(
        message=ChatMessage(role=MessageRole.ASSISTANT, content=call.content),
        additional_kwargs={
            "prompt_tokens": call.prompt_tokens,
            "completion_tokens": call.completion_tokens,
            "total_tokens": call.prompt_tokens + call.completion_tokens,
            "cached": getattr(call, "cached", False),  # replayed: nothing paid for it now
        },
    )
