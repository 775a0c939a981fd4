"""The question a request asks, checked: text only, not blank, not control characters alone, not too long.

A question of whitespace or control characters was answered (with a document title), a content part
``{"type": "text", "text": 5}`` failed with a traceback, and chat had no size cap while ``/query`` had one: each
is now a 400 naming the field and the fix."""

from __future__ import annotations

import unicodedata

from ragsweep.datasets.types import Turn
from ragsweep.serve.schema import MAX_CHAT_CHARS, MAX_QUESTION_CHARS, ChatRequest, CompletionRequest, QueryRequest


class BadRequest(Exception):
    """A request the API understood but refuses (400), with its one-line reason."""


def checked(question: str, field: str) -> str:
    """``question`` if it has something to ask: a 400 naming ``field`` where it is blank or control characters
    only (Unicode categories C* and Z*), or longer than ``MAX_QUESTION_CHARS``."""
    _capped(question, field)
    if not any(unicodedata.category(c)[0] not in "CZ" for c in question):
        raise BadRequest(f"{field}: no text, only blanks or control characters; send the question as text")
    return question


def chat_question(req: ChatRequest) -> tuple[str, tuple[Turn, ...]]:
    """The text of the last user message (a string, or its text parts joined), every message's content checked,
    and the conversation before it: the user and assistant messages with text, as a sweep's question ``history``
    (system, developer and tool messages are instructions, not what was said)."""
    total = 0
    for i, message in enumerate(req.messages):
        total += len(_text(message.content, f"messages.{i}.content"))
    if total > MAX_CHAT_CHARS:
        raise BadRequest(
            f"messages: {total} characters in all, more than {MAX_CHAT_CHARS}; send a shorter conversation"
        )
    users = [i for i, m in enumerate(req.messages) if m.role == "user"]
    if not users:
        raise BadRequest("messages: no message with role user; send the question as a user message")
    last = users[-1]
    history = tuple(
        Turn(m.role, text.strip())
        for i, m in enumerate(req.messages[:last])
        if m.role in ("user", "assistant") and (text := _text(m.content, f"messages.{i}.content")).strip()
    )
    return checked(_text(req.messages[last].content, f"messages.{last}.content"), f"messages.{last}.content"), history


def query_history(req: QueryRequest) -> tuple[Turn, ...]:
    """``/query``'s optional ``history``: its turns, each checked as a chat message's content is."""
    turns = []
    total = len(req.question)
    for i, turn in enumerate(req.history or []):
        text = _capped(turn.content, f"history.{i}.content")
        total += len(text)
        if text.strip():
            turns.append(Turn(turn.role, text.strip()))
    if total > MAX_CHAT_CHARS:
        raise BadRequest(f"history: {total} characters in all, more than {MAX_CHAT_CHARS}; send a shorter conversation")
    return tuple(turns)


def completion_question(req: CompletionRequest) -> str:
    """The prompt (one; a list of one) as the question."""
    prompt = req.prompt
    if isinstance(prompt, list):
        if len(prompt) != 1:
            raise BadRequest(f"prompt: {len(prompt)} prompts; send one prompt per request")
        prompt = prompt[0]
    return checked(prompt, "prompt")


def _text(content, field: str) -> str:
    """A message's text: its string, or its text parts joined; any other part is a 400."""
    if content is None:
        return ""
    if isinstance(content, str):
        return _capped(content, field)
    texts = []
    for j, part in enumerate(content):
        if part.type != "text" or part.text is None:
            raise BadRequest(
                f"{field}.{j}: a {part.type!r} part; this server reads text parts only "
                '({"type": "text", "text": "..."})'
            )
        texts.append(part.text)
    return _capped(" ".join(texts), field)


def _capped(text: str, field: str) -> str:
    if len(text) > MAX_QUESTION_CHARS:
        raise BadRequest(f"{field}: {len(text)} characters, more than {MAX_QUESTION_CHARS}; send a shorter text")
    return text
