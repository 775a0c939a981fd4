"""Offline knowledge-graph triplets for legal and policy text: a heuristic, model-free baseline.

PropertyGraphIndex normally asks an LLM for (subject, relation, object) triplets. With no LLM endpoint
configured, this module reads them off the near-formulaic surface patterns of legal drafting, so graph
retrieval can still be built and compared. It is a baseline, not a parser: no tagger, no coreference,
no negation scope beyond the modal; precision is bounded by how conventional the drafting is. Rule-based
extraction of definitions, deontic modalities (shall / must / may) and cross-references is the classic
approach to legal information extraction; HyPA-RAG (Kalra et al., 2024, arXiv:2409.09046) motivates
knowledge-graph retrieval over policy text. Clauses are lines (legal text puts one per line), then
sentences; per clause, in order:

1. Headings ``§ 3 Principles of Processing`` -> (§ 3, HAS_TITLE, principles of processing).
2. Aliases ``Acme Corporation (the "Company")`` -> (company, ALIAS_OF, acme corporation).
3. Definitions ``"X" means|shall mean|refers to|includes Y``, ``the term "X" means``, unquoted ``X means Y``
   at clause start, glossary lines ``X: y...`` -> (x, DEFINED_AS, head phrase of Y, at most 8 words).
4. Duties ``S shall|must|may|will|can [not] VERB O``, ``S is required|entitled|... to ...``, passives
   ``S shall be VERBed ...`` -> (s, SHALL_VERB | MUST_NOT_VERB | SHALL_BE_VERBED, o); o is the noun phrase
   after the verb, else after the next preposition ("report it to the Officer"); "No S shall" negates.
5. Cross-references (§ 5, section 4.2, article 17(3), clause 9, schedule 2, annex I, paragraph (b)) ->
   REFERS_TO from the clause's other entities, canonicalised like headings so the two meet.
6. Fallback: a clause with none of the above links consecutive entity mentions (multi-word capitalised
   phrases, quoted terms, terms defined earlier in the chunk) with CO_OCCURS_WITH.

Names are normalised (lower case, no determiner or possessive, cut at the first clause boundary, at most
8 words) so that a question's entities and every chunk's meet on one node.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ragsweep.graphs.legal_lexicon import (
    ALIAS_RE,
    BARE_NUMBER_RE,
    BOUNDARY,
    CAP_PHRASE_RE,
    CLAUSE_END_RE,
    COMMA_RE,
    CONJ,
    COORD_VERBS_RE,
    DEF_BARE_RE,
    DEF_GLOSSARY_RE,
    DEF_QUOTED_RE,
    DETERMINERS,
    DISCOURSE,
    EDGE,
    ENUM_RE,
    HEADING_RE,
    HEADING_VERB_RE,
    LABEL_CLEAN_RE,
    LABEL_RANK,
    LEAD_RE,
    LEADING,
    MODAL_RE,
    NEW_MAIN_CLAUSE_RE,
    NEW_NP,
    NEXT_PREP_RE,
    NOT_VERB,
    NP_JOINERS,
    OPENERS,
    POSSESSIVE_RE,
    PREPS,
    PRONOUNS,
    QUANT_RE,
    QUOTED_RE,
    QUOTES_RE,
    REPORTING_THAT_RE,
    SECTION_HINT_RE,
    SECTION_KEYS,
    SECTION_RE,
    SENT_SPLIT_RE,
    STOP,
    TAIL_FUNCTION,
    TO_PREP_HEADS,
)

MAX_ENTITY_WORDS = 8
MAX_REF_SOURCES = 4
MAX_COOCCUR_PAIRS = 3


@dataclass(frozen=True)
class Triplet:
    """One graph edge with normalised endpoint names and Neo4j-safe labels."""

    subject: str
    relation: str
    object: str
    subject_label: str
    object_label: str


def _section_name(m: re.Match[str]) -> str:
    """Canonical section name ("§ 5", "section 4.2", "article 17(3)") so references meet their headings."""
    if m.group("para"):
        return "§ " + re.sub(r"\s+", "", m.group("pnum")).lower()
    kw = m.group("kw").lower()
    kw = SECTION_KEYS.get(kw, kw[:-1] if kw.endswith("s") else kw)
    return kw + " " + re.sub(r"\s+", "", m.group("knum")).lower()


def _cut_clause(tokens: list[str], cut_preps: bool = False) -> list[str]:
    """Tokens up to the first clause boundary: the noun phrase a pattern points at ends there."""
    kept: list[str] = []
    for i, tok in enumerate(tokens):
        low, prev = tok.lower().strip(EDGE), (kept[-1].lower().strip(EDGE) if kept else "")
        nxt1 = tokens[i + 1] if i + 1 < len(tokens) else ""
        nxt = tokens[i + 2].lower() if i + 2 < len(tokens) else ""
        if kept and (
            tok.startswith(("(", "["))
            or low in BOUNDARY
            or (cut_preps and low in PREPS)
            or (
                low == "to" and nxt1[:1].islower() and nxt1.lower() not in DETERMINERS and prev not in TO_PREP_HEADS
            )  # "to" + verb: a purpose clause
            or (low in NEW_NP and prev not in NP_JOINERS)  # "... schedule every 3 years"
            or (low in CONJ and nxt in STOP)  # "... and make it available": a second verb phrase
            or (low == "of" and nxt in STOP and nxt1.endswith("ing"))
        ):  # "of receiving the"
            break
        kept.append(tok)
        if tok.endswith((",", ";", ":", ")")) and not re.search(r"\(\w*\)$", tok):
            break
    return kept


@lru_cache(maxsize=1 << 16)
def normalize_entity(name: str) -> str:
    """Canonical entity name, or "" when the phrase is no entity (empty, stopwords, a number, too long).

    Cached: the same mentions recur in every chunk of a document."""
    text = QUOTES_RE.sub(" ", name).strip(" \t.,;:")
    if sec := SECTION_RE.fullmatch(text):
        return _section_name(sec)
    if (ref := SECTION_RE.search(text)) and ref.start() > 0:
        text = text[: ref.start()]  # "furniture listed in Schedule 2": the reference is an entity of its own
    text = text.strip(EDGE)
    tokens = QUANT_RE.sub("", ENUM_RE.sub("", text)).split()
    while tokens and tokens[0].lower().strip(EDGE) in LEADING:
        tokens = tokens[1:]
    words = [
        w + ")" if "(" in w and ")" not in w else w  # keep "db(a)" whole
        for w in (t.lower().strip(EDGE) for t in _cut_clause(tokens))
        if w
    ]
    if words:
        words[-1] = POSSESSIVE_RE.sub("", words[-1])
    while words and words[-1] in TAIL_FUNCTION:
        words.pop()
    result = " ".join(words)
    if (
        not words
        or words[0] in PRONOUNS
        or len(words) > MAX_ENTITY_WORDS
        or len(result) < 2
        or all(w in STOP for w in words)
        or BARE_NUMBER_RE.fullmatch(result)
    ):
        return ""
    return result


def _phrase(text: str, cut_preps: bool = False, clip: bool = False) -> str:
    """The normalised noun phrase opening ``text`` ("up to 5 unused days of ..." -> "5 unused days ...").

    With ``clip`` a long phrase (a definiens) keeps its first 8 words rather than being dropped."""
    tokens = _cut_clause(QUANT_RE.sub("", text.strip()).split(), cut_preps)
    while clip and tokens and tokens[0].lower() in LEADING:
        tokens = tokens[1:]
    return normalize_entity(" ".join(tokens[:MAX_ENTITY_WORDS] if clip else tokens))


def _clauses(text: str) -> list[str]:
    """Lines (legal text puts one clause per line), then sentences."""
    return [c.strip() for line in text.splitlines() for c in SENT_SPLIT_RE.split(line) if c.strip()]


def _heading(line: str) -> Triplet | None:
    """A "§ 3 Principles of Processing" line: its section and title meet every reference to it."""
    m = HEADING_RE.match(line)
    if not m or len(m.group("title").split()) > MAX_ENTITY_WORDS or HEADING_VERB_RE.search(m.group("title")):
        return None
    section = SECTION_RE.match(m.group("ref"))
    title = normalize_entity(m.group("title"))
    return Triplet(_section_name(section), "HAS_TITLE", title, "SECTION", "TOPIC") if section and title else None


def _definitions(clause: str) -> list[Triplet]:
    """Quoted, unquoted and glossary-style definitions, plus parenthetical aliases."""
    out = [
        Triplet(a, "ALIAS_OF", n, "PARTY", "PARTY")
        for m in ALIAS_RE.finditer(clause)
        if (a := normalize_entity(m.group("alias"))) and (n := normalize_entity(m.group("name"))) and a != n
    ]
    m = DEF_QUOTED_RE.search(clause) or DEF_BARE_RE.match(clause)
    if not m and (m := DEF_GLOSSARY_RE.match(clause)) and m.group("defn").split()[0] in STOP:
        m = None  # "Click: you agree ..." is no glossary entry
    term, defn = (normalize_entity(m.group("term")), _phrase(m.group("defn"), clip=True)) if m else ("", "")
    if term and defn and term != defn:
        out.append(Triplet(term, "DEFINED_AS", defn, "TERM", "ENTITY"))
    return out


def _subject(prefix: str, clause_start: bool) -> tuple[str, bool, bool]:
    """(name, negated by "No ...", capitalised) of the noun phrase a modal belongs to.

    At a clause start that is the opening noun phrase ("A vehicle that obstructs a driveway, a hydrant
    ... may"), unless the clause opens with a subordinate or prepositional phrase ("Where ..., the
    Controller may"); there, and after an earlier modal, it is the phrase after the last comma."""
    tokens = prefix.split()
    while tokens and tokens[0].lower().strip(",") in DISCOURSE:  # "Additionally, you may ..."
        tokens, prefix = tokens[1:], prefix.split(None, 1)[1] if len(tokens) > 1 else ""
    if clause_start and tokens and tokens[0].lower() not in OPENERS and not NEW_MAIN_CLAUSE_RE.search(prefix):
        that = ([None] + list(REPORTING_THAT_RE.finditer(prefix)))[-1]  # "warrants that the Software will"
        tokens = prefix[that.end() :].split() if that else tokens
    else:
        tokens = COMMA_RE.split(prefix)[-1].split()
        while tokens and tokens[0].lower() in CONJ | {"then"}:
            tokens = tokens[1:]
        if tokens and tokens[0].lower() in OPENERS:  # "On termination the Licensee shall"
            dets = [i for i, t in enumerate(tokens) if t.lower() in ("the", "a", "an")]
            tokens, clause_start = (tokens[dets[-1] :] if dets else []), False
    if not tokens:
        return "", False, False
    head = next((i for i, t in enumerate(tokens) if t.lower() not in DETERMINERS), 0)
    capitalised = tokens[head][:1].isupper() and (head > 0 or not clause_start)
    return _phrase(" ".join(tokens), cut_preps=True), tokens[0].lower() in ("no", "neither"), capitalised


def _object(rest: str) -> str:
    """The noun phrase after the verb, else after one of the next two prepositions ("report it to X")."""
    rest = COORD_VERBS_RE.sub("", CLAUSE_END_RE.split(rest, maxsplit=1)[0])  # "copy, modify or rent the X"
    for _ in range(3):
        rest = LEAD_RE.sub("", rest.lstrip(" ,"))
        name, nxt = _phrase(rest, cut_preps=True), NEXT_PREP_RE.search(rest)
        if (name.endswith("ing") and " " not in name) or SECTION_RE.fullmatch(name):
            name = ""  # "after obtaining ..." is a clause; "under § 4 to the Board" is a REFERS_TO, not the object
        if name or not nxt:
            return name
        rest = rest[nxt.end() :]
    return ""


def _duties(clause: str, defined: set[str]) -> tuple[list[Triplet], list[str]]:
    """Modal duties, permissions and prohibitions; also returns every subject found (for REFERS_TO)."""
    out: list[Triplet] = []
    subjects: list[str] = []
    prev_end, prev_subject = 0, ""
    for m in MODAL_RE.finditer(clause):
        verb, be, start = m.group("verb"), m.group("be"), m.end()
        if verb in NOT_VERB:  # "must be at least ...", "is entitled to 25 days", "may the ..."
            verb, start = None, (m.end("be") if be else m.end("tofrom") if m.group("state") else -1)
        if start < 0 or not (verb or be or m.group("state")):
            continue
        prefix = clause[prev_end : m.start()]
        name, negated, capitalised = _subject(prefix, prev_end == 0)
        if prev_subject and (prefix.split()[-1:] in (["and"], ["or"]) or not name and not COMMA_RE.search(prefix)):
            name = prev_subject  # "... and shall not be further processed", "A Volunteer who will work ... must"
        prev_end = m.end()
        if not name:
            continue
        prev_subject = name
        subjects.append(name)
        modal = m.group("modal") or m.group("state") + "_" + m.group("tofrom")
        negated = bool(m.group("neg")) or (negated and modal != "cannot")
        parts = (modal, "NOT" if negated else None, be, verb, m.group("part"))
        label = LABEL_CLEAN_RE.sub("_", "_".join(p for p in parts if p).upper()).strip("_")  # a Neo4j type
        obj = _object(clause[start:])
        if obj and obj != name:
            kind = "TERM" if name in defined else ("PARTY" if capitalised and not be else "ENTITY")
            out.append(Triplet(name, label, obj, kind, "TERM" if obj in defined else "ENTITY"))
    return out, subjects


def _fold_plural(name: str, defined: set[str]) -> str:
    """ "Items" meets the defined term "item"."""
    return name[:-1] if name.endswith("s") and name not in defined and name[:-1] in defined else name


def _mentions(clause: str, defined: set[str], sections: list[re.Match[str]]) -> list[tuple[str, str]]:
    """Entity mentions in order: quoted terms, defined terms, capitalised phrases (not a lone first word)."""
    found: list[tuple[int, str, str]] = []
    taken = [m.span() for m in sections]
    for m in QUOTED_RE.finditer(clause):
        taken.append(m.span())
        if name := normalize_entity(m.group(1)):
            found.append((m.start(), name, "TERM"))
    for m in CAP_PHRASE_RE.finditer(clause):
        s, e = m.span()
        words, before = m.group().split(), clause[max(0, s - 7) : s].lower().split()
        if (
            any(a < e and s < b for a, b in taken)
            or words[0].lower() in ("this", "these")
            or before[-1:] in (["this"], ["these"])
            or (len(words) == 1 and s == 0)
        ):
            continue  # "this Ordinance" names the document itself: a hub across documents, not an entity
        if name := _fold_plural(normalize_entity(m.group()), defined):
            found.append((s, name, "TERM" if name in defined else "ENTITY"))
    low = clause.lower()
    for term in defined:
        if term in low and (hit := re.search(rf"\b{re.escape(term)}s?\b", low)):
            found.append((hit.start(), term, "TERM"))
    seen: set[str] = set()
    out = []
    for _, n, lab in sorted(found):  # each name once, at its first mention
        if n not in seen:
            seen.add(n)
            out.append((n, lab))
    return out


def _clause_triplets(clause: str, defined: set[str]) -> list[Triplet]:
    """All patterns on one clause, in priority order; adds new terms and aliases to ``defined``."""
    if heading := _heading(clause):
        return [heading]
    body = ENUM_RE.sub("", clause)
    out = _definitions(body)
    defined.update(t.subject for t in out)
    duties, subjects = ([], []) if out else _duties(body, defined)  # a modal in a definiens is no duty
    out += duties
    sections = list(SECTION_RE.finditer(body)) if SECTION_HINT_RE.search(body) else []
    mentions = _mentions(body, defined, sections)
    if refs := [_section_name(m) for m in sections]:
        labels = {t.subject: t.subject_label for t in out} | dict(mentions)
        sources = list(dict.fromkeys([t.subject for t in out] + subjects + [n for n, _ in mentions]))
        out += [
            Triplet(s, "REFERS_TO", r, labels.get(s, "ENTITY"), "SECTION")
            for r in dict.fromkeys(refs)
            for s in sources[:MAX_REF_SOURCES]
            if s != r
        ]
    if not out:
        pairs = list(zip(mentions, mentions[1:]))[:MAX_COOCCUR_PAIRS]
        out = [Triplet(a, "CO_OCCURS_WITH", b, la, lb) for (a, la), (b, lb) in pairs]
    return out


def extract_triplets(text: str, max_per_chunk: int = 64) -> list[Triplet]:
    """Deterministic; duplicates removed, first occurrence order kept; at most max_per_chunk.

    Each entity keeps one label within a chunk, the most specific seen (SECTION > PARTY > TERM > TOPIC
    > ENTITY), so a graph store never gets one name with conflicting labels from one chunk."""
    defined: set[str] = set()
    found: dict[tuple[str, str, str], Triplet] = {}
    for clause in _clauses(text):
        if len(found) >= max_per_chunk:
            break
        for t in _clause_triplets(clause, defined):
            subj, obj = _fold_plural(t.subject, defined), _fold_plural(t.object, defined)
            if subj and obj and subj != obj and len(found) < max_per_chunk:
                found.setdefault(
                    (subj, t.relation, obj), Triplet(subj, t.relation, obj, t.subject_label, t.object_label)
                )
    best: dict[str, str] = {}
    for t in found.values():
        for name, label in ((t.subject, t.subject_label), (t.object, t.object_label)):
            best[name] = min(best.get(name, label), label, key=LABEL_RANK.__getitem__)
    return [Triplet(t.subject, t.relation, t.object, best[t.subject], best[t.object]) for t in found.values()]
