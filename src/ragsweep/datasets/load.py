"""``load_dataset``: the one entry point from a ``DatasetSpec`` to a validated ``Dataset``.

Corpus and questions are chosen independently (e.g. your own questions over the demo corpus),
so questions are loaded against whatever documents the corpus loader produced. Evidence given as
text that cannot be found is handled here, by ``dataset.unlocated_evidence``, in one place.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ragsweep.datasets.text_evidence import TextLocator
from ragsweep.datasets.types import Dataset, Document, Question
from ragsweep.errors import RagsweepError
from ragsweep.run_dir import RunDir

if TYPE_CHECKING:
    from ragsweep.config import DatasetSpec


def load_corpus(spec: DatasetSpec, notes: list[str]) -> list[Document]:
    """The corpus alone (``ragsweep generate`` needs no questions)."""
    corpus = spec.corpus
    if corpus.format == "demo":
        from ragsweep.datasets.demo import load_demo_corpus

        return load_demo_corpus(notes)
    if corpus.format == "folder":
        from ragsweep.datasets.folder import load_folder_corpus

        return load_folder_corpus(corpus, notes)
    if corpus.format == "jsonl":
        from ragsweep.datasets.jsonl_corpus import load_jsonl_corpus

        return load_jsonl_corpus(corpus, notes)
    if corpus.format == "legalbench":
        from ragsweep.datasets.legalbench import load_legalbench_corpus

        return load_legalbench_corpus(corpus)
    if corpus.format == "squad":
        from ragsweep.datasets.squad import load_squad_corpus

        return load_squad_corpus(corpus)
    raise RagsweepError(f"dataset.corpus.format: unknown format {corpus.format!r}")


def _load_questions(
    spec: DatasetSpec, documents: list[Document], notes: list[str], locator: TextLocator
) -> tuple[list[Question], list[str]]:
    questions = spec.questions
    if questions.format == "demo":
        from ragsweep.datasets.demo import load_demo_questions

        return load_demo_questions(documents, notes, locator, questions.conversations)
    if questions.format in ("jsonl", "csv"):
        from ragsweep.datasets.questions_table import load_table_questions

        return load_table_questions(questions, documents, notes, locator)
    if questions.format == "labelled_rag":
        from ragsweep.datasets.labelled_rag import load_labelled_rag_questions

        return load_labelled_rag_questions(questions, documents, notes, locator)
    if questions.format == "giskard":
        from ragsweep.datasets.giskard import load_giskard_questions

        return load_giskard_questions(questions, documents, notes, locator)
    if questions.format == "legalbench":
        from ragsweep.datasets.legalbench import load_legalbench_questions

        return load_legalbench_questions(questions, documents), []
    if questions.format == "squad":
        from ragsweep.datasets.squad import load_squad_questions

        return load_squad_questions(questions, documents, notes), []
    raise RagsweepError(f"dataset.questions.format: unknown format {questions.format!r}")


def questions_source(spec: DatasetSpec) -> str:
    """The file named in question-related errors."""
    q = spec.questions
    if q.format == "demo":
        from ragsweep.datasets.demo import DEMO_QUESTIONS

        return str(DEMO_QUESTIONS)
    if q.format == "legalbench":
        return str(Path(q.path) / "benchmarks" / f"{q.subset}.json")
    return str(q.path)


def corpus_source(spec: DatasetSpec) -> str:
    """The file or folder named in corpus-related errors."""
    c = spec.corpus
    if c.format == "demo":
        from ragsweep.datasets.demo import DEMO_DIR

        return str(DEMO_DIR / "corpus.jsonl")
    if c.format == "legalbench":
        return str(Path(c.path) / "corpus" / c.subset)
    return str(c.path)


def dataset_name(spec: DatasetSpec) -> str:
    """``spec.name``, else one derived from the corpus: demo, legalbench-<subset>, folder or file name."""
    if spec.name:
        return spec.name
    c = spec.corpus
    if c.format == "demo":
        return "demo"
    if c.format == "legalbench":
        return f"legalbench-{c.subset}"
    if c.format == "folder":
        return Path(c.path).resolve().name or "folder"
    return Path(c.path).stem


def write_unlocated(report_dir: Path | None, unlocated: list) -> Path | None:
    """``unlocated_evidence.jsonl`` in ``report_dir``: one line per evidence text not found (question id,
    field, text, closest match, its place and similarity; a dict is written as it is). Removed when nothing is
    unlocated."""
    import json

    if report_dir is None:
        return None
    path = RunDir(Path(report_dir)).unlocated_evidence
    if not unlocated:
        path.unlink(missing_ok=True)
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for u in unlocated:
            f.write(json.dumps(_record(u), ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def apply_unlocated_policy(
    policy: str,
    source: str,
    questions: list[Question],
    unlocated: list[str],
    notes: list[str],
    listed: Path | None = None,
) -> list[Question]:
    """error: stop with one line; drop_question: remove the questions; keep_question: keep them (spans lost).
    ``listed``: the file naming every unlocated text, pointed to in the message."""
    if not unlocated:
        return questions
    qids = list(dict.fromkeys(getattr(u, "qid", None) for u in unlocated))
    count = f"{len(unlocated)} evidence text(s) in {len(qids)} question(s)"
    where = f"all listed in {listed}" if listed is not None else f"first: {unlocated[0]}"
    if policy == "error":
        raise RagsweepError(
            f"{source}: {count} could not be found in the corpus ({where}); fix the text or the doc_id, set "
            f"dataset.fuzzy_evidence (e.g. 0.9), or set dataset.unlocated_evidence: drop_question (or keep_question)"
        )
    if policy == "drop_question":
        notes.append(f"dropped {len(qids)} question(s) whose evidence text was not found in the corpus ({where})")
        bad = set(qids)
        return [q for q in questions if q.qid not in bad]
    notes.append(
        f"kept {len(qids)} question(s) without {len(unlocated)} evidence text(s) not found in the corpus ({where})"
    )
    return questions


def _fuzzy_threshold(spec: DatasetSpec) -> float | None:
    """``dataset.fuzzy_evidence``; the demo questions, which quote one PDF-like text with an OCR slip on
    purpose, default to ``DEMO_FUZZY`` so every spec over them loads."""
    if spec.fuzzy_evidence is not None or spec.questions.format != "demo":
        return spec.fuzzy_evidence
    from ragsweep.datasets.demo import DEMO_FUZZY

    return DEMO_FUZZY


def _record(unlocated: object) -> dict:
    if isinstance(unlocated, dict):
        return unlocated
    return getattr(unlocated, "record", {"description": str(unlocated)})


def load_dataset(spec: DatasetSpec, report_dir: Path | None = None, kept_in: Path | None = None) -> Dataset:
    """Load corpus and questions, locate evidence given as text (tiers), apply ``unlocated_evidence``,
    count copies of gold text elsewhere as gold (``duplicate_evidence``), and validate the result.

    ``report_dir`` (a run directory): where ``unlocated_evidence.jsonl`` lists every text not found.
    ``dataset.evidence`` records the tiers, the copies and the unlocated texts for the manifest. With
    ``kept_in`` (a sweep's ``CacheDir.datasets``), a dataset loaded before from the same files, spec and code is
    read back from there (``loaded_cache``)."""
    if kept_in is None:
        return _load(spec, report_dir)
    from ragsweep.datasets import loaded_cache

    files = loaded_cache.inputs(spec)
    if files is None:
        return _load(spec, report_dir)
    stored, key = loaded_cache.place(Path(kept_in), spec), loaded_cache.key(spec, files)
    dataset = loaded_cache.read(stored, key)
    if dataset is not None:
        return loaded_cache.relisted(dataset, write_unlocated(report_dir, dataset.evidence.get("unlocated") or []))
    dataset = _load(spec, report_dir)
    if loaded_cache.inputs(spec) == files and loaded_cache.key(spec, files) == key:  # no file changed meanwhile
        listed = RunDir(Path(report_dir)).unlocated_evidence if report_dir is not None else None
        loaded_cache.write(stored, key, dataset, listed)
    return dataset


def _load(spec: DatasetSpec, report_dir: Path | None) -> Dataset:
    notes: list[str] = []
    documents = load_corpus(spec, notes)
    locator = TextLocator({d.doc_id: d.text for d in documents}, fuzzy=_fuzzy_threshold(spec))
    questions, unlocated = _load_questions(spec, documents, notes, locator)
    source = questions_source(spec)
    listed = write_unlocated(report_dir, unlocated)
    questions = apply_unlocated_policy(spec.unlocated_evidence, source, questions, unlocated, notes, listed)
    if spec.negatives is not None:  # appended after the dataset's own, so --limit keeps their order
        from ragsweep.datasets.negatives import load_negatives

        negatives = load_negatives(spec.negatives, {q.qid for q in questions})
        questions = questions + negatives
        notes.append(f"appended {len(negatives)} negative question(s) from {spec.negatives}")
    n_spans = sum(len(q.evidence) for q in questions)  # after the policy, before copies
    by_text = sum((q.qid, e) in locator.located for q in questions for e in q.evidence)
    copies = None
    if spec.duplicate_evidence == "all_copies":
        from ragsweep.datasets.duplicates import add_copies

        assert locator.index is not None  # TextLocator.__post_init__ sets it
        questions, copies = add_copies(questions, locator.index)
        copy_note = copies.note()
        if copy_note:
            notes.append(copy_note)
    dataset = Dataset(name=dataset_name(spec), documents=documents, questions=questions, notes=notes)
    dataset.evidence = {
        "questions_with_evidence": sum(bool(q.evidence) for q in questions),
        "spans": n_spans,
        "given_as_spans": n_spans - by_text,
        "located_by_text": by_text,
        "location": locator.summary() if locator.total else None,
        "copies": copies.summary() if copies is not None else None,
        "unlocated": [_record(u) for u in unlocated],
    }
    dataset.validate(source, corpus_source(spec))
    return dataset
