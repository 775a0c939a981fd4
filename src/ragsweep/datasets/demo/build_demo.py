"""Build the shipped ragsweep demo dataset (corpus.jsonl and questions.jsonl).

All twenty documents below are original, fictional legal/policy texts written for the
ragsweep project (the City of Tessaly, Dunmore Regional Council, Kestrel Valley University,
Orinth Systems, Quillfeather Software, Skyvault Hosting, the Harlan Braddock Foundation, the
Greenway Trust and the Meridian Scholars Programme are all invented). They are dedicated to the
public domain (CC0) for use with the project.

Questions carry their gold evidence as quoted text plus a doc_id; this script locates every quote
with ``str.find`` and refuses to write anything if a quote is missing from its document or occurs
in it more than once. Output is deterministic, so re-running regenerates identical files:

    .venv/bin/python src/ragsweep/datasets/demo/build_demo.py   # from the project root
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------------------------
# Documents: (id, title, body). The stored text is the title line, a blank line, then the body.
# Every section heading starts a line with "§ N"; nothing else does.
# ---------------------------------------------------------------------------------------------

# The source text lives beside this script, in demo_documents_{1,2,3}.py (documents: id, title, body; the
# stored text is the title line, a blank line, then the body; every section heading starts a line with
# "§ N" and nothing else does) and demo_questions_{1,2}.py (type, question, reference answer, quotes;
# ids q001.. are assigned in list order).
sys.path.insert(0, str(HERE))
from demo_documents_1 import DOCUMENTS as _D1  # noqa: E402
from demo_documents_2 import DOCUMENTS as _D2  # noqa: E402
from demo_documents_3 import DOCUMENTS as _D3  # noqa: E402
from demo_questions_1 import QUESTIONS as _Q1  # noqa: E402
from demo_questions_2 import QUESTIONS as _Q2  # noqa: E402

DOCUMENTS = _D1 + _D2 + _D3
QUESTIONS = _Q1 + _Q2


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


def build_questions(docs: list[dict]) -> list[dict]:
    texts = {d["id"]: d["text"] for d in docs}
    out = []
    for n, (qtype, question, answer, quotes) in enumerate(QUESTIONS, start=1):
        qid = f"q{n:03d}"
        evidence = []
        for doc_id, quote in quotes:
            if doc_id not in texts:
                raise SystemExit(f"{qid}: unknown document {doc_id!r}")
            text = texts[doc_id]
            start = text.find(quote)
            if start < 0:
                raise SystemExit(f"{qid}: quote not found in {doc_id!r}: {quote!r}")
            if text.find(quote, start + 1) >= 0:
                raise SystemExit(f"{qid}: quote appears more than once in {doc_id!r}: {quote!r}")
            evidence.append({"doc_id": doc_id, "start": start, "end": start + len(quote), "text": quote})
        out.append(
            {
                "id": qid,
                "question": question,
                "reference_answer": answer,
                "type": qtype,
                "evidence": evidence,
            }
        )
    return out


def check_documents(docs: list[dict]) -> None:
    for d in docs:
        text = d["text"]
        bad = sorted({c for c in text if ord(c) > 127 and c != "§"})
        if bad:
            raise SystemExit(f"{d['id']}: non-ASCII characters other than the section sign: {bad!r}")
        sections = re.split(r"\n(?=§)", text)[1:]
        if len(sections) < 3:
            raise SystemExit(f"{d['id']}: only {len(sections)} sections")
        for line in text.splitlines():
            if line.startswith("§") and not re.match(r"§ \d+ \S", line):
                raise SystemExit(f"{d['id']}: malformed section heading {line!r}")
        words = len(text.split())
        if not 250 <= words <= 500:
            raise SystemExit(f"{d['id']}: {words} words, outside 250-500")


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> int:
    docs = build_documents()
    check_documents(docs)
    questions = build_questions(docs)
    write_jsonl(HERE / "corpus.jsonl", docs)
    write_jsonl(HERE / "questions.jsonl", questions)
    counts: dict[str, int] = {}
    for q in questions:
        counts[q["type"]] = counts.get(q["type"], 0) + 1
    print(f"wrote {len(docs)} documents and {len(questions)} questions {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
