"""What the offline generator asks about: definitions and duties read off legal drafting, and sentences
with their neighbours (pure, deterministic).

Definitions and duties come from the legal-pattern extractor (``graphs.legal_patterns``: "X" means ...;
S shall / must / may [not] VERB O), applied one sentence at a time so that each fact keeps the sentence it
was read from: that sentence is the question's evidence and its reference answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragsweep.datasets.sentences import Sentence, sentences

MODALS = ("shall", "must", "may", "will", "should", "cannot", "can")
PERMISSIVE = ("may", "can", "permitted", "allowed", "authorised", "authorized", "entitled")
MIN_WORDS, MAX_WORDS = 6, 80  # a sentence shorter is a heading or a label; longer is a run-on list


@dataclass(frozen=True)
class Definition:
    sentence: Sentence
    term: str  # as written in the sentence


@dataclass(frozen=True)
class Duty:
    sentence: Sentence
    subject: str  # normalised (lower case)
    modal: str  # "shall", "must not", "is entitled to", ...
    verb: str  # "notify", "be erased", "" (entitled to ...)
    object: str
    kind: str  # obligation | permission | prohibition

    @property
    def passive(self) -> bool:
        return self.verb.startswith("be ")


@dataclass
class DocumentFacts:
    doc_id: str
    title: str
    sentences: list[Sentence]
    definitions: list[Definition]
    duties: list[Duty]


def _modal(label: str) -> tuple[str, str, bool] | None:
    """(modal phrase, verb phrase, negated) from a duty relation label such as ``SHALL_NOT_BE_PROCESSED``."""
    parts = label.lower().split("_")
    if parts[0] in MODALS:
        modal, rest = parts[0], parts[1:]
    elif len(parts) >= 2 and parts[1] in ("to", "from"):
        modal, rest = f"is {parts[0]} {parts[1]}", parts[2:]
    else:
        return None
    negated = bool(rest) and rest[0] == "not"
    if negated:
        rest = rest[1:]
        modal += " not"
    negated = negated or modal in ("cannot", "is prohibited from")
    return modal, " ".join(rest), negated


def _kind(modal: str, negated: bool) -> str:
    if negated:
        return "prohibition"
    return (
        "permission"
        if modal.split()[0] in PERMISSIVE or modal.split()[-2:-1] == ["entitled"] or any(w in modal for w in PERMISSIVE)
        else "obligation"
    )


def _cased(term: str, text: str) -> str | None:
    """``term`` as written in ``text`` (the extractor lower-cases names), or None if it is not there."""
    m = re.search(rf"\b{re.escape(term)}\b", text, re.IGNORECASE)
    return m.group(0) if m else None


def document_facts(doc_id: str, title: str, text: str) -> DocumentFacts:
    from ragsweep.graphs.legal_patterns import extract_triplets

    sents = [s for s in sentences(doc_id, text)]
    definitions: list[Definition] = []
    duties: list[Duty] = []
    for s in sents:
        if not MIN_WORDS <= s.words <= MAX_WORDS:
            continue
        for t in extract_triplets(s.text, max_per_chunk=8):
            if t.relation == "DEFINED_AS":
                term = _cased(t.subject, s.text)
                if term:
                    definitions.append(Definition(s, term))
            elif (m := _modal(t.relation)) is not None and t.relation not in ("HAS_TITLE", "REFERS_TO"):
                modal, verb, negated = m
                if verb and not re.fullmatch(r"[a-z][a-z -]*", verb):
                    continue
                duties.append(Duty(s, t.subject, modal, verb, t.object, _kind(modal, negated)))
    return DocumentFacts(doc_id, title, sents, definitions, duties)


def ict_pairs(facts: DocumentFacts) -> list[tuple[Sentence, Sentence, Sentence]]:
    """(previous, sentence, next) triples for Inverse Cloze Task questions: the middle sentence is the query,
    its neighbours the evidence (Lee, Chang & Toutanova 2019, "Latent Retrieval for Weakly Supervised Open
    Domain Question Answering", ACL)."""
    s = facts.sentences
    ok = [MIN_WORDS <= x.words <= MAX_WORDS for x in s]
    return [
        (s[i - 1], s[i], s[i + 1])
        for i in range(1, len(s) - 1)
        if ok[i - 1] and ok[i] and ok[i + 1] and s[i].words >= 8 and not s[i].text[:1].islower()
    ]  # no fragment
