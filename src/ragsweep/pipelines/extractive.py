"""The offline generator: an extractive baseline, labelled as such in every record.

No LLM weights exist offline, so answers are the retrieved sentences that best match the question
(IDF-weighted term overlap among the retrieved sentences, a classic extractive QA baseline; cf.
Jurafsky & Martin, "Speech and Language Processing", ch. on question answering). It plugs into
LlamaIndex's ``RetrieverQueryEngine`` as a response synthesizer, the slot an LLM synthesizer uses.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, Sequence

from llama_index.core.llms import MockLLM
from llama_index.core.response_synthesizers.base import BaseSynthesizer

GENERATOR_LABEL = "extractive-baseline"

_WORD = re.compile(r"\w+", re.UNICODE)
_SENT_END = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[A-Z0-9§])|\n+")
_K1, _B = 1.2, 0.75  # BM25's usual constants
# English function words plus question scaffolding ("how long", "how many") that carries no content.
STOPWORDS = frozenset(
    """a an and are as at be by can do does for from has have how i if in is it its may must of on or shall
    that the their there these this to under was were what when where which who whom why will with within
    without would you your long many much often""".split()
)


@lru_cache(maxsize=65536)
def sentences(text: str) -> tuple[str, ...]:
    """Split a chunk into sentences and heading lines (legal text breaks lines at sections).

    Memoised: a sweep shows the same chunks to many configurations and questions.
    """
    return tuple(s.strip() for s in _SENT_END.split(text) if s and s.strip())


@lru_cache(maxsize=262144)
def terms(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1)


def extract_answer(question: str, chunks: Sequence[str], max_sentences: int = 2) -> str:
    """Pick up to ``max_sentences`` retrieved sentences that best match the question.

    Sentences are ranked by BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance
    Framework: BM25 and Beyond") with the retrieved sentences as the collection, so a term found
    in every sentence counts for little and long sentences are not favoured for length alone.
    Ties keep retrieval order; the answer lists sentences in retrieval order. Returns "" when
    nothing was retrieved.
    """
    cands: list[str] = []
    seen: set[str] = set()
    for chunk in chunks:
        for s in sentences(chunk):
            if s not in seen:
                seen.add(s)
                cands.append(s)
    if not cands:
        return ""
    bags = [terms(s) for s in cands]
    df: dict[str, int] = {}
    for bag in bags:
        for t in bag:
            df[t] = df.get(t, 0) + 1
    n = len(cands)
    avg = sum(len(b) for b in bags) / n or 1.0
    q = terms(question)
    scores = []
    for i, bag in enumerate(bags):
        norm = _K1 * (1 - _B + _B * len(bag) / avg)
        # summed in sorted term order: a set's order follows PYTHONHASHSEED, and float sums in another order
        # differ in the last bit, which decided ties between equally good sentences differently per process
        score = sum(math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) * (_K1 + 1) / (1 + norm) for t in sorted(q & bag))
        scores.append((score, -i))
    order = sorted(range(n), key=lambda i: scores[i], reverse=True)
    best = [i for i in order[:max_sentences] if scores[i][0] > 0] or order[:1]
    return " ".join(cands[i] for i in sorted(best))


class ExtractiveSynthesizer(BaseSynthesizer):
    """A LlamaIndex response synthesizer that answers extractively, with no LLM call."""

    def __init__(self, max_sentences: int = 2) -> None:
        # MockLLM only fills BaseSynthesizer's slot so LlamaIndex does not resolve its default
        # OpenAI LLM; it is never called.
        super().__init__(llm=MockLLM())
        self._empty_response = ""  # LlamaIndex turns a falsy empty_response into "Empty Response"
        self._max_sentences = max_sentences

    def _get_prompts(self) -> dict[str, Any]:
        return {}

    def _update_prompts(self, prompts: dict[str, Any]) -> None:
        return None

    def get_response(self, query_str: str, text_chunks: Sequence[str], **kwargs: Any) -> str:
        return extract_answer(query_str, text_chunks, self._max_sentences)

    async def aget_response(self, query_str: str, text_chunks: Sequence[str], **kwargs: Any) -> str:
        return self.get_response(query_str, text_chunks)
