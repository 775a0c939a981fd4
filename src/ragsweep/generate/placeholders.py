"""Placeholders and prompt-template echoes: replies that only look like questions (pure).

A small model may write the prompt's JSON template back (``"question": "<the question>"``) or copy a sentence
of its instructions. The corpus checks cannot catch all of that: a placeholder never occurs in the corpus,
so as an out-of-scope term it is "verified absent". Such candidates are rejected first, with their own
reasons. The template text is taken from ``prompts.build`` itself (every type, no passages), so the check
follows the prompt when it changes. Text that occurs in the corpus is the corpus's, never a placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache

from ragsweep.generate import prompts
from ragsweep.generate.candidates import Candidate

PLACEHOLDER = "placeholder text"
ECHO = "prompt template echo"
EMPTY = "empty reply"
PROMPT_ECHO = "reply echoes the prompt"
REASONS = (PLACEHOLDER, ECHO)

NGRAM = 4  # words in a run shared with the template
COVERED = 0.75  # share of a text's words in such runs at which it "mostly consists of" template text
# <the question>, <its number>, <...>: word or ellipsis content, no space after "<" (so "a < b" is not one)
_ANGLE = re.compile(r"<(?:[\w.…][^<>\n]{0,78})?[\w.…?]>")
# {question}, {{ the answer }}: format- and template-engine fields
_CURLY = re.compile(r"\{\{?\s*[^\W\d][\w .'-]{0,60}?\s*\}\}?")
_SQUARE = re.compile(r"\[([^\[\]\n]{1,80})\]")
# [your question here], [answer]: square brackets only with these words (legal text has [Repealed], [a], [2019])
_CUES = frozenset("your here insert placeholder todo tbd xxx fill".split())
_STOP = frozenset("a an the of or and from that this its it to in on for with one two more".split())
_SPLITS = (r"\n+", r"[\n.;:!?]+", r'[\n.;:!?()"{}<>\[\],]+')


def fold(text: str) -> str:
    """Words only, case-folded (NFKC), one space around each: whole-word search is a substring search."""
    import unicodedata

    return " " + " ".join(re.sub(r"[\W_]+", " ", unicodedata.normalize("NFKC", text).casefold()).split()) + " "


def _words(text: str) -> list[str]:
    return fold(text).split()


@lru_cache(maxsize=1)
def _template() -> tuple[frozenset, frozenset, frozenset, tuple[str, ...]]:
    """From every type's prompt without passages: its fragments (lines, sentences, clauses; two words or
    more, one of four letters or more, folded: not "i am"), its word n-grams, the words of its fields and
    placeholders, and its placeholders."""
    texts = [prompts.build(t, []) for t in prompts.TYPE_INSTRUCTIONS]
    fragments = {" ".join(_words(p)) for text in texts for split in _SPLITS for p in re.split(split, text)}
    grams: set[tuple[str, ...]] = set()
    for text in texts:
        w = _words(text)
        grams.update(tuple(w[i : i + NGRAM]) for i in range(len(w) - NGRAM + 1))
    own = tuple(dict.fromkeys(m for text in texts for m in _ANGLE.findall(text)))
    keys = {k for text in texts for k in re.findall(r'"(\w+)":', text)}
    field_words = {w for p in (*own, *keys) for w in _words(p)} - _STOP
    fragments = {f for f in fragments if len(f.split()) >= 2 and max(map(len, f.split())) >= 4}
    return frozenset(fragments), frozenset(grams), frozenset(field_words), own


def placeholder_in(text: str) -> str | None:
    """The first placeholder in ``text``: ``<...>``, ``{...}``, or ``[...]`` of template and filler words."""
    found = [m.group(0) for m in (_ANGLE.search(text), _CURLY.search(text)) if m]
    field_words = _template()[2]
    for m in _SQUARE.finditer(text):
        words = set(_words(m.group(1)))
        if words and words <= _CUES | field_words | _STOP and words & (_CUES | field_words):
            found.append(m.group(0))
            break
    return min(found, key=text.find) if found else None


def template_echo(text: str) -> bool:
    """Whether ``text`` is a fragment of the prompt template, or mostly (``COVERED``) runs of ``NGRAM`` words
    of it; a question that merely shares some words with the instructions is not."""
    fragments, grams, _, _ = _template()
    words = _words(text)
    if len(words) >= 2 and " ".join(words) in fragments:
        return True
    if len(words) < NGRAM:
        return False
    covered: set[int] = set()
    for i in range(len(words) - NGRAM + 1):
        if tuple(words[i : i + NGRAM]) in grams:
            covered.update(range(i, i + NGRAM))
    return len(covered) >= COVERED * len(words)


def fields(c: Candidate) -> Iterator[tuple[str, str]]:
    """(name, text) of what a candidate says: question, reference answer, evidence, out-of-scope terms."""
    yield "question", c.question
    if c.reference_answer:
        yield "answer", c.reference_answer
    for i, q in enumerate(c.quotes):
        yield f"evidence[{i}]", q.text
    for term in [*(c.source.get("absent_terms") or []), *([c.out_of_scope_term] if c.out_of_scope_term else [])]:
        yield "out-of-scope term", term


def problem(c: Candidate, in_corpus: Callable[[str], bool]) -> str | None:
    """A rejection reason (``PLACEHOLDER`` or ``ECHO``, with detail) or None. ``in_corpus(text)``: whether the
    corpus contains ``text`` verbatim (then it is not a placeholder, nor, for evidence, an echo)."""
    from ragsweep.datasets.text_evidence import snippet

    for name, text in fields(c):
        token = placeholder_in(text)
        if token is not None and not in_corpus(token):
            return f"{PLACEHOLDER}: {snippet(token, 40)} in the {name}"
    for name, text in fields(c):
        if template_echo(text) and not (name.startswith("evidence") and in_corpus(text)):
            return f"{ECHO}: the {name} {snippet(text, 60)} is the prompt's text"
    return None


def unparseable(reply: str, prompt: str = "") -> str:
    """Why a reply that is not the JSON asked for was rejected: an empty reply; the prompt written back (its
    opening sentence, or half of it or more); the prompt's own placeholders written back (``"passage": <its
    number>`` is not JSON, counted as placeholder text); else unparseable."""
    text = reply.strip()
    if not text:
        return EMPTY
    if prompts.MARKER in text or (prompt and len(text) >= len(prompt) // 2 and text[:200] in prompt):
        return PROMPT_ECHO
    own = next((p for p in _template()[3] if p in reply), None)
    return f"{PLACEHOLDER}: {own} in a reply that is not JSON" if own else "unparseable reply"
