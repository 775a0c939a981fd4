"""A conversational question set built from LegalBench-RAG, for ``conversation_bench.py``: follow-ups that no longer
name their document, each with the conversation before it that does.

Every LegalBench-RAG query names its document in a prefix before its one ``;`` ("Consider the Non-Disclosure
Agreement between CopAcc and ToP Mentors; Does the document ...?", "Consider "Fiverr"'s privacy policy; who can
see ...?"; checked on both subsets: every query has exactly one ``;`` and every query's spans lie in one document).
Per document (documents in the order of their doc ids), its questions in benchmark order are shuffled (one
``random.Random(seed)`` drawn in that order), and every two consecutive questions (q1, q2), (q2, q3), ... make one
follow-up:

- history: q1 asked in full (user), then q1's gold answer (its span texts joined by " ... ", whitespace folded)
  cut at a word boundary to at most ~200 characters (assistant);
- the follow-up: q2 with its document-naming prefix removed (the text after the ``;``), first letter upper-cased;
- its gold evidence: q2's spans as ``{doc_id, start, end}``, doc ids as ``ragsweep.datasets.legalbench`` names them
  (``<subset>/<file name>``, with the benchmark's ``:`` / ``||`` renaming undone), so they match
  ``corpus: {format: legalbench, path: ..., subset: ...}``; type ``conversational``; id: the legalbench loader's
  id of q2 (``<subset>-0042``).

A document with n >= 2 questions gives n - 1 follow-ups. ``limit``: a ``random.Random(seed)`` sample of that many
follow-ups (written in document order). The statistics say how ambiguous the cut follow-ups are: ``shared_text``
counts follow-ups whose words (case and spaces folded) are asked of another document too (contractnli's follow-ups
are its 17 ContractNLI hypotheses, asked of every contract: all of them); ``names_document`` those that still name
their document after the cut (the app's name in a privacy_qa question: "does viber log messages?"; a party's name
in a contractnli one). The data stays in ``--data``; only the built JSONL goes to the work folder.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from pathlib import Path

from ragsweep.datasets.legalbench import resolve_file_path

ANSWER_CHARS = 200
# Words of an app's or party's name that are ordinary English too: their presence names nothing ("do you keep my
# data?" is about keeping, not the app Keep; "Other Party", "Buyer" are the template's stand-ins, not names).
_COMMON = {"keep", "other party", "unknown party", "another company", "buyer", "creative", "inventor", "employer"}
_PRIVACY = re.compile(r'^Consider "(?P<name>.+)"\'s privacy policy$')
_OWNER = re.compile(r"^Consider (?:the )?(?P<name>.+?)'s? ")
_PARTIES = re.compile(r" between (?P<a>.+?)(?: and (?P<b>.+))?$")


def split_query(query: str) -> tuple[str, str]:
    """(document-naming prefix, the question after it)."""
    prefix, sep, rest = query.partition(";")
    if not sep or not rest.strip():
        raise ValueError(f"no ';' after a document-naming prefix: {query!r}")
    rest = rest.strip()
    return prefix.strip(), rest[:1].upper() + rest[1:]


def names_in(prefix: str) -> list[str]:
    """The names a prefix gives its document by (lower-cased): an app, an owner, the parties."""
    m = _PRIVACY.match(prefix)
    if m:
        name = m["name"].lower()
        return [n for n in {name, re.split(r"\W+", name)[0]} if n and n not in _COMMON]
    out = []
    if m := _OWNER.match(prefix):
        out.append(m["name"])
    if m := _PARTIES.search(prefix):
        out += [p for p in (m["a"], m["b"]) if p]
    return [n.lower().strip(" ,") for n in out if len(n.strip(" ,")) >= 3 and n.lower().strip(" ,") not in _COMMON]


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text.lower()) is not None


def _short(text: str, limit: int = ANSWER_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0].rstrip(" ,;:.")
    return cut + " ..."


def build(data: str | Path, subset: str, out: Path, limit: int | None = None, seed: int = 0) -> dict:
    """Write the follow-ups of ``subset`` to ``out`` (JSONL questions table), and beside it (``standalone_path``)
    the same questions as the benchmark asks them (q2 in full, prefix kept, no history: the reference a history
    mode would reach by restoring the document's name); return the construction statistics."""
    root = Path(data)
    tests = json.loads((root / "benchmarks" / f"{subset}.json").read_text("utf-8"))["tests"]
    doc_ids = {f"{subset}/{p.name}" for p in (root / "corpus" / subset).glob("*.txt")}
    width = max(4, len(str(len(tests))))
    by_doc: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(tests):
        docs = {resolve_file_path(s["file_path"], doc_ids) for s in t["snippets"]}
        if len(docs) != 1 or None in docs:
            raise ValueError(f"{subset} tests[{i}]: spans in {sorted(map(str, docs))}, expected one corpus document")
        by_doc[docs.pop()].append(i)
    asked_of: dict[str, set[str]] = defaultdict(set)  # a follow-up's folded words -> the documents it is asked of
    for doc, idx in by_doc.items():
        for i in idx:
            asked_of[" ".join(split_query(tests[i]["query"])[1].lower().split())].add(doc)

    rng = random.Random(seed)
    pairs = []
    for doc in sorted(by_doc):
        order = list(by_doc[doc])
        rng.shuffle(order)
        pairs += [(doc, a, b) for a, b in zip(order, order[1:])]
    possible = len(pairs)
    if limit is not None and limit < possible:
        keep = set(random.Random(seed).sample(range(possible), limit))
        pairs = [p for n, p in enumerate(pairs) if n in keep]

    rows, shared, named = [], 0, 0
    for doc, a, b in pairs:
        first, second = tests[a], tests[b]
        prefix, follow_up = split_query(second["query"])
        answer = " ... ".join(" ".join(s["answer"].split()) for s in first["snippets"] if s["answer"].strip())
        spans = [{"doc_id": doc, "start": s["span"][0], "end": s["span"][1]} for s in second["snippets"]]
        shared += len(asked_of[" ".join(follow_up.lower().split())]) > 1
        named += any(_mentions(follow_up, n) for n in names_in(prefix))
        rows.append(
            {
                "id": f"{subset}-{b + 1:0{width}d}",
                "question": follow_up,
                "reference_answer": "\n".join(s["answer"].strip() for s in second["snippets"] if s["answer"].strip()),
                "type": "conversational",
                "evidence": [dict(t) for t in {tuple(s.items()) for s in spans}],
                "history": [
                    {"role": "user", "content": first["query"].strip()},
                    {"role": "assistant", "content": _short(answer)},
                ],
            }
        )
    for r in rows:
        r["evidence"].sort(key=lambda s: (s["start"], s["end"]))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    full = {f"{subset}-{b + 1:0{width}d}": tests[b]["query"].strip() for _, _, b in pairs}
    standalone = out.with_name(out.stem + "-standalone.jsonl")
    standalone.write_text(
        "".join(
            json.dumps(
                {**{k: v for k, v in r.items() if k != "history"}, "question": full[r["id"]]}, ensure_ascii=False
            )
            + "\n"
            for r in rows
        ),
        "utf-8",
    )
    n = len(rows)
    return {
        "subset": subset,
        "questions": len(tests),
        "documents": len(by_doc),
        "documents_with_2_plus": sum(len(v) >= 2 for v in by_doc.values()),
        "follow_ups_possible": possible,
        "follow_ups": n,
        "documents_in_set": len({d for d, _, _ in pairs}),
        "limit": limit,
        "seed": seed,
        "prefix_removed": n,
        "shared_text": shared,
        "names_document": named,
        "distinct_follow_up_texts": len({r["question"].lower() for r in rows}),
        "path": str(out),
        "standalone_path": str(standalone),
    }
