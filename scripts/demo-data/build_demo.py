"""Build the shipped ragsweep demo dataset (corpus.jsonl, questions.jsonl and conversations.jsonl).

All documents are original, fictional legal/policy texts written for the ragsweep project (the
City of Tessaly, Dunmore Regional Council, Ashby Vale District Council, Kestrel Valley University,
Orinth Systems, Quillfeather Software, Skyvault Hosting, the Harlan Braddock Foundation, the
Greenway Trust and the Meridian Scholars Programme are all invented). They are dedicated to the
public domain (CC0) for use with the project.

The source text lives beside this script, as data: ``documents.yaml`` (id, title, body; ``pdf_like``: stored as
PDF text extraction leaves them) and ``questions.yaml`` (type, question, answer, evidence ``[{doc, quote}]``; ids
q001.. in file order; negative questions have neither evidence nor answer), and ``conversations.yaml`` (the follow-up
questions: type ``conversational``, history, question, answer, evidence; ids c001.. in file order). The files it writes
are package data of ``ragsweep.datasets.demo``.
The stored document text is the title line, a blank line, then the body.

Questions carry their gold evidence as quoted text plus a doc_id. This script checks every quote
and refuses to write anything if one is missing or ambiguous:

* a quote from a plain document is found with ``str.find``, must occur exactly once, and is
  written with its ``start``/``end``;
* a quote from a PDF-like document is written *cleanly* (straight quotes, whole words, single
  spaces) and stored as text only (``{"doc_id", "text"}``): the loader locates it with its
  normalising matcher. It is checked here under the same normalisation (the loader's own
  ``ragsweep.datasets.normalise``) and must occur exactly once in its document;
* a quote marked ``"ocr:"`` carries an OCR-like slip on purpose: found by no exact or normalised
  match, it must be located by the loader's fuzzy matcher (``locate.CorpusIndex.closest``) at
  similarity >= ``FUZZY`` (``specs/demo.yaml``: ``fuzzy_evidence: 0.9``) in the document it names;
* a quote given with a tuple of doc ids is text that stands verbatim in each of those documents
  (one quoting the other); it is stored as text only without a doc_id, and the loader counts every
  copy as gold;
* no quote may occur, under normalisation, in any document it does not name: the loader would
  count such a copy as gold, so a copy is declared or it is an error.

The follow-up questions are checked the same way, and also: each has a ``history`` of 1-3 turns that starts with a
user turn, evidence, and a question that names neither its documents' titles nor any of the invented organisations
(``NAMES``), so it can be understood only with its history.

Output is deterministic, so re-running regenerates identical files:

    .venv/bin/python scripts/demo-data/build_demo.py   # from the project root
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "src" / "ragsweep" / "datasets" / "demo"  # where the package reads them


def _load(name: str) -> list[dict]:
    import yaml

    try:
        rows = yaml.safe_load((HERE / name).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise SystemExit(f"{HERE / name}: {' '.join(str(exc).split())}") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise SystemExit(f"{HERE / name}: expected a list of mappings")
    return rows


_DOCS = _load("documents.yaml")
_QS = _load("questions.yaml")
DOCUMENTS = [(d["id"], d["title"], d["body"]) for d in _DOCS]
PDF_LIKE = {d["id"] for d in _DOCS if d.get("pdf_like")}
QUESTIONS = [
    (
        q["type"],
        q["question"],
        q["answer"],
        [(tuple(e["doc"]) if isinstance(e["doc"], list) else e["doc"], e["quote"]) for e in q["evidence"]],
    )
    for q in _QS
]
NEGATIVE = ("negative-irrelevant", "negative-jailbreak", "negative-unsafe")  # ragsweep.datasets.negatives
TYPES = ("simple", "paraphrase", "disambiguation", "complex", "multi_hop", "comparative", "out_of_scope", *NEGATIVE)
NO_EVIDENCE = ("out_of_scope", *NEGATIVE)
# Characters a PDF-like document may hold beyond ASCII and the section sign.
PDF_CHARS = set("\u00a7\u00ad\ufb00\ufb01\ufb02\ufb03\ufb04\u2018\u2019\u201c\u201d\u2013\u2014")
WORDS = (250, 500)

FUZZY = 0.9  # specs/demo.yaml's dataset.fuzzy_evidence; quotes marked "ocr:" must need exactly that tier
OCR = "ocr:"


def _normalise(text: str) -> str:
    """The loader's normalisation (``ragsweep.datasets.normalise``): whitespace, soft hyphens and
    hyphens/dashes dropped, quotes made straight, NFKC per character."""
    from ragsweep.datasets.normalise import normalise

    return normalise(text).text


def _occurrences(haystack: str, needle: str) -> list[int]:
    found, i = [], haystack.find(needle)
    while i >= 0:
        found.append(i)
        i = haystack.find(needle, i + 1)
    return found


def build_documents() -> list[dict]:
    docs = []
    seen: set[str] = set()
    for doc_id, title, body in DOCUMENTS:
        if doc_id in seen:
            raise SystemExit(f"duplicate document id {doc_id!r}")
        seen.add(doc_id)
        text = f"{title}\n\n{body.strip()}\n"
        docs.append({"id": doc_id, "title": title, "text": text})
    return docs


def check_documents(docs: list[dict]) -> None:
    for d in docs:
        text = d["text"]
        allowed = PDF_CHARS if d["id"] in PDF_LIKE else {"\u00a7"}
        bad = sorted({c for c in text if ord(c) > 127 and c not in allowed})
        if bad:
            raise SystemExit(f"{d['id']}: characters outside ASCII and {sorted(allowed)!r}: {bad!r}")
        sections = re.split(r"\n(?=§)", text)[1:]
        if len(sections) < 3:
            raise SystemExit(f"{d['id']}: only {len(sections)} sections")
        for line in text.splitlines():
            if line.startswith("§") and not re.match(r"§ \d+ \S", line):
                raise SystemExit(f"{d['id']}: malformed section heading {line!r}")
        words = len(text.split())
        if not WORDS[0] <= words <= WORDS[1]:
            raise SystemExit(f"{d['id']}: {words} words, outside {WORDS[0]}-{WORDS[1]}")


def _evidence(qid: str, where, quote: str, texts: dict[str, str], norms: dict[str, str], tally: dict) -> dict:
    """One evidence object for ``quote`` (see the module docstring), after checking it."""
    named = (where,) if isinstance(where, str) else tuple(where)
    for doc_id in named:
        if doc_id not in texts:
            raise SystemExit(f"{qid}: unknown document {doc_id!r}")
    if quote.startswith(OCR):
        return _ocr_evidence(qid, named, quote[len(OCR) :], texts, norms, tally)
    needle = _normalise(quote)
    if len(needle) < 8:
        raise SystemExit(f"{qid}: quote too short to locate reliably: {quote!r}")
    for doc_id, norm in norms.items():
        n = len(_occurrences(norm, needle))
        if doc_id in named and n != 1:
            state = "not found" if n == 0 else f"found {n} times"
            raise SystemExit(f"{qid}: quote {state} in {doc_id!r} (normalised): {quote!r}")
        if doc_id not in named and n:
            raise SystemExit(f"{qid}: quote also occurs in {doc_id!r}, which it does not name: {quote!r}")
    if len(named) > 1:  # verbatim in several documents: text only, every copy is gold
        for doc_id in named:
            if texts[doc_id].find(quote) < 0:
                raise SystemExit(f"{qid}: shared quote is not verbatim in {doc_id!r}: {quote!r}")
        tally["shared"] += 1
        return {"text": quote}
    doc_id = named[0]
    text = texts[doc_id]
    if doc_id in PDF_LIKE:  # clean quote, text only: the loader's normalising matcher finds it
        tally["text exact" if quote in text else "text normalised"] += 1
        return {"doc_id": doc_id, "text": quote}
    start = text.find(quote)
    if start < 0 or text.find(quote, start + 1) >= 0:
        raise SystemExit(f"{qid}: quote must occur verbatim exactly once in {doc_id!r}: {quote!r}")
    tally["span"] += 1
    return {"doc_id": doc_id, "start": start, "end": start + len(quote), "text": quote}


def _ocr_evidence(
    qid: str, named: tuple, quote: str, texts: dict[str, str], norms: dict[str, str], tally: dict
) -> dict:
    """A quote with an OCR-like slip: found by no exact or normalised match anywhere, and by the loader's
    fuzzy matcher at >= FUZZY only in the one document it names."""
    from ragsweep.datasets.locate import CorpusIndex

    if len(named) != 1 or named[0] not in PDF_LIKE:
        raise SystemExit(f"{qid}: an {OCR!r} quote names one PDF-like document")
    needle = _normalise(quote)
    if any(needle in norm for norm in norms.values()):
        raise SystemExit(f"{qid}: {OCR!r} quote is found without fuzzy matching: {quote!r}")
    best = CorpusIndex(texts).closest(needle)
    if best is None or best.doc_id != named[0] or best.similarity < FUZZY:
        raise SystemExit(f"{qid}: {OCR!r} quote not within similarity {FUZZY} of {named[0]!r}: {best}")
    tally["text fuzzy"] += 1
    return {"doc_id": named[0], "text": quote}


def build_questions(docs: list[dict]) -> tuple[list[dict], dict]:
    texts = {d["id"]: d["text"] for d in docs}
    norms = {d["id"]: _normalise(d["text"]) for d in docs}
    tally = {"span": 0, "text exact": 0, "text normalised": 0, "text fuzzy": 0, "shared": 0}
    out = []
    seen_questions: set[str] = set()
    for n, (qtype, question, answer, quotes) in enumerate(QUESTIONS, start=1):
        qid = f"q{n:03d}"
        if qtype not in TYPES:
            raise SystemExit(f"{qid}: unknown type {qtype!r}")
        if question in seen_questions:
            raise SystemExit(f"{qid}: duplicate question {question!r}")
        seen_questions.add(question)
        if (qtype in NO_EVIDENCE) != (not quotes):
            raise SystemExit(f"{qid}: out_of_scope and negative questions, and only they, have no evidence")
        if (qtype in NEGATIVE) != (answer is None):
            raise SystemExit(f"{qid}: negative questions, and only they, have no reference answer")
        evidence = [_evidence(qid, where, quote, texts, norms, tally) for where, quote in quotes]
        out.append({"id": qid, "question": question, "reference_answer": answer, "type": qtype, "evidence": evidence})
    return out, tally


CONVERSATIONAL = "conversational"
TURNS = (1, 3)  # how many turns a follow-up's history holds
ROLES = ("user", "assistant")
# the invented organisations (and the city): a follow-up question names none of them
NAMES = (
    "Tessaly",
    "Dunmore",
    "Ashby Vale",
    "Kestrel Valley",
    "Orinth",
    "Quillfeather",
    "Skyvault",
    "Harlan Braddock",
    "Greenway",
    "Meridian",
)


def _history(cid: str, turns) -> list[dict]:
    """``[{user: text} | {assistant: text}, ...]`` as the questions table's ``[{"role", "content"}]``."""
    if not isinstance(turns, list) or not TURNS[0] <= len(turns) <= TURNS[1]:
        raise SystemExit(f"{cid}: history must be a list of {TURNS[0]}-{TURNS[1]} turns")
    out = []
    for i, turn in enumerate(turns):
        if not (isinstance(turn, dict) and len(turn) == 1):
            raise SystemExit(f"{cid}: history[{i}] must be one 'user: ...' or 'assistant: ...'")
        ((role, content),) = turn.items()
        if role not in ROLES or not isinstance(content, str) or not content.strip():
            raise SystemExit(f"{cid}: history[{i}] must be one 'user: ...' or 'assistant: ...' with text")
        out.append({"role": role, "content": content.strip()})
    if out[0]["role"] != "user":
        raise SystemExit(f"{cid}: history must start with the user's turn")
    return out


