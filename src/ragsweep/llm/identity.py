"""What about an LLM changes its replies: part of every cache key and configuration hash that depends on one."""

from __future__ import annotations


def llm_identity(llm) -> dict:
    """Model and sampling settings (not its URL, limits or timeouts, which change no reply)."""
    return {
        "model": llm.model,
        "temperature": llm.temperature,
        "seed": llm.seed,
        "max_tokens": llm.max_tokens,
        "context_window": llm.context_window,
    }
