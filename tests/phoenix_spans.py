"""Reading spans back from the real Phoenix server of ``scripts/phoenix-server.sh`` (``.ci/run`` starts it):
its REST API (``conftest.phoenix_url`` names the server)."""

from __future__ import annotations

import time

import httpx


def spans_of(url: str, project: str, want, timeout: float = 60) -> list[dict]:
    """Every span of ``project`` once ``want(spans)`` holds (Phoenix ingests in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        spans: list[dict] = []
        cursor = None
        while True:
            params = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
            reply = httpx.get(f"{url}/v1/projects/{project}/spans", params=params, timeout=30)
            if reply.status_code == 404:  # the project is made with its first span
                break
            reply.raise_for_status()
            body = reply.json()
            spans += body["data"]
            cursor = body.get("next_cursor")
            if not cursor:
                break
        if want(spans) or time.monotonic() > deadline:
            return spans
        time.sleep(0.5)


def documents(span: dict, prefix: str = "retrieval.documents") -> list[dict]:
    """A span's OpenInference documents, in order (Phoenix returns the attributes flat)."""
    a, out, i = span["attributes"], [], 0
    while f"{prefix}.{i}.document.id" in a:
        doc = {k: a.get(f"{prefix}.{i}.document.{k}") for k in ("id", "score", "content")}
        meta = f"{prefix}.{i}.document.metadata."  # sent as JSON, returned as flat keys
        doc["metadata"] = {k[len(meta) :]: v for k, v in a.items() if k.startswith(meta)}
        out.append(doc)
        i += 1
    return out
