"""QuIP: the share of the answer's character n-grams that occur in the contexts (n = 21 by default).

After Weller et al. 2024, "'According to ...': Prompting Language Models Improves Quoting from
Pre-Training Data" (EACL), whose QUIP-Score measures how much of a generation is quoted from a corpus;
here the corpus is the retrieved contexts, as in the groundedness-detector comparison of Thomson Reuters'
legal-QA study. Cheap (no model), and blind to paraphrase: a faithful paraphrase scores low.
"""

from __future__ import annotations

import re
import time

from ragsweep.groundedness.detectors.base import Detector, Scored

N = 21


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def quip_score(answer: str, contexts: list[str] | tuple[str, ...], n: int = N) -> float | None:
    """Share of ``answer``'s character ``n``-grams found in the contexts (case and punctuation aside);
    an answer shorter than ``n`` scores 1 if it occurs whole, else 0; None for an empty answer."""
    a = _norm(answer)
    if not a:
        return None
    ctx = " \n ".join(_norm(c) for c in contexts)
    if len(a) < n:
        return float(a in ctx)
    grams = {a[i : i + n] for i in range(len(a) - n + 1)}
    have = {ctx[i : i + n] for i in range(len(ctx) - n + 1)}
    return len(grams & have) / len(grams)


def quip_of_nodes(answer: str | None, nodes) -> float | None:
    """A sweep's stage-1 ``quip``: the answer against the nodes the generator read (an extractive answer
    quotes them: 1 by construction; the metric is for LLM answers)."""
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
