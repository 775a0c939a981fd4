"""Asking for a reply in a form: the schema sent where the endpoint takes one, the reply read against it, and
one repair re-ask for a reply that cannot be read.

``aask(llm, messages, form)`` (and ``ask`` for synchronous callers) is the one way ragsweep asks for a formed
reply: the judges, the claims detector, ``generate``, the LLM reranker, decomposition and multi-query. Where the
endpoint holds replies to the schema (``structured.OutputMode``), the prompt gets the form's JSON hint. An
unreadable reply (the server ignores schemas, or cut the JSON at max_tokens) is asked again once with the
conversation so far and what could not be read; the endpoint counts and prices re-asks (``FormUse``). The last
reason stays with a reply that is still unreadable, for the record that keeps it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from ragsweep.llm.reply_form import ReplyForm, wanting


@dataclass(frozen=True)
class Reply:
    """``value``: what the form read (None: unreadable, ``reason`` says why); ``raw``: the last reply's text;
    ``reasked``: a repair re-ask was made; ``mode``: how the endpoint was held to the schema."""

    value: Any
    raw: str
    reason: str | None
    reasked: bool = False
    mode: str = "text"


def _engine(llm):
    return getattr(llm, "_engine", None)


def _text_mode():
    from ragsweep.llm.structured import OutputMode

    return OutputMode("text", "not an endpoint of ragsweep's")


async def amode(llm):
    """The endpoint's ``OutputMode`` (learnt on first use); text for an LLM that is not ragsweep's."""
    engine = _engine(llm)
    return _text_mode() if engine is None else await asyncio.wrap_future(engine.output_mode(llm))


def mode(llm):
    engine = _engine(llm)
    return _text_mode() if engine is None else engine.output_mode(llm).result()


def user(text: str):
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    return ChatMessage(role=MessageRole.USER, content=text)


def _with_hint(messages: list, form: ReplyForm, constrained: bool) -> list:
    from llama_index.core.base.llms.types import MessageRole

    if not (constrained and form.json_hint):
        return list(messages)
    *head, last = messages
    if last.role == MessageRole.USER:
        return [*head, user(f"{last.content or ''}\n\n{form.json_hint}")]
    return [*messages, user(form.json_hint)]


def repair_prompt(form: ReplyForm, reason: str, constrained: bool) -> str:
    wanted = "only the JSON object asked for" if constrained else form.text_format
    return f"Your reply could not be read ({reason}). Reply again with {wanted}, and nothing else."


def _repair_messages(sent: list, raw: str, form: ReplyForm, reason: str | None, constrained: bool) -> list:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    return [
        *sent,
        ChatMessage(role=MessageRole.ASSISTANT, content=raw),
        user(repair_prompt(form, reason or "", constrained)),
    ]


def _room(llm, form: ReplyForm) -> dict:
    """``max_tokens`` for a reply in ``form``: the LLM's, or the longest object the form allows where that is more
    (a reply cut before its grammar closes it cannot be read)."""
    have = getattr(llm, "max_tokens", None)
    return {"max_tokens": form.max_tokens} if isinstance(have, int) and have < form.max_tokens else {}


def _first(form: ReplyForm, mode, raw: str) -> Reply:
    value, reason = form.read(raw)
    return Reply(value, raw, reason, False, mode.mode)


def _reasked(llm, form: ReplyForm, mode, response) -> Reply:
    raw = response.message.content or ""
    value, reason = form.read(raw)
    engine = _engine(llm)
    if engine is not None:
        engine.forms.note_reask(_cost(engine, response), value is not None)
    return Reply(value, raw, reason, True, mode.mode)


def _counted(llm, reply: Reply) -> Reply:
    engine = _engine(llm)
    if engine is not None:
        engine.forms.note_asked(reply.value is not None)
    return reply


async def aask(llm, messages: list, form: ReplyForm, *, repair: bool = True) -> Reply:
    """The reply to ``messages`` (LlamaIndex ``ChatMessage``s) read in ``form``."""
    m = await amode(llm)
    sent, kw = _with_hint(messages, form, m.constrained), _room(llm, form)
    with wanting(form):
        reply = _first(form, m, (await llm.achat(sent, **kw)).message.content or "")
    if reply.value is None and repair:
        with wanting(form):
            response = await llm.achat(_repair_messages(sent, reply.raw, form, reply.reason, m.constrained), **kw)
        reply = _reasked(llm, form, m, response)
    return _counted(llm, reply)


async def arepair(llm, sent: list, raw: str, reason: str | None, form: ReplyForm) -> Reply:
    """The repair re-ask of an unreadable ``raw`` that ``sent`` (messages, or their dicts) produced elsewhere
    (inside a LlamaIndex component)."""
    from llama_index.core.base.llms.types import ChatMessage

    m = await amode(llm)
    sent = [ChatMessage(role=x["role"], content=x["content"]) if isinstance(x, dict) else x for x in sent]
    with wanting(form):
        response = await llm.achat(_repair_messages(sent, raw, form, reason, m.constrained), **_room(llm, form))
    return _counted(llm, _reasked(llm, form, m, response))


def ask(llm, messages: list, form: ReplyForm, *, repair: bool = True) -> Reply:
    """``aask`` for synchronous code (a reranker or query transform inside LlamaIndex's retrieval)."""
    m = mode(llm)
    sent, kw = _with_hint(messages, form, m.constrained), _room(llm, form)
    with wanting(form):
        reply = _first(form, m, llm.chat(sent, **kw).message.content or "")
    if reply.value is None and repair:
        with wanting(form):
            response = llm.chat(_repair_messages(sent, reply.raw, form, reply.reason, m.constrained), **kw)
        reply = _reasked(llm, form, m, response)
    return _counted(llm, reply)


def _cost(engine, response) -> float | None:
    from ragsweep.llm.pricing import cost_usd

    usage = response.additional_kwargs or {}
    if usage.get("cached"):  # replayed from the cache: this run paid nothing for it
        return 0.0
    return cost_usd(engine.price, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))


def ask_text(llm, prompt: str, form: ReplyForm, *, repair: bool = True) -> Reply:
    """``ask`` with one user message."""
    return ask(llm, [user(prompt)], form, repair=repair)


async def aask_text(llm, prompt: str, form: ReplyForm, *, repair: bool = True) -> Reply:
    """``aask`` with one user message."""
    return await aask(llm, [user(prompt)], form, repair=repair)
