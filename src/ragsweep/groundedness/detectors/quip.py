"""QuIP: the share of the answer's character n-grams that occur in the contexts (n = 21 by default).

After Weller et al. 2024, "'According to ...': Prompting Language Models Improves Quoting from
Pre-Training Data" (EACL), whose QUIP-Score measures how much of a generation is quoted from a corpus;
here the corpus is the retrieved contexts, as in the groundedness-detector comparison of Thomson Reuters'
legal-QA study. Cheap (no model), and blind to paraphrase: a faithful paraphrase scores low.

Nothing is computed twice: a sweep shows the same chunks to many configurations, top_k values and questions,
so each distinct chunk text's n-gram set is built once (``chunk_grams``, memoised; ``GRAMS_BUILT`` counts the
sets built, which the tests compare with the distinct chunks) and a context is the union of its chunks' sets.
The union is exact: the contexts are joined with a line break, which a normalised answer never holds, so an
n-gram across two chunks can only match at the space on either side of the break (``_edges``).
"""

from __future__ import annotations

import time
from collections import Counter
from functools import lru_cache

from ragsweep.groundedness.detectors.base import Detector, Scored
from ragsweep.groundedness.text_norm import normalised

N = 21
GRAMS_BUILT: Counter[int] = Counter()  # n -> n-gram sets built (the work ``chunk_grams`` saves is counted)


@lru_cache(maxsize=2048)
def chunk_grams(text: str, n: int = N) -> frozenset[str]:
    """The character ``n``-grams of one normalised chunk text, built once per distinct text (bounded memo)."""
    GRAMS_BUILT[n] += 1
    return frozenset(text[i : i + n] for i in range(len(text) - n + 1))


def _edges(texts: list[str], n: int) -> set[str]:
    """The n-grams of the joined contexts that hold the space beside a break (" \\n "): the first of a chunk with
    the space before it, the last with the space after it (one gram, for a chunk of n - 2 characters)."""
    out: set[str] = set()
    for i, t in enumerate(texts):
        padded = (" " if i > 0 else "") + t + (" " if i + 1 < len(texts) else "")
        if len(padded) >= n:
            if i > 0:
                out.add(padded[:n])
            if i + 1 < len(texts):
                out.add(padded[-n:])
    return out


def quip_score(answer: str, contexts: list[str] | tuple[str, ...], n: int = N) -> float | None:
    """Share of ``answer``'s character ``n``-grams found in the contexts (case and punctuation aside);
    an answer shorter than ``n`` scores 1 if it occurs whole, else 0; None for an empty answer."""
    a = normalised(answer)
    if not a:
        return None
    texts = [normalised(c) for c in contexts]
    if len(a) < n:
        return float(any(a in t for t in texts))
    grams = {a[i : i + n] for i in range(len(a) - n + 1)}
    left = grams - _edges(texts, n)
    for t in texts:
        if not left:
            break
        left -= chunk_grams(t, n)
    return (len(grams) - len(left)) / len(grams)


def quip_of_nodes(answer: str | None, nodes) -> float | None:
    """A sweep's stage-1 ``quip`` of an LLM answer against the nodes the generator read (None without either).
    An extractive answer is not scored: it is the context's own sentences, a quote by construction."""
    if not answer or not nodes:
        return None
    return quip_score(answer, [n.node.get_content() for n in nodes])


class Quip(Detector):
    name = "quip"

    def score_all(self, items) -> list[Scored]:
        out = []
        for it in items:
            t0 = time.perf_counter()
            s = quip_score(it.answer, it.contexts)
            out.append(Scored(s, (time.perf_counter() - t0) * 1000, 0.0, None if s is not None else "empty answer"))
        return out
