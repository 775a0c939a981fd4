"""``load_dataset``: the one entry point from a ``DatasetSpec`` to a validated ``Dataset``.

Corpus and questions are chosen independently (e.g. your own questions over the demo corpus),
so questions are loaded against whatever documents the corpus loader produced. Evidence given as
text that cannot be found is handled here, by ``dataset.unlocated_evidence``, in one place.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ragsweep.datasets.types import Dataset, Document, Question
from ragsweep.errors import RagsweepError

if TYPE_CHECKING:
    from ragsweep.config import DatasetSpec


def _load_corpus(spec: DatasetSpec, notes: list[str]) -> list[Document]:
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
    spec: DatasetSpec, documents: list[Document], notes: list[str]
) -> tuple[list[Question], list[str]]:
    questions = spec.questions
    if questions.format == "demo":
        from ragsweep.datasets.demo import load_demo_questions

        return load_demo_questions(documents, notes)
    if questions.format in ("jsonl", "csv"):
        from ragsweep.datasets.questions_table import load_table_questions

        return load_table_questions(questions, documents, notes)
    if questions.format == "labelled_rag":
        from ragsweep.datasets.labelled_rag import load_labelled_rag_questions

        return load_labelled_rag_questions(questions, documents, notes)
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


def apply_unlocated_policy(
    policy: str, source: str, questions: list[Question], unlocated: list[str], notes: list[str]
) -> list[Question]:
    """error: stop with one line; drop_question: remove the questions; keep_question: keep them (spans lost)."""
    if not unlocated:
        return questions
    qids = list(dict.fromkeys(getattr(u, "qid", None) for u in unlocated))
    count = f"{len(unlocated)} evidence text(s) in {len(qids)} question(s)"
    if policy == "error":
        raise RagsweepError(
            f"{source}: {count} could not be found in the corpus (first: {unlocated[0]}); fix the text or the "
            f"doc_id, or set dataset.unlocated_evidence: drop_question (or keep_question)"
        )
    if policy == "drop_question":
        bad = set(qids)
        notes.append(f"dropped {len(qids)} question(s) whose evidence text was not found in the corpus "
                     f"(first: {qids[0]!r})")
        return [q for q in questions if q.qid not in bad]
    notes.append(f"kept {len(qids)} question(s) without {len(unlocated)} evidence text(s) not found in the corpus "
                 f"(first: {qids[0]!r})")
    return questions


def load_dataset(spec: DatasetSpec) -> Dataset:
    """Load corpus and questions, apply ``unlocated_evidence``, and validate the result."""
    notes: list[str] = []
    documents = _load_corpus(spec, notes)
    questions, unlocated = _load_questions(spec, documents, notes)
    source = questions_source(spec)
    questions = apply_unlocated_policy(spec.unlocated_evidence, source, questions, unlocated, notes)
    dataset = Dataset(name=dataset_name(spec), documents=documents, questions=questions, notes=notes)
    dataset.validate(source, corpus_source(spec))
    return dataset
