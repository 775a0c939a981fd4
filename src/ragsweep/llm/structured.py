"""How an endpoint is held to a reply's JSON schema, learnt once per endpoint and model.

Every server ragsweep supports can constrain its output, each in its own words:

- ``json_schema``: OpenAI's structured outputs, ``response_format: {type: json_schema, json_schema: {name,
  schema, strict: true}}``; OpenAI, vLLM, LM Studio, Ollama's ``/v1`` and llama.cpp's own server take it.
- ``json_object``: ``response_format: {type: json_object, schema}``; llama-cpp-python takes only this (its
  request type refuses ``json_schema`` with a 422) and turns the schema into a grammar; llama.cpp's server
  takes it too.
- ``text``: neither: the prompt asks for today's text form, its parser reads the reply, and an unreadable reply
  is asked again once (``ask.py``).

``auto`` (``llm.structured_output``) learns which with a probe: a request whose schema allows one string,
``PROBE_TOKEN``, that the prompt never mentions, sent in each form in turn. A form that is refused (400/422)
or whose reply is not that object (a server that ignores ``response_format``) is not it. OpenAI's own API is
known to take ``json_schema`` and is not probed. The probe goes through the call cache, so a re-run replays it
and learns the same without a call; what was learnt, and how, goes into the manifest's endpoint record.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ragsweep.llm.reply_form import ReplyForm, strict_object

MODES = ("json_schema", "json_object", "text")
PROBED = ("json_schema", "json_object")  # in the order tried
PROBE_TOKEN = "ragsweep-schema-probe-7q"
PROBE_PROMPT = "Reply with one JSON object."
PROBE_MAX_TOKENS = 32

# OpenAI's strict mode refuses these keywords; elsewhere they bound a small model's strings, so a grammar closes
# them before max_tokens
_STRICT_UNSUPPORTED = ("maxLength", "minLength")


def _probe_value(obj: dict) -> str:
    if obj.get("probe") != PROBE_TOKEN:
        raise ValueError("not the probe's value")
    return PROBE_TOKEN


PROBE_FORM = ReplyForm(
    name="ragsweep_probe",
    schema=strict_object({"probe": {"type": "string", "enum": [PROBE_TOKEN]}}),
    from_json=_probe_value,
    parse_text=None,
    text_format="a JSON object",
)


@dataclass(frozen=True)
class OutputMode:
    """``mode``: one of ``MODES``; ``source``: how it was learnt, for the manifest and the endpoint line."""

    mode: str
    source: str

    @property
    def constrained(self) -> bool:
        return self.mode != "text"


def is_openai_api(base_url: str | None) -> bool:
    return not base_url or "api.openai.com" in base_url


def response_format(mode: str, form: ReplyForm, *, openai_api: bool = False) -> dict | None:
    """The request's ``response_format`` for ``form`` in ``mode`` (None: ``text``, nothing is sent)."""
    schema = _without(form.schema, _STRICT_UNSUPPORTED) if openai_api else form.schema
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": form.name, "schema": schema, "strict": True}}
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def _without(schema, keys: tuple[str, ...]):
    if isinstance(schema, dict):
        return {k: _without(v, keys) for k, v in schema.items() if k not in keys}
    if isinstance(schema, list):
        return [_without(v, keys) for v in schema]
    return schema


async def learn(spec_mode: str, base_url: str | None, ask) -> tuple[OutputMode, bool]:
    """(mode, final): the spec's or OpenAI's, else the probe sent in each form in turn, ``ask(kwargs)`` giving
    the reply's text; a form refused (``FormRefused``) or whose reply is not the schema's object is not it; a
    probe that cannot reach the server (retries used up) leaves the process on text."""
    from ragsweep.errors import shorten
    from ragsweep.llm.errors import FormRefused, LLMCallError, LLMFatalError

    known = configured(spec_mode, base_url)
    if known is not None:
        return known, True
    tried = []
    for mode in PROBED:
        kwargs = {"response_format": response_format(mode, PROBE_FORM), "max_tokens": PROBE_MAX_TOKENS}
        try:
            content = await ask({**kwargs, "temperature": 0.0})
        except FormRefused as exc:
            tried.append(f"{mode} refused ({exc.status})")
            continue
        except LLMFatalError:
            raise
        except LLMCallError as exc:  # the server could not be asked: text for now, probed again at the next call
            return OutputMode("text", f"probe failed ({shorten(str(exc), 160)}); replies read as text"), False
        if PROBE_FORM.read(content)[0] is not None:
            return OutputMode(mode, "; ".join(["probe", *tried, f"{mode} answered in the schema"])), True
        tried.append(f"{mode} ignored")
    return OutputMode("text", "; ".join(["probe", *tried])), True


def configured(spec_mode: str, base_url: str | None) -> OutputMode | None:
    """The mode known without asking the server: the spec's, or OpenAI's API's; None: probe it."""
    if spec_mode != "auto":
        return OutputMode(spec_mode, "llm.structured_output")
    if is_openai_api(base_url):
        return OutputMode("json_schema", "OpenAI's API (structured outputs)")
    return None


@dataclass
class FormUse:
    """One endpoint's structured replies in this process: the mode and how it was learnt, calls sent with a
    schema, forms whose ``response_format`` the server refused, and the repair re-asks (their count, price, how
    many read afterwards) with the replies still unreadable (the manifest's ``structured``)."""

    mode: OutputMode | None = None
    final: bool = False
    probes: int = 0
    constrained: int = 0
    asked: int = 0  # replies asked in a form (``ask``), re-asks not counted
    refused: dict[str, str] = field(default_factory=dict)
    reasks: int = 0
    reask_usd: float = 0.0
    reask_unpriced: int = 0
    repaired: int = 0
    unreadable: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def note_reask(self, cost_usd: float | None, repaired: bool) -> None:
        with self._lock:
            self.reasks += 1
            self.repaired += repaired
            if cost_usd is None:
                self.reask_unpriced += 1
            else:
                self.reask_usd += cost_usd

    def note_asked(self, readable: bool) -> None:
        with self._lock:
            self.asked += 1
            self.unreadable += not readable

    def summary(self) -> dict:
        assert self.mode is not None  # summarised once learnt
        return {
            "mode": self.mode.mode,
            "source": self.mode.source,
            "probes": self.probes,
            "constrained_calls": self.constrained,
            "asked": self.asked,
            "refused": dict(self.refused),
            "reasks": self.reasks,
            "reask_usd": None if self.reask_unpriced and not self.reask_usd else round(self.reask_usd, 6),
            "repaired": self.repaired,
            "unreadable": self.unreadable,
        }
