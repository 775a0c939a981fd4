"""The offline generator: questions read off the corpus without a model (pure, seeded).

Simple questions come from definitions ("What does "Controller" mean in ...?"), duties ("Who shall notify
...?") and the Inverse Cloze Task (Lee et al. 2019: a sentence is the query, its neighbours the evidence);
the other types are built from the same facts: situational (asked as the duty's subject), double (two facts
of one document), comparative (one term or duty in two documents), distracting (a sentence of another
document first), vague (no document named) and out of scope (a term defined elsewhere, asked about a
document in which it never occurs). It is a labelled baseline: the wording is templated, so what it measures
is how well it stands in for real questions (BENCHMARKS.md, "Synthetic questions as a proxy").
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator

from ragsweep.generate.candidates import Candidate, Quote
from ragsweep.generate.facts import Definition, DocumentFacts, Duty

_BAD_SUBJECT = re.compile(r"^(?:nothing|none|including|each|any|either|neither|such|this|that|it)\b|\bas used\b")
_ENUMERATOR = re.compile(r"^\(?(?:[0-9]{1,3}(?:\.[0-9]{1,3})*|[ivxlcIVXLC]{1,6}|[A-Za-z])[.)]\s+")
_SKIP_VERBS = {"mean", "means", "include", "be deemed", "be entitled", "be construed", "apply", "be"}


def _usable(d: Duty) -> bool:
    return (
        len(d.subject.split()) <= 4
        and not _BAD_SUBJECT.search(d.subject)
        and d.verb not in _SKIP_VERBS
        and bool(d.verb)
    )


def _the(subject: str) -> str:
    return subject if subject.split()[0] in ("every", "a", "an") else f"the {subject}"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _lcfirst(text: str) -> str:
    return text[:1].lower() + text[1:] if text[1:2].islower() or len(text) < 2 else text


def _where(f: DocumentFacts) -> str:
    return f'in "{f.title}"'


def definition_question(f: DocumentFacts, d: Definition, rng: random.Random, anchored: bool = True) -> str:
    if not anchored:
        return f'What does "{d.term}" mean?'
    return rng.choice([f'What does "{d.term}" mean {_where(f)}?', f'How does "{f.title}" define "{d.term}"?'])


def duty_question(f: DocumentFacts, d: Duty, rng: random.Random, anchored: bool = True) -> str:
    where = f" {_where(f)}" if anchored else ""
    s, obj = _the(d.subject), f" {d.object}" if d.object and not d.object[0].isdigit() else ""
    if d.passive:
        about = f'What does "{f.title}" say about' if anchored else "What is the rule on"
        return f"{about} how {d.subject} {d.modal} {d.verb}?"
    if d.kind in ("permission", "prohibition") and obj:
        return rng.choice([f"May {s} {d.verb}{obj}{where}?", f"Is {s} allowed to {d.verb}{obj}{where}?"])
    if d.kind == "prohibition":
        return f"What must {s} not {d.verb}{where}?"
    if len(d.object.split()) >= 2 and rng.random() < 0.5:
        return f"Who {d.modal} {d.verb}{obj}{where}?"
    return (
        rng.choice([f"What {d.modal.split()[0]} {s} {d.verb}{where}?", f"What does {s} have to {d.verb}{where}?"])
        if d.kind == "obligation"
        else f"What may {s} {d.verb}{where}?"
    )


def simple_candidate(f: DocumentFacts, fact: Definition | Duty, rng: random.Random, anchored: bool = True) -> Candidate:
    if isinstance(fact, Definition):
        q, method = definition_question(f, fact, rng, anchored), "definition"
    else:
        q, method = duty_question(f, fact, rng, anchored), "duty"
    s = fact.sentence
    return Candidate("simple", method, q, _flat(s.text), [Quote(s.text, s.doc_id)], doc_id=f.doc_id)


def _facts(f: DocumentFacts, methods: tuple[str, ...]) -> list[Definition | Duty]:
    out: list[Definition | Duty] = []
    if "definition" in methods:
        out += f.definitions
    if "duty" in methods:
        out += [d for d in f.duties if _usable(d)]
    return out


class OfflineRecipes:
    """Candidate questions per type, each an endless-until-exhausted seeded stream over the corpus."""

    def __init__(self, docs: list[DocumentFacts], methods: tuple[str, ...], seed: int) -> None:
        self.docs = [d for d in docs if d.sentences]
        self.methods = methods
        self.seed = seed

    def _rng(self, qtype: str) -> random.Random:
        return random.Random(f"{self.seed}:{qtype}")

    def stream(self, qtype: str) -> Iterator[Candidate]:
        return getattr(self, f"_{qtype}")(self._rng(qtype))

    def _pairs(self, rng: random.Random) -> list[tuple[DocumentFacts, Definition | Duty]]:
        pairs = [(f, x) for f in self.docs for x in _facts(f, self.methods)]
        rng.shuffle(pairs)
        return pairs

    def _simple(self, rng: random.Random) -> Iterator[Candidate]:
        """Definitions, duties and Inverse Cloze Task sentences, taken in turn (each method its share)."""
        streams = []
        pairs = self._pairs(rng)
        for method in ("definition", "duty"):
            if method in self.methods:
                streams.append(
                    iter(
                        [
                            simple_candidate(f, x, rng)
                            for f, x in pairs
                            if (method == "definition") == isinstance(x, Definition)
                        ]
                    )
                )
        if "ict" in self.methods:
            streams.append(self._ict(rng))
        while streams:
            for s in list(streams):
                c = next(s, None)
                if c is None:
                    streams.remove(s)
                else:
                    yield c

    def _ict(self, rng: random.Random) -> Iterator[Candidate]:
        from ragsweep.generate.facts import ict_pairs

        triples = [t for f in self.docs for t in ict_pairs(f)]
        rng.shuffle(triples)
        for prev, s, nxt in triples:
            yield Candidate(
                "simple",
                "ict",
                _ENUMERATOR.sub("", _flat(s.text)),
                f"{_flat(prev.text)} {_flat(nxt.text)}",
                [Quote(prev.text, prev.doc_id), Quote(nxt.text, nxt.doc_id)],
                doc_id=s.doc_id,
            )

    def _situational(self, rng: random.Random) -> Iterator[Candidate]:
        for f, d in self._pairs(rng):
            if not isinstance(d, Duty) or d.passive:
                continue
            s = d.sentence
            if d.kind == "obligation":
                q = f"I am {_the(d.subject)} {_where(f)}. What do I have to {d.verb}?"
            else:
                q = f"As {_the(d.subject)} {_where(f)}, am I allowed to {d.verb} {d.object}?"
            yield Candidate("situational", "duty", q, _flat(s.text), [Quote(s.text, s.doc_id)], doc_id=f.doc_id)

    def _conversational(self, rng: random.Random) -> Iterator[Candidate]:
        """A follow-up: the conversation asks about one fact of a document (naming it) and gets its sentence back;
        the follow-up asks about another fact of the same document without naming it (its evidence)."""
        by_doc: dict[str, list[tuple[DocumentFacts, Definition | Duty]]] = {}
        for f, x in self._pairs(rng):
            by_doc.setdefault(f.doc_id, []).append((f, x))
        for pairs in by_doc.values():
            for (f, first), (_, then) in zip(pairs[0::2], pairs[1::2]):
                earlier = simple_candidate(f, first, rng)
                c = simple_candidate(f, then, rng, anchored=False)
                c.qtype = "conversational"
                c.history = [
                    {"role": "user", "content": earlier.question},
                    {"role": "assistant", "content": earlier.reference_answer or ""},
                ]
                yield c

    def _vague(self, rng: random.Random) -> Iterator[Candidate]:
        for f, x in self._pairs(rng):
            c = simple_candidate(f, x, rng, anchored=False)
            c.qtype = "vague"
            yield c

    def _distracting(self, rng: random.Random) -> Iterator[Candidate]:
        others = [s for f in self.docs for s in f.sentences if 8 <= s.words <= 30]
        if len({s.doc_id for s in others}) < 2:
            return
        for f, x in self._pairs(rng):
            noise = next((o for o in rng.sample(others, min(len(others), 20)) if o.doc_id != f.doc_id), None)
            if noise is None:
                continue
            c = simple_candidate(f, x, rng)
            lead = _ENUMERATOR.sub("", _flat(noise.text)).rstrip(".")
            c.qtype, c.question = "distracting", f"{lead}. Setting that aside, {_lcfirst(c.question)}"
            yield c

    def _double(self, rng: random.Random) -> Iterator[Candidate]:
        docs = list(self.docs)
        rng.shuffle(docs)
        for f in docs:
            facts = _facts(f, self.methods)
            rng.shuffle(facts)
            for a, b in zip(facts[::2], facts[1::2]):
                if a.sentence == b.sentence:
                    continue
                ca, cb = simple_candidate(f, a, rng), simple_candidate(f, b, rng)
                yield Candidate(
                    "double",
                    f"{ca.method}+{cb.method}",
                    f"{ca.question} And {_lcfirst(cb.question)}",
                    f"{ca.reference_answer} {cb.reference_answer}",
                    ca.quotes + cb.quotes,
                    doc_id=f.doc_id,
                )

    def _comparative(self, rng: random.Random) -> Iterator[Candidate]:
        """One defined term, or one (subject, verb) duty, in two documents."""
        seen: dict[tuple, list[tuple[DocumentFacts, Definition | Duty]]] = {}
        for f in self.docs:
            for x in _facts(f, self.methods):
                key = ("def", x.term.lower()) if isinstance(x, Definition) else ("duty", x.subject, x.verb)
                seen.setdefault(key, []).append((f, x))
        keys = sorted(seen, key=str)
        rng.shuffle(keys)
        for key in keys:
            by_doc = {f.doc_id: (f, x) for f, x in reversed(seen[key])}  # the first fact of each document
            if len(by_doc) < 2:
                continue
            (fa, a), (fb, b) = rng.sample(sorted(by_doc.values(), key=lambda p: p[0].doc_id), 2)
            if isinstance(a, Definition):  # key[0] == "def"
                q = f'How do "{fa.title}" and "{fb.title}" differ in what they mean by "{a.term}"?'
            else:
                q = f'How do "{fa.title}" and "{fb.title}" differ on what {_the(a.subject)} {a.modal} {a.verb}?'
            ref = f"{fa.title}: {_flat(a.sentence.text)} {fb.title}: {_flat(b.sentence.text)}"
            yield Candidate(
                "comparative",
                "definition" if key[0] == "def" else "duty",
                q,
                ref,
                [Quote(a.sentence.text, fa.doc_id), Quote(b.sentence.text, fb.doc_id)],
                doc_id=fa.doc_id,
            )

    def _out_of_scope(self, rng: random.Random) -> Iterator[Candidate]:
        """A term defined in one document, asked of another that never mentions it; with one document, a
        common legal term the corpus never mentions. The checks verify the absence."""
        terms = sorted(
            {d.term for f in self.docs for d in f.definitions if len(d.term) >= 4}, key=lambda t: (t.lower(), t)
        )  # "Control" and "control": a total order, not set order
        pool = [(t, f) for t in terms for f in self.docs]
        rng.shuffle(pool)
        for term, f in pool:
            yield Candidate(
                "out_of_scope",
                "absent_term",
                f'What does "{term}" mean {_where(f)}?',
                None,
                out_of_scope_term=term,
                doc_id=f.doc_id,
            )
        fallback = list(COMMON_LEGAL_TERMS)
        rng.shuffle(fallback)
        for term in fallback:
            f = rng.choice(self.docs)
            yield Candidate(
                "out_of_scope",
                "absent_term",
                f'What does "{f.title}" say about {term}?',
                None,
                out_of_scope_term=term,
                doc_id=None,
            )


COMMON_LEGAL_TERMS = (
    "force majeure",
    "liquidated damages",
    "escrow",
    "indemnification",
    "arbitration",
    "governing law",
    "non-compete",
    "severability",
    "assignment of rights",
    "quorum",
    "statute of limitations",
    "power of attorney",
    "right of first refusal",
    "sublicensing",
    "export control",
    "anti-bribery",
    "data portability",
    "cookies",
    "audit rights",
    "insurance coverage",
    "termination for convenience",
    "most favoured nation",
    "probation period",
)
