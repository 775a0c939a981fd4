"""What an OpenAI-compatible server says about itself: its context window and how many requests it
computes at once, where it tells (llama.cpp ``GET /props``; vLLM ``GET /v1/models`` ``max_model_len``;
Ollama ``POST /api/ps`` / ``/api/show``; LM Studio ``GET /api/v0/models``), and what it serves under the
model's name (the model file or its digest and the chat template, where stated: ``identity``, part of every
call's cache key, so a server restarted with another file or template under the same alias is asked anew).

Asked once per endpoint and model, with a short timeout; a server that tells nothing (OpenAI,
llama-cpp-python) leaves both unknown, and the engine learns them from replies instead
(``context_length_exceeded`` errors, queueing).
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from functools import lru_cache

TIMEOUT_S = 3.0
FIT_WAIT_S = 10.0  # llama-cpp-python's window probe: a refusal is back long before this


@dataclass(frozen=True)
class ServerInfo:
    context_window: int | None = None
    slots: int | None = None
    source: str | None = None  # where the figures came from, e.g. "llama.cpp /props"
    identity: str | None = None  # a digest of the model file and chat template the server states, else None


@dataclass(frozen=True)
class Endpoint:
    """The server a probe asks, as one: its API base (``.../v1``), the root beside it (where llama.cpp, Ollama and
    llama-cpp-python keep their own paths), the model asked about and the key sent with each request."""

    base: str
    root: str
    model: str
    api_key: str | None


def _identity(**stated) -> str | None:
    """A digest of what the server states it serves (None when it states none of it)."""
    import hashlib

    kept = {k: v for k, v in stated.items() if v not in (None, "", {}, [])}
    if not kept:
        return None
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()[:16]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The key goes to the endpoint the spec names and nowhere else: a redirect is an answer of no use."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102 - urllib's hook
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def _get(url: str, api_key: str | None, body: dict | None = None, timeout: float = TIMEOUT_S) -> dict | None:
    return _ask(url, api_key, body, timeout)[1]


def _ask(
    url: str, api_key: str | None, body: dict | None = None, timeout: float = TIMEOUT_S
) -> tuple[int | None, dict | None]:
    """(HTTP status, its JSON body): a refusal's body too; (None, None) when nothing came back."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        with _OPENER.open(urllib.request.Request(url, data=data, headers=headers), timeout=timeout) as r:
            return r.status, json.loads(r.read(1 << 20).decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read(1 << 20).decode("utf-8", "replace"))
        except (OSError, ValueError):
            return exc.code, None
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError):
        return None, None


def is_local(base_url: str | None) -> bool:
    """A server on this machine or a private network (loopback, RFC 1918, link-local, a name without a dot such
    as a container's, ``.local``): one that may compute few requests at once. Otherwise a hosted API."""
    if not base_url:
        return False
    host = urllib.parse.urlsplit(base_url).hostname or ""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host == "localhost" or "." not in host or host.endswith((".local", ".internal", ".lan"))
    return ip.is_loopback or ip.is_private or ip.is_link_local


def _int(value) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


def from_llama_cpp(props: dict) -> ServerInfo | None:
    settings = props.get("default_generation_settings") or {}
    n_ctx = _int(settings.get("n_ctx") or props.get("n_ctx"))
    slots = _int(props.get("total_slots"))
    ident = _identity(model=props.get("model_path"), template=props.get("chat_template"))
    return ServerInfo(n_ctx, slots, "llama.cpp /props", ident) if n_ctx or slots or ident else None


def from_models(listing: dict, model: str) -> ServerInfo | None:
    """vLLM (``max_model_len``) and LM Studio (``loaded_context_length`` / ``max_context_length``)."""
    for entry in listing.get("data") or []:
        if isinstance(entry, dict) and entry.get("id") == model:
            # vLLM's root is the weights' path; LM Studio states the architecture and quantisation
            ident = _identity(**{k: entry.get(k) for k in ("root", "arch", "quantization", "compatibility_type")})
            for key in ("max_model_len", "loaded_context_length", "max_context_length"):
                n = _int(entry.get(key))
                if n:
                    return ServerInfo(n, None, f"/models {key}", ident)
            return ServerInfo(identity=ident) if ident else None
    return None


def from_ollama(ps: dict | None, show: dict | None, model: str) -> ServerInfo | None:
    """The loaded model's context (``/api/ps``), else the model's ``num_ctx`` parameter (``/api/show``); the
    model's template, parameters and details as its identity."""
    show = show or {}
    # what /api/show states of the model whether it is loaded or not (/api/ps lists only loaded ones)
    ident = _identity(template=show.get("template"), parameters=show.get("parameters"), details=show.get("details"))
    for entry in (ps or {}).get("models") or []:
        if isinstance(entry, dict) and entry.get("name") in (model, f"{model}:latest"):
            n = _int(entry.get("context_length"))
            if n:
                return ServerInfo(n, None, "Ollama /api/ps", ident)
    m = re.search(r"(?m)^\s*num_ctx\s+(\d+)", show.get("parameters") or "")
    if m:
        return ServerInfo(int(m.group(1)), None, "Ollama /api/show num_ctx", ident)
    return ServerInfo(identity=ident) if ident else None


