"""Abstention: did the generator decline to answer, and should it have?

A demanding user needs both halves: a pipeline that answers what its documents cannot answer
(out-of-scope, irrelevant, jailbreak or unsafe questions) misleads, and one that refuses answerable
questions is useless. Following the unanswerable-question evaluation of SQuAD 2.0 (Rajpurkar, Jia &
Liang 2018, "Know What You Don't Know") a question is *unanswerable* when it has no gold evidence,
and two rates are reported: ``abstention_rate`` over unanswerable questions (higher is better) and
``false_abstention_rate`` over answerable ones (lower is better).

An LLM's answer abstains when it is (or begins with) the configured refusal sentence, or begins with
one of a short list of refusal phrasings (``REFUSAL_PATTERNS``), after normalisation (NFKC, curly
quotes straightened, case, whitespace, surrounding quotes and trailing punctuation). The patterns are
anchored at the start of the answer, so an answer that merely mentions "cannot" is not a refusal.
The extractive generator abstains by a threshold on its top retrieval score (``abstains``), chosen on
the validation questions by balanced accuracy (``tune_threshold``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from fractions import Fraction
from typing import Iterable, Sequence

# what the LLM is told to reply (``generator.refusal``) and what an abstaining extractive answer reads
REFUSAL = "I cannot answer this from the provided documents."
# LlamaIndex's answer when nothing was retrieved
_EMPTY_RESPONSE = "empty response"
_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201b": "'",
        "\u2032": "'",
        "`": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201f": '"',
        "\u00ab": '"',
        "\u00bb": '"',
    }
)
_NOT = r"(?:cannot|can not|can't|could not|couldn't|am unable to|'m unable to|am not able to|'m not able to)"
_SOURCE = r"(?:context|contexts|documents?|information|text|texts|sources?|passages?|excerpts?)"
# each anchored at the start of the normalised answer
REFUSAL_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        # "I cannot answer ...", "Sorry, I can't help with that", "I'm unable to provide ..."
        rf"^(?:(?:i'm |i am )?sorry,? (?:but )?)?(?:i|we) {_NOT} (?:answer|help|assist|provide|comply|find|determine|"
        r"say|tell|share|respond)\b",
        r"^(?:i|we) (?:do not|don't) know\b",
        # "The (provided) context does not contain/mention ...", "The documents do not say ..."
        rf"^(?:the|this|these) (?:provided |given |retrieved )?{_SOURCE}(?: provided| given)? (?:does|do) not "
        r"(?:contain|provide|mention|say|state|specify|include|address|give|answer|cover)\b",
        r"^there is no (?:relevant )?(?:information|mention|answer)\b",
        r"^(?:no|not enough) (?:relevant )?information\b",
        r"^(?:the )?(?:answer|information) (?:is )?not (?:found|available|provided|given|present) in\b",
    )
)


def normalise(text: str) -> str:
    """NFKC, curly quotes straightened, lower case, whitespace collapsed, surrounding quotes and
    trailing punctuation dropped: what refusal matching compares."""
    t = unicodedata.normalize("NFKC", text).translate(_QUOTES).lower()
    t = " ".join(t.split())
    t = t.strip(" \"'*_")
    return t.rstrip(" .!?;:").strip(" \"'*_")


def is_refusal(answer: str | None, refusal: str | None = None) -> bool:
    """Whether ``answer`` declines to answer: it is, or begins with, the configured ``refusal`` (or the
    default ``REFUSAL``), or begins with one of ``REFUSAL_PATTERNS``. An empty answer is not a refusal
    (it is flagged ``answer_empty``)."""
    if not answer or not answer.strip():
        return False
    text = normalise(answer)
    if text == _EMPTY_RESPONSE:
        return True
    for sentence in {REFUSAL, refusal or REFUSAL}:
        want = normalise(sentence)
        if want and (
            text == want or text.startswith(want + " ") or text.startswith(want + ".") or text.startswith(want + ",")
        ):
            return True
    return any(p.match(text) for p in REFUSAL_PATTERNS)


def abstains(top_score: float | None, threshold: float | None) -> bool:
    """The extractive generator's rule: abstain when the best retrieval score is below ``threshold``.
    No threshold: never. Nothing retrieved (``-inf``): always, when a threshold is set. Retrieved
    chunks without scores (``None``): never (there is nothing to compare)."""
    if threshold is None or top_score is None:
        return False
    return top_score < threshold


def top_score(scores: Iterable[float | None]) -> float | None:
    """The best of a retrieval's scores: ``-inf`` for an empty retrieval, None when no chunk has a score."""
    values = list(scores)
    if not values:
        return -math.inf
    known = [float(s) for s in values if s is not None]
    return max(known) if known else None


def balanced_accuracy(points: Sequence[tuple[float | None, bool]], threshold: float | None) -> Fraction:
    """Mean of the abstention rate on unanswerable and the answer rate on answerable ``points``
    ((top score, unanswerable) pairs), exactly (a ``Fraction``, so ties are ties)."""
    unans = [s for s, u in points if u]
    ans = [s for s, u in points if not u]
    tpr = Fraction(sum(abstains(s, threshold) for s in unans), len(unans))
    tnr = Fraction(sum(not abstains(s, threshold) for s in ans), len(ans))
    return (tpr + tnr) / 2


def tune_threshold(points: Sequence[tuple[float | None, bool]]) -> dict:
    """The threshold that best separates unanswerable from answerable validation ``points`` ((top
    score, unanswerable) pairs) by balanced accuracy of "abstain iff unanswerable".

    Candidates are "never" (None) and every distinct finite top score (abstain below it), in
    ascending order; the best balanced accuracy wins, ties to the lower threshold (never first).
    Without both kinds of question there is nothing to separate: never abstain, and say why."""
    n_unans = sum(1 for _, u in points if u)
    base = {"n_validation": len(points), "n_unanswerable": n_unans}
    if n_unans == 0 or n_unans == len(points):
        return {
            **base,
            "threshold": None,
            "balanced_accuracy": None,
            "reason": "the validation questions need both answerable and unanswerable ones: never abstain",
        }
    finite = sorted({s for s, _ in points if s is not None and math.isfinite(s)})
    candidates: list[float | None] = [None, *finite]
    scored = [(t, balanced_accuracy(points, t)) for t in candidates]
    best = max(ba for _, ba in scored)
    chosen = next(t for t, ba in scored if ba == best)
    return {
        **base,
        "threshold": chosen,
        "balanced_accuracy": round(float(best), 6),
        "candidates": [[t, round(float(ba), 6)] for t, ba in scored],
    }


def abstention_scores(abstained: bool | None, answerable: bool | None) -> dict[str, float]:
    """The per-question rates: ``abstention_rate`` (1/0) on an unanswerable question,
    ``false_abstention_rate`` (1/0) on an answerable one, NaN where undefined (a failed row, or a
    dataset without gold evidence, where answerability is unknown)."""
    nan = float("nan")
    if abstained is None or answerable is None:
        return {"abstention_rate": nan, "false_abstention_rate": nan}
    value = 1.0 if abstained else 0.0
    return {"abstention_rate": nan if answerable else value, "false_abstention_rate": value if answerable else nan}
