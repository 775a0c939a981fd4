"""What about an LLM changes its replies: part of every cache key and configuration hash that depends on one."""

from __future__ import annotations


def llm_identity(llm) -> dict:
    """Model and sampling settings (not its URL, limits or timeouts, which change no reply)."""
    ident = {
        "model": llm.model,
        "temperature": llm.temperature,
        "seed": llm.seed,
        "max_tokens": llm.max_tokens,
        "context_window": llm.context_window,
    }
    # a forced way of holding replies to their schema changes them; the default (learnt) leaves every hash as it was
    mode = getattr(llm, "structured_output", "auto")
    if mode != "auto":
        ident["structured_output"] = mode
    return ident
