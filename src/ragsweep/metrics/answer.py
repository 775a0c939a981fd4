"""Short-answer metrics: does the generated answer contain, equal or share tokens with the gold answer.

Both texts are normalised as in the official SQuAD v1.1 evaluation script (Rajpurkar et al. 2016,
"SQuAD: 100,000+ Questions for Machine Comprehension of Text", EMNLP): lower-case, remove
punctuation, remove the articles a/an/the, collapse whitespace. Real data adds two steps the
ASCII-only script lacks: NFKC first (full-width letters, ligatures, no-break spaces), and every
Unicode punctuation character (curly quotes, dashes, ellipsis) counts as punctuation.

Every metric takes ``(answer, references)``: ``references`` is one gold string or several, and
the score is the best over them, as in SQuAD. NaN (undefined, excluded from means) when there is
no reference or every reference normalises to nothing; an empty or missing answer scores 0.0.
"""

from __future__ import annotations

import functools
import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Union

References = Union[str, Iterable[str], None]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ASCII_PUNCTUATION = frozenset(string.punctuation)


def is_punctuation(ch: str) -> bool:
    """SQuAD's ``string.punctuation`` plus every Unicode punctuation category (P*)."""
    return ch in _ASCII_PUNCTUATION or unicodedata.category(ch).startswith("P")


class _Deletions(dict):
    """``str.translate``'s table deleting punctuation: each character is looked up once per process (a miss asks
    ``is_punctuation``), then in C; the per-character Python test cost more than the rest of the records."""

    def __missing__(self, codepoint: int) -> int | None:
        out = None if is_punctuation(chr(codepoint)) else codepoint
        self[codepoint] = out
        return out


_PUNCTUATION = _Deletions()


def normalize_answer(text: str | None) -> str:
    """SQuAD v1.1 ``normalize_answer`` after NFKC, with Unicode punctuation removed too.

    Punctuation is deleted, not replaced by a space, as in SQuAD: "don't" and "don’t" both
    become "dont". Articles are removed after punctuation, whole words only.
    """
    return _normalized(text) if isinstance(text, str) else ""


@functools.lru_cache(maxsize=1 << 16)
def _normalized(text: str) -> str:
    """Memoised: a record's three metrics normalise the same answer, and every configuration the same references."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.translate(_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answer_tokens(text: str | None) -> list[str]:
    """The whitespace tokens of the normalised text."""
    return normalize_answer(text).split()


def reference_tokens(references: References) -> list[list[str]]:
    """The token lists of the references that normalise to something (missing ones skipped)."""
    if isinstance(references, str):
        references = [references]
    elif not isinstance(references, Iterable):
        references = []  # None, or a missing value read from a table (NaN)
    tokenised = (answer_tokens(r) for r in references if isinstance(r, str))
    return [t for t in tokenised if t]


def contains_run(tokens: Sequence[str], run: Sequence[str]) -> bool:
    """Whether ``run`` occurs in ``tokens`` as a contiguous subsequence (token boundaries respected)."""
    tokens, run = list(tokens), list(run)
    n = len(run)
    return n > 0 and any(tokens[i : i + n] == run for i in range(len(tokens) - n + 1))


def token_overlap_f1(prediction: Sequence[str], gold: Sequence[str]) -> float:
    """SQuAD's bag-of-tokens F1 of two token lists (each token counted as often as it occurs)."""
    same = sum((Counter(prediction) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(prediction), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def best_over_references(
    answer: str | None, references: References, score: Callable[[list[str], list[str]], float]
) -> float:
    """Max of ``score(answer tokens, reference tokens)`` over the references; NaN without one."""
    golds = reference_tokens(references)
    if not golds:
        return math.nan
    tokens = answer_tokens(answer)
    return max(score(tokens, gold) for gold in golds)


def answer_contains(answer: str | None, references: References) -> float:
    """1.0 if the normalised answer contains a normalised reference on token boundaries, else 0.0.

    The "answer contains the gold span" accuracy used for open-domain and retrieval-augmented QA
    (e.g. Mallen et al. 2023, "When Not to Trust Language Models", ACL; Liu et al. 2024, "Lost in
    the Middle", TACL), here on SQuAD-normalised tokens, so "10 days" is not in "110 days". It
    credits a long answer that states the fact, which exact match does not. NaN without a reference.
    """
    return best_over_references(answer, references, lambda a, g: 1.0 if contains_run(a, g) else 0.0)


def exact_match(answer: str | None, references: References) -> float:
    """1.0 if the normalised answer equals a normalised reference, else 0.0 (SQuAD EM). NaN without one."""
    return best_over_references(answer, references, lambda a, g: 1.0 if a == g else 0.0)


def token_f1(answer: str | None, references: References) -> float:
    """SQuAD's token F1: harmonic mean of token precision and recall of the normalised answer
    against the best reference (tokens as a bag, repeats counted). NaN without a reference."""
    return best_over_references(answer, references, token_overlap_f1)
