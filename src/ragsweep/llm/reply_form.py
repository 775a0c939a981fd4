"""The form an LLM reply must take: a JSON schema declared once, and how a reply is read against it.

A caller that needs a reply in a form (a judge's score, a list of claims, a test question) declares a
``ReplyForm``: the schema a server that can constrain its output is sent (``structured.py`` says how each
server takes it), what the reply becomes, and, for a server that cannot, the text the prompt asks for and
its parser (ragsweep's strict parsers of before). A reply is read as JSON against the schema first, then as
text: what a constrained server sends and what a free-text one sends both parse, and anything else is
unreadable with a reason (``read``). ``wanting(form)`` puts the form on every call made inside, however deep
in LlamaIndex it is made, as ``usage.llm_scope`` does with who pays.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

# a value read from a reply, or None and the reason it could not be read
Read = tuple[Any, str | None]


@dataclass(frozen=True, eq=False)
class ReplyForm:
    """``name``: the schema's name (``[A-Za-z0-9_-]``, as OpenAI wants it); ``schema``: a JSON schema of an
    object, every property required and no others (what OpenAI's strict mode accepts); ``from_json``: the
    validated object -> the value, or raises ``ValueError`` with the reason; ``parse_text``: a free-text reply
    -> ``(value, None)`` or ``(None, reason)``; ``json_hint``: the line a prompt adds when the server is held
    to the schema (None when the prompt already asks for this JSON); ``text_format``: what a repair re-ask
    asks for when the server is not."""

    name: str
    schema: dict
    from_json: Callable[[dict], Any]
    parse_text: Callable[[str], Read] | None
    text_format: str
    json_hint: str | None = None
    _validator: list = field(default_factory=list, compare=False, repr=False)

    @property
    def max_tokens(self) -> int:
        """Tokens the longest object the schema allows can take (its string bounds at ``CHARS_PER_TOKEN``, and the
        structure): a reply asked in the form gets at least these, so that a grammar can close it."""
        return math.ceil(_longest(self.schema) / CHARS_PER_TOKEN) + 16

    @property
    def digest(self) -> str:
        """What identifies the schema (a changed schema is another form: its replies are asked again)."""
        blob = json.dumps({"name": self.name, "schema": self.schema}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]

    def read(self, raw: str | None) -> Read:
        """The value of a reply: its JSON object if it is one that the schema accepts, else its text through
        ``parse_text``; ``(None, reason)`` when neither reads it."""
        text = (raw or "").strip()
        if not text:
            return None, "empty reply"
        obj, why = _json_object(text)
        if obj is not None:
            problem = self.violation(obj)
            if problem is None:
                try:
                    return self.from_json(obj), None
                except ValueError as exc:
                    problem = str(exc)
            if self.parse_text is None:
                return None, f"JSON reply does not follow the schema: {problem}"
            value, reason = self.parse_text(text)
            return (value, None) if value is not None else (None, f"JSON reply does not follow the schema: {problem}")
        if self.parse_text is None:
            return None, why
        return self.parse_text(text)

    def violation(self, obj: Any) -> str | None:
        """The first way ``obj`` breaks the schema (``path: message``), or None."""
        if not self._validator:
            from jsonschema import Draft202012Validator

            self._validator.append(Draft202012Validator(self.schema))
        errors = sorted(self._validator[0].iter_errors(obj), key=lambda e: list(e.absolute_path))
        if not errors:
            return None
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "the object"
        return f"{where}: {e.message[:120]}"


def _json_object(text: str) -> tuple[dict | None, str]:
    """The reply's JSON object: the whole text, else inside a code fence or between its first ``{`` and last
    ``}`` (a free-text server that was asked for JSON often adds words around it)."""
    candidates = [text]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for c in candidates:
        try:  # strict=False: control characters inside strings (llama-cpp-python's grammar for a bounded string
            obj = json.loads(c, strict=False)  # lets a raw newline through)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj, ""
    return None, "not a JSON object" if start >= 0 else "reply is not JSON"


CHARS_PER_TOKEN = 3  # a looping model's text at its most fragmented (English runs 4 or more a token)
UNBOUNDED_CHARS = 400  # what a string without maxLength is assumed to take


def _longest(schema: dict) -> int:
    """Characters of the longest JSON value ``schema`` allows (strings at their maxLength, arrays at maxItems)."""
    if "enum" in schema:
        return max(len(json.dumps(v)) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "string":
        return int(schema.get("maxLength", UNBOUNDED_CHARS)) + 2
    if kind == "array":
        return 2 + int(schema.get("maxItems", 8)) * (_longest(schema.get("items") or {}) + 2)
    if kind == "object":
        props = schema.get("properties") or {}
        return 2 + sum(len(k) + 6 + _longest(v) for k, v in props.items())
    return 8


def strict_object(properties: dict[str, dict]) -> dict:
    """A schema of an object with exactly these properties, all required (OpenAI's strict mode wants both)."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


_FORM: contextvars.ContextVar[ReplyForm | None] = contextvars.ContextVar("ragsweep_reply_form", default=None)


@contextmanager
def wanting(form: ReplyForm | None) -> Iterator[None]:
    """Every LLM call made inside asks for ``form`` (the engine sends its schema where the server takes one)."""
    token = _FORM.set(form)
    try:
        yield
    finally:
        _FORM.reset(token)


def current_form() -> ReplyForm | None:
    return _FORM.get()
