"""What an OpenAI-compatible server says about itself: its context window and how many requests it
computes at once, where it tells (llama.cpp ``GET /props``; vLLM ``GET /v1/models`` ``max_model_len``;
Ollama ``POST /api/ps`` / ``/api/show``; LM Studio ``GET /api/v0/models``).

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


@dataclass(frozen=True)
class ServerInfo:
    context_window: int | None = None
    slots: int | None = None
    source: str | None = None  # where the figures came from, e.g. "llama.cpp /props"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The key goes to the endpoint the spec names and nowhere else: a redirect is an answer of no use."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102 - urllib's hook
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def _get(url: str, api_key: str | None, body: dict | None = None) -> dict | None:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        with _OPENER.open(urllib.request.Request(url, data=data, headers=headers), timeout=TIMEOUT_S) as r:
            return json.loads(r.read(1 << 20).decode("utf-8", "replace"))
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError):
        return None


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
    return ServerInfo(n_ctx, slots, "llama.cpp /props") if n_ctx or slots else None


def from_models(listing: dict, model: str) -> ServerInfo | None:
    """vLLM (``max_model_len``) and LM Studio (``loaded_context_length`` / ``max_context_length``)."""
    for entry in listing.get("data") or []:
        if isinstance(entry, dict) and entry.get("id") == model:
            for key in ("max_model_len", "loaded_context_length", "max_context_length"):
                n = _int(entry.get(key))
                if n:
                    return ServerInfo(n, None, f"/models {key}")
    return None


def from_ollama(ps: dict | None, show: dict | None, model: str) -> ServerInfo | None:
    """The loaded model's context (``/api/ps``), else the model's ``num_ctx`` parameter (``/api/show``)."""
    for entry in (ps or {}).get("models") or []:
        if isinstance(entry, dict) and entry.get("name") in (model, f"{model}:latest"):
            n = _int(entry.get("context_length"))
            if n:
                return ServerInfo(n, None, "Ollama /api/ps")
    m = re.search(r"(?m)^\s*num_ctx\s+(\d+)", (show or {}).get("parameters") or "")
    return ServerInfo(int(m.group(1)), None, "Ollama /api/show num_ctx") if m else None


@lru_cache(maxsize=32)
def probe(base_url: str | None, model: str, api_key: str | None = None) -> ServerInfo:
    """Asks the endpoint's own model listing (vLLM, LM Studio); a local server (``is_local``) also the paths
    of llama.cpp, LM Studio and Ollama beside it. OpenAI's API is not asked: it states neither."""
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
    return ServerInfo()
