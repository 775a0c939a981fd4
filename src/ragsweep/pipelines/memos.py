"""The answering stage's per-text memos, released together once every answer is written.

A sweep shows the same chunk texts to many configurations, top_k values and questions, so the per-answer work
memoises what depends on a chunk or an answer alone: the extractive generator's sentences and terms, the
normalised texts, each chunk's n-gram set (QuIP) and sentence lengths, each distinct (answer, context)'s flags.
They are of no use to scoring and judging, which follow, so their memory goes back first (``forget``).
"""

from __future__ import annotations

import sys

# module -> its memos (functools.lru_cache, or a function that empties its own); a module not imported yet holds
# none, and is not imported here (a no-op re-run imports no LlamaIndex)
MEMOS = {
    "ragsweep.groundedness.detectors.quip": ("chunk_grams",),
    "ragsweep.groundedness.text_norm": ("normalised",),
    "ragsweep.pipelines.extractive": ("sentences", "terms"),
    "ragsweep.pipelines.degenerate": ("forget_memos",),
}


def forget() -> None:
    """Empty every answering memo of the modules this process imported (they refill on next use)."""
    for name, memos in MEMOS.items():
        module = sys.modules.get(name)
        for memo in memos if module is not None else ():
            held = getattr(module, memo)
            (held.cache_clear if hasattr(held, "cache_clear") else held)()
