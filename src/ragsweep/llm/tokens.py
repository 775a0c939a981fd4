"""Token counts for estimates made before a call (rate limiting, budget, ``--dry-run``).

Counts use tiktoken's cl100k_base (shipped with llama-index-core, so offline), plus OpenAI's
documented overhead of about 4 tokens per chat message. For other tokenizers this is an
estimate; the endpoint's reported usage is what gets accounted after the call.
"""

from __future__ import annotations

from functools import lru_cache

MESSAGE_OVERHEAD = 4
REPLY_PRIMING = 3


@lru_cache(maxsize=1)
def _encoder():
    from llama_index.core.utils import get_tokenizer

    return get_tokenizer()


def count_tokens(text: str) -> int:
    return len(_encoder()(text)) if text else 0


def count_message_tokens(messages) -> int:
    """Prompt tokens of a chat request: each message's content plus per-message overhead."""
    total = REPLY_PRIMING
    for m in messages:
        content = m.content if hasattr(m, "content") else m.get("content", "")
        total += MESSAGE_OVERHEAD + count_tokens(content or "")
    return total
