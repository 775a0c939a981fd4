"""Structured outputs for the scripted server (``fake_openai.py``): which ``response_format`` a server of each
kind takes, and the reply it gives when held to a schema (standard library only).

Kinds (``FakeOpenAI(structured=...)``, ``--structured``):

- ``json_schema``: OpenAI's structured outputs (and vLLM's, LM Studio's, Ollama's, llama.cpp's server's):
  ``{type: json_schema, json_schema: {schema}}`` is honoured; ``json_object`` is JSON mode, the schema unread.
- ``json_object``: llama-cpp-python: ``{type: json_object, schema}`` is honoured; ``json_schema`` is refused
  with a 500 naming ``response_format``, as its request validation answers it.
- ``ignore``: a server that accepts any ``response_format`` and replies in free text.
- ``reject``: a server that refuses any ``response_format`` with a 400.

Held to a schema, the reply is the kind's scripted-free reply turned into the schema's object (a judge's score
and reasoning, a verdict, a list of lines, ranked documents), else the smallest object the schema allows.
"""

from __future__ import annotations

import json
import re
from typing import Any

STRUCTURED = ("json_schema", "json_object", "ignore", "reject")


def schema_of(mode: str, response_format: Any) -> tuple[dict | None, tuple[int, str] | None]:
    """(the schema the reply must follow, or None; (status, message) when the request is refused)."""
    if not isinstance(response_format, dict):
        return None, None
    kind = response_format.get("type")
    if mode == "reject":
        return None, (400, f"response_format is not supported (type {kind!r})")
    if mode == "ignore" or kind in (None, "text"):
        return None, None
    if mode == "json_object":
        if kind != "json_object":  # as llama-cpp-python 0.3 answers it: its validation error, as a 500
            return None, (
                500,
                f"1 validation error: ('body', 'response_format', 'type'): Input should be 'text' or "
                f"'json_object' (input {kind!r})",
            )
        return response_format.get("schema") or {"type": "object"}, None
    if kind == "json_schema":
        return (response_format.get("json_schema") or {}).get("schema") or {"type": "object"}, None
    if kind == "json_object":
        return {"type": "object"}, None
    return None, (400, f"Invalid value for response_format.type: {kind!r}")


_NUMBERING = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*\u2022])\s*")


def structured_reply(schema: dict, text: str) -> str:
    """The free-text reply ``text`` as an object ``schema`` accepts (see the module)."""
    props = schema.get("properties") or {}
    names = set(props)
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if isinstance(obj, dict) and (not names or set(obj) <= names):  # already such an object (a test question)
        missing = {k: minimal(props[k]) for k in schema.get("required", []) if k not in obj and k in props}
        return json.dumps({**obj, **missing})
    if names == {"score", "reasoning"}:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        m = re.search(r"\d+(?:\.\d+)?", lines[0] if lines else "")
        score = min(5, max(1, round(float(m.group(0))))) if m else 3
        return json.dumps({"score": score, "reasoning": " ".join(lines[1:])[:300]})
    if names == {"verdict"}:
        return json.dumps({"verdict": "YES" if text.strip().upper().startswith("YES") else "NO"})
    if len(names) == 1:
        (name,) = names
        spec = props[name]
        if spec.get("type") == "array":
            return json.dumps({name: _items(spec, text)})
    return json.dumps(minimal(schema))


def _items(spec: dict, text: str) -> list:
    lines = [_NUMBERING.sub("", ln).strip() for ln in text.splitlines() if ln.strip()]
    items = spec.get("items") or {}
    if items.get("type") == "object":  # e.g. ranked documents: the numbers of each line, in the fields' order
        fields = list(items.get("properties") or {})
        out = []
        for ln in lines:
            numbers = [int(float(x)) for x in re.findall(r"\d+(?:\.\d+)?", ln)]
            if len(numbers) >= len(fields):
                out.append(dict(zip(fields, numbers)))
        return out[: spec.get("maxItems", len(out))]
    return lines[: spec.get("maxItems", len(lines))]


def minimal(schema: dict) -> Any:
    """The smallest value a schema allows: its first enum value, an empty string or list, zero, or an object of
    its required properties' smallest values."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: minimal(props.get(k, {})) for k in schema.get("required", list(props))}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return ""
