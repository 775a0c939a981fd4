"""The one text normalisation the per-answer checks compare in (QuIP, copy, echo and loop detection).

Case folded, every non-word character a space, whitespace collapsed. Memoised: a sweep compares the same chunk
texts for many configurations and questions, and one answer against several checks; ``NORMALISED`` counts the
texts actually normalised.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

_NON_WORD = re.compile(r"[^\w\s]")
NORMALISED: Counter[str] = Counter()  # "texts" -> texts normalised (not served from the memo)


@lru_cache(maxsize=8192)
def normalised(text: str) -> str:
    """``text`` case folded, punctuation turned to spaces, whitespace collapsed ("The Act's s. 5" -> "the act s 5")."""
    NORMALISED["texts"] += 1
    return " ".join(_NON_WORD.sub(" ", text.casefold()).split())