def build_conversations(docs: list[dict], questions: list[dict]) -> tuple[list[dict], dict]:
    """The follow-up questions of ``conversations.yaml``, checked like the questions (``questions``: theirs, which
    no follow-up may repeat)."""
    texts = {d["id"]: d["text"] for d in docs}
    norms = {d["id"]: _normalise(d["text"]) for d in docs}
    titles = {d["id"]: d["title"] for d in docs}
    tally = {"span": 0, "text exact": 0, "text normalised": 0, "text fuzzy": 0, "shared": 0}
    seen = {q["question"] for q in questions}
    out = []
    for n, c in enumerate(_load("conversations.yaml"), start=1):
        cid = f"c{n:03d}"
        if c.get("type") != CONVERSATIONAL:
            raise SystemExit(f"{cid}: type must be {CONVERSATIONAL!r}")
        question, answer, quotes = c.get("question"), c.get("answer"), c.get("evidence")
        if not (isinstance(question, str) and question.strip() and isinstance(answer, str) and answer.strip()):
            raise SystemExit(f"{cid}: a follow-up needs a question and an answer")
        if question in seen:
            raise SystemExit(f"{cid}: duplicate question {question!r}")
        seen.add(question)
        if not isinstance(quotes, list) or not quotes:
            raise SystemExit(f"{cid}: a follow-up needs evidence")
        history = _history(cid, c.get("history"))
        where = [(tuple(e["doc"]) if isinstance(e["doc"], list) else e["doc"], e["quote"]) for e in quotes]
        evidence = [_evidence(cid, doc, quote, texts, norms, tally) for doc, quote in where]
        named = {d for doc, _ in where for d in ((doc,) if isinstance(doc, str) else doc)}
        for name in (*NAMES, *(titles[d] for d in sorted(named))):
            if name.lower() in question.lower():
                raise SystemExit(f"{cid}: the follow-up names {name!r}; leave that to its history")
        out.append(
            {
                "id": cid,
                "question": question,
                "reference_answer": answer,
                "type": CONVERSATIONAL,
                "evidence": evidence,
                "history": history,
            }
        )
    return out, tally


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> int:
    docs = build_documents()
    check_documents(docs)
    questions, tally = build_questions(docs)
    conversations, conversation_tally = build_conversations(docs, questions)
    write_jsonl(DEMO / "corpus.jsonl", docs)
    write_jsonl(DEMO / "questions.jsonl", questions)
    write_jsonl(DEMO / "conversations.jsonl", conversations)
    counts = {t: sum(q["type"] == t for q in questions) for t in TYPES}
    print(f"wrote {len(docs)} documents ({len(PDF_LIKE)} PDF-like) and {len(questions)} questions {counts}")
    print(f"evidence: {tally}")
    cited = {e["doc_id"] for c in conversations for e in c["evidence"] if "doc_id" in e}
    print(f"wrote {len(conversations)} follow-up questions citing {len(cited)} documents")
    print(f"evidence: {conversation_tally}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