def llama_cpp_python_window(endpoint: Endpoint, want: int, timeout: float, remember: str | None = None):
    """llama-cpp-python states no context window, but refuses a prompt of its window or more before computing
    it, saying the window ("Requested tokens (N) exceed context window of W"). A prompt of a few more than
    ``want`` tokens, as its own ``/extras/tokenize/count`` counts them, asks that: refused, the window is learnt
    at once (a server started with ``want`` refuses it too); answered (one token), the window holds ``want``,
    at the cost of the server reading that prompt once, which ``remember`` (a JSON file) keeps from being paid
    again. None: not llama-cpp-python (no tokenize endpoint), or no answer."""
    from ragsweep.llm.retry import window_in
    from ragsweep.redact import redact_url

    base, root, model, api_key = endpoint.base, endpoint.root, endpoint.model, endpoint.api_key

    key = f"{redact_url(base)}|{model}|{want}"  # a file in the cache: no URL's credentials
    known = _remembered(remember)
    if known.get(key) == "fit":
        return ServerInfo(None, None, f"llama-cpp-python: a prompt of {want:,} tokens fit (probe, remembered)")
    # its tokenizer waits for the model like a completion does: a busy server answers late, not never
    status, one = _ask(f"{root}/extras/tokenize/count", api_key, {"input": "ragsweep " * 64}, timeout=timeout)
    if status != 200 or not isinstance(one, dict) or not _int(one.get("count")):
        return None
    per = max(1, int(one["count"])) / 64
    text = "ragsweep " * int(want / per + 16)
    # a refusal comes back before the prompt is read; a prompt that fits is read, which may take minutes on a CPU:
    # no answer within FIT_WAIT_S means it fits (the server reads it on, once)
    status, reply = _ask(
        f"{base}/chat/completions",
        api_key,
        {"model": model, "messages": [{"role": "user", "content": text}], "max_tokens": 1, "temperature": 0},
        timeout=FIT_WAIT_S,
    )
    if status == 200 or status is None:
        if remember:
            _remember(remember, {**known, key: "fit"})
        return ServerInfo(None, None, f"llama-cpp-python: a prompt of {want:,} tokens fit (probe)")
    limit = window_in(json.dumps(reply)) if reply is not None else None
    return ServerInfo(limit, None, "llama-cpp-python: a longer prompt refused (probe)") if limit else None


def _remembered(path: str | None) -> dict:
    try:
        return json.loads(open(path, encoding="utf-8").read()) if path else {}
    except (OSError, ValueError):
        return {}


def _remember(path: str, facts: dict) -> None:
    import os

    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(facts, f, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass


@lru_cache(maxsize=32)
def probe(
    base_url: str | None,
    model: str,
    api_key: str | None = None,
    context_window: int | None = None,
    timeout: float = 60.0,
    remember: str | None = None,
) -> ServerInfo:
    """Asks the endpoint's own model listing (vLLM, LM Studio); a local server (``is_local``) also the paths
    of llama.cpp, LM Studio and Ollama beside it, and, stating none, llama-cpp-python's refusal of a prompt of
    ``context_window`` tokens (``llama_cpp_python_window``). OpenAI's API is not asked: it states neither."""
    if not base_url or "api.openai.com" in base_url:
        return ServerInfo()
    base = base_url.rstrip("/")
    root = re.sub(r"/v1$", "", base)
    local = is_local(base_url)
    if local:
        props = _get(f"{root}/props", api_key)
        if isinstance(props, dict) and (info := from_llama_cpp(props)):
            return info
    listing = _get(f"{base}/models", api_key)
    if isinstance(listing, dict) and (info := from_models(listing, model)):
        return info
    if not local:
        return ServerInfo()
    lmstudio = _get(f"{root}/api/v0/models", api_key)
    if isinstance(lmstudio, dict) and (info := from_models(lmstudio, model)):
        return info
    show = _get(f"{root}/api/show", api_key, {"model": model})
    if isinstance(show, dict):
        ps = _get(f"{root}/api/ps", api_key)
        if info := from_ollama(ps if isinstance(ps, dict) else None, show, model):
            return info
    if context_window and (
        info := llama_cpp_python_window(Endpoint(base, root, model, api_key), context_window, timeout, remember)
    ):
        return info
    return ServerInfo()
