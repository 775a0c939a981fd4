"""LegalBench-RAG: ``corpus/<subset>/*.txt`` and ``benchmarks/<subset>.json`` with gold character spans.

Doc ids are ``<subset>/<file name>``, the form the benchmark's ``file_path`` uses. A few of those
paths write ``:`` or ``||`` where the file on disk has ``_`` or ``__`` (names were sanitised when
the files were saved), so an unknown path is retried with those replacements.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsweep.datasets.files import read_json_strict, read_text_strict
from ragsweep.datasets.questions_table import unique_spans
from ragsweep.datasets.text_evidence import snippet
from ragsweep.datasets.types import Document, EvidenceSpan, Question
from ragsweep.errors import RagsweepError

if TYPE_CHECKING:
    from ragsweep.config import LegalBenchCorpus, LegalBenchQuestions


def _subsets(root: Path) -> list[str]:
    found = {p.name for p in (root / "corpus").glob("*") if p.is_dir()}
    found |= {p.stem for p in (root / "benchmarks").glob("*.json")}
    return sorted(found)


def _unknown_subset(root: Path, subset: str, missing: Path) -> RagsweepError:
    available = _subsets(root)
    if not available:
        return RagsweepError(
            f"{root}: not a LegalBench-RAG folder (no corpus/<subset>/ or benchmarks/<subset>.json); "
            f"point the path at the folder that holds corpus/ and benchmarks/"
        )
    return RagsweepError(f"{missing}: unknown LegalBench-RAG subset {subset!r}; available: {', '.join(available)}")


def load_legalbench_corpus(spec: LegalBenchCorpus) -> list[Document]:
    """Every ``.txt`` file of the subset, verbatim (the gold spans index into the raw text)."""
    root = Path(spec.path)
    folder = root / "corpus" / spec.subset
    if not folder.is_dir():
        raise _unknown_subset(root, spec.subset, folder)
    return [
        Document(doc_id=f"{spec.subset}/{p.name}", text=read_text_strict(p), metadata={"file_path": str(p)})
        for p in sorted(folder.glob("*.txt"))
    ]


def resolve_file_path(file_path: str, doc_ids: set[str] | dict[str, Any]) -> str | None:
    """The corpus doc id for a benchmark ``file_path``, undoing the ``:``→``_`` / ``||``→``__`` renaming."""
    for candidate in (file_path, file_path.replace("||", "__").replace(":", "_")):
        if candidate in doc_ids:
            return candidate
    return None


def _tests(path: Path, root: Path, subset: str) -> list[Any]:
    if not path.is_file():
        raise _unknown_subset(root, subset, path)
    data = read_json_strict(path)
    if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
        raise RagsweepError(f'{path}: expected {{"tests": [...]}} (LegalBench-RAG benchmark format)')
    return data["tests"]


def _snippet_span(path: Path, where: str, snip: Any, texts: dict[str, str]) -> tuple[EvidenceSpan, str]:
    if (
        not isinstance(snip, dict)
        or not isinstance(snip.get("file_path"), str)
        or not (isinstance(snip.get("span"), list) and len(snip["span"]) == 2)
    ):
        raise RagsweepError(f"{path}: {where} needs file_path and span [start, end]")
    doc_id = resolve_file_path(snip["file_path"], texts)
    if doc_id is None:
        raise RagsweepError(
            f"{path}: {where}.file_path {snip['file_path']!r} is not in the corpus folder; "
            f"check that corpus/ and benchmarks/ come from the same release"
        )
    start, end = snip["span"]
    text = texts[doc_id]
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text)):
        raise RagsweepError(f"{path}: {where}.span [{start}, {end}) does not fit {doc_id!r} ({len(text)} characters)")
    gold = text[start:end]
    answer = snip.get("answer")
    if isinstance(answer, str) and answer != gold:
        raise RagsweepError(
            f"{path}: {where}.answer {snippet(answer)} differs from the text at its span "
            f"{snippet(gold)}; check that corpus/ and benchmarks/ come from the same release"
        )
    return EvidenceSpan(doc_id, start, end), gold


def load_legalbench_questions(spec: LegalBenchQuestions, documents: list[Document]) -> list[Question]:
    """One question per test (ids ``<subset>-0001``…); reference answer = the gold span texts, one per line."""
    root = Path(spec.path)
    path = root / "benchmarks" / f"{spec.subset}.json"
    tests = _tests(path, root, spec.subset)
    texts = {d.doc_id: d.text for d in documents}
    width = max(4, len(str(len(tests))))
    questions: list[Question] = []
    for i, test in enumerate(tests):
        if not isinstance(test, dict) or not isinstance(test.get("query"), str) or not test["query"].strip():
            raise RagsweepError(f"{path}: tests[{i}] needs a non-empty 'query'")
        snippets = test.get("snippets") or []
        found = [_snippet_span(path, f"tests[{i}].snippets[{j}]", s, texts) for j, s in enumerate(snippets)]
        answer = "\n".join(gold.strip() for _, gold in found if gold.strip()) or None
        questions.append(
            Question(
                qid=f"{spec.subset}-{i + 1:0{width}d}",
                question=test["query"].strip(),
                reference_answer=answer,
                evidence=unique_spans([span for span, _ in found]),
                qtype=None,
            )
        )
    return questions
