"""A LegalBench-RAG contractnli corpus made F times larger, with located questions, for the scaling benchmark.

Copy r = 0 is contractnli itself (95 documents, 977 questions). Copy r >= 1 holds every document again with each
word replaced by another word of the corpus with the same length and case (a permutation of each length's words,
seeded by r), and every question (its query and gold answer) rewritten the same way. Lengths are kept, so every
gold span keeps its character offsets; the texts differ, so nothing is shared between copies: F copies are F
times the chunks to embed, the questions to answer and the pairs to score, as F times the documents would be.
The language is scrambled (retrieval quality is not the point), the vocabulary, word lengths and layout are the
corpus's own, so tokens per chunk and per answer stay what they were.

Usage: python bench/scale_corpus.py --data ../shared/datasets/legalbench-rag --factor 8 --out /tmp/scale8
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

SUBSET = "contractnli"
_WORD = re.compile(r"[A-Za-z]+")


def _case(word: str) -> str:
    return "upper" if word.isupper() and len(word) > 1 else "title" if word[0].isupper() else "lower"


def _cased(word: str, like: str) -> str:
    case = _case(like)
    return word.upper() if case == "upper" else word.capitalize() if case == "title" else word


def permutation(vocabulary: set[str], copy: int) -> dict[str, str]:
    """Each lower-cased word -> a word of the same length (seeded by ``copy``; copy 0 is the identity)."""
    if copy == 0:
        return {w: w for w in vocabulary}
    rng = random.Random(f"ragsweep-scale-{copy}")
    by_length: dict[int, list[str]] = {}
    for w in sorted(vocabulary):
        by_length.setdefault(len(w), []).append(w)
    out: dict[str, str] = {}
    for words in by_length.values():
        shuffled = words[:]
        rng.shuffle(shuffled)
        out.update(zip(words, shuffled))
    return out


def rewrite(text: str, mapping: dict[str, str]) -> str:
    return _WORD.sub(lambda m: _cased(mapping[m.group(0).lower()], m.group(0)), text)


def _on_disk(name: str, docs: dict) -> str | None:
    """A benchmark's file name as the file on disk has it (``:`` and ``||`` there are ``_`` and ``__``)."""
    for candidate in (name, name.replace("||", "__").replace(":", "_")):
        if candidate in docs:
            return candidate
    return None


def build(data: Path, factor: int, out: Path) -> dict:
    corpus = data / "corpus" / SUBSET
    docs = {p.name: p.read_text(encoding="utf-8") for p in sorted(corpus.glob("*.txt"))}
    tests = json.loads((data / "benchmarks" / f"{SUBSET}.json").read_text(encoding="utf-8"))["tests"]
    vocabulary = {w.lower() for t in docs.values() for w in _WORD.findall(t)}
    vocabulary |= {w.lower() for t in tests for w in _WORD.findall(t["query"])}
    vocabulary |= {w.lower() for t in tests for s in t["snippets"] for w in _WORD.findall(s["answer"])}
    (out / "corpus" / SUBSET).mkdir(parents=True, exist_ok=True)
    (out / "benchmarks").mkdir(parents=True, exist_ok=True)
    all_tests = []
    for copy in range(factor):
        mapping = permutation(vocabulary, copy)
        suffix = "" if copy == 0 else f"__copy{copy}"
        written = {name: rewrite(text, mapping) for name, text in docs.items()}
        for name, text in written.items():
            (out / "corpus" / SUBSET / f"{Path(name).stem}{suffix}.txt").write_text(text, encoding="utf-8")
        for t in tests:
            snippets = []
            for s in t["snippets"]:
                path = Path(s["file_path"])
                on_disk = _on_disk(path.name, written)
                start, end = s["span"]
                # the gold text is the copy's own slice (lengths kept: the same offsets), exact by construction
                answer = written[on_disk][start:end] if on_disk else rewrite(s["answer"], mapping)
                snippets.append({**s, "file_path": f"{path.parent}/{path.stem}{suffix}{path.suffix}", "answer": answer})
            all_tests.append({**t, "query": rewrite(t["query"], mapping), "snippets": snippets})
    (out / "benchmarks" / f"{SUBSET}.json").write_text(json.dumps({"tests": all_tests}), encoding="utf-8")
    return {
        "factor": factor,
        "documents": factor * len(docs),
        "questions": len(all_tests),
        "characters": factor * sum(len(t) for t in docs.values()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets" / "legalbench-rag"
    )
    ap.add_argument("--factor", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    print(json.dumps(build(args.data, args.factor, args.out)))


if __name__ == "__main__":
    sys.exit(main())
