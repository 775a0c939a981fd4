"""Evidence location on real legal text quoted through "another PDF extractor".

LegalBench-RAG gives gold evidence as exact spans. Users' question sets usually quote the evidence
as *text* taken from the documents by another tool, which re-flows it: line breaks inside
sentences, words hyphenated across lines, tokens glued together (``4/3/2022Page``), curly quotes,
ligatures, and now and then an OCR-like slip (one letter read as another, 10 % of texts of 40+
letters). This benchmark re-renders every gold span of a subset that way (seeded, one or more of
those edits per text), writes a questions file with text-only evidence, and measures how many the
tiers locate (exact / normalised / fuzzy at 0.9), against the old whitespace-only matcher
(``locate.find_span``), and how many land on the gold span itself.

    .venv/bin/python bench/evidence_bench.py [--subset privacy_qa] [--root ../shared/datasets/legalbench-rag]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

from ragsweep.config.dataset import DatasetSpec
from ragsweep.datasets.load import load_dataset
from ragsweep.datasets.locate import find_span
from ragsweep.datasets.text_evidence import TextLocator

CURLY = {'"': ("\u201c", "\u201d"), "'": ("\u2019", "\u2019")}


def reextract(text: str, rng: random.Random) -> str:
    """The text as another PDF extractor might give it (at least one edit, each with probability .5)."""
    out = text
    edits = [e for e in ("wrap", "hyphen", "glue", "quotes", "ligature") if rng.random() < 0.5] or ["wrap"]
    if rng.random() < 0.1:  # an OCR-like slip: one letter read as another (only fuzzy matching finds these)
        letters = [i for i, c in enumerate(out) if c.isalpha()]
        if len(letters) > 40:
            i = rng.choice(letters)
            out = out[:i] + ("l" if out[i] != "l" else "i") + out[i + 1 :]
    words = out.split(" ")
    if "wrap" in edits and len(words) > 6:  # line breaks inside the sentence
        for i in rng.sample(range(1, len(words)), k=min(3, len(words) - 1)):
            words[i] = "\n" + words[i]
    if "hyphen" in edits:
        long = [i for i, w in enumerate(words) if len(w.strip()) >= 8 and w.strip().isalpha()]
        if long:
            i = rng.choice(long)
            w = words[i]
            cut = rng.randint(3, len(w.strip()) - 3)
            words[i] = w[:cut] + "-\n" + w[cut:]
    if "glue" in edits and len(words) > 3:  # a space lost between two tokens
        i = rng.randrange(1, len(words))
        words[i - 1], words[i] = words[i - 1] + words[i].lstrip("\n"), ""
    out = " ".join(w for w in words if w != "").replace(" \n", "\n")
    if "quotes" in edits:
        n = [0]

        def curl(m: re.Match) -> str:
            q = m.group(0)
            n[0] += 1
            return CURLY[q][0] if q == '"' and n[0] % 2 else CURLY[q][1]

        out = re.sub(r"[\"']", curl, out)
    if "ligature" in edits:
        out = out.replace("fi", "\ufb01", 1).replace("fl", "\ufb02", 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[2] / "shared/datasets/legalbench-rag"))
    ap.add_argument("--subset", action="append")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    for subset in args.subset or ["privacy_qa", "contractnli"]:
        spec = DatasetSpec(
            corpus={"format": "legalbench", "path": args.root, "subset": subset},
            questions={"format": "legalbench", "path": args.root, "subset": subset},
            duplicate_evidence="first",
        )
        ds = load_dataset(spec)
        docs = {d.doc_id: d.text for d in ds.documents}
        rng = random.Random(args.seed)
        rows, gold = [], []
        for q in ds.questions:
            ev = []
            for e in q.evidence:
                quoted = reextract(docs[e.doc_id][e.start : e.end].strip(), rng)
                ev.append({"text": quoted})
                gold.append((e, quoted))
            rows.append({"id": q.qid, "question": q.question, "evidence": ev})
        changed = sum(docs[e.doc_id][e.start : e.end].strip() != t for e, t in gold)
        old = sum(any(find_span(text, t) is not None for text in docs.values()) for _, t in gold)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "q.jsonl"
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
            for fuzzy in (None, 0.9):
                loc = TextLocator(docs, fuzzy=fuzzy)
                t0 = time.perf_counter()
                spans = [loc.locate("q", "evidence", t) for _, t in gold]
                secs = time.perf_counter() - t0
                on_gold = sum(
                    s is not None and s.doc_id == e.doc_id and s.start < e.end and e.start < s.end
                    for (e, _), s in zip(gold, spans)
                )
                s = loc.summary()
                print(
                    f"{subset}: {len(gold)} evidence texts ({changed} re-extracted differently); whitespace-only "
                    f"matcher {old}/{len(gold)}; tiers (fuzzy {fuzzy}): exact {s['exact']}, normalised "
                    f"{s['normalised']}, fuzzy {s['fuzzy']}, unlocated {s['unlocated']}; on the gold span "
                    f"{on_gold}/{len(gold)}; {secs:.2f} s"
                )
            q_spec = DatasetSpec(corpus=spec.corpus, questions={"format": "jsonl", "path": path}, fuzzy_evidence=0.9)
            t0 = time.perf_counter()
            loaded = load_dataset(q_spec)
            print(
                f"{subset}: load_dataset with text evidence {time.perf_counter() - t0:.2f} s; "
                f"{loaded.evidence['location']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
