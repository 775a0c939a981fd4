"""The small dataset shipped with ragsweep, so a sweep runs with no data of one's own.

It is stored in the same JSONL formats users write (a corpus and a questions table), so it is
read by those loaders and doubles as their example.
"""

from __future__ import annotations

from pathlib import Path

from ragsweep.datasets.types import Document, Question
from ragsweep.errors import RagsweepError

DEMO_DIR = Path(__file__).parent / "demo"
DEMO_CORPUS = DEMO_DIR / "corpus.jsonl"
DEMO_QUESTIONS = DEMO_DIR / "questions.jsonl"
# the follow-up questions (type conversational, each with its history), added by ``questions.conversations``
DEMO_CONVERSATIONS = DEMO_DIR / "conversations.jsonl"
# One demo quote carries an OCR-like slip (located only by the fuzzy tier): the demo questions turn
# fuzzy matching on at this similarity unless the spec's dataset.fuzzy_evidence says otherwise.
DEMO_FUZZY = 0.9


def _require(path: Path) -> Path:
    if not path.is_file():
        raise RagsweepError(f"{path}: the bundled demo data is missing; reinstall ragsweep")
    return path


def load_demo_corpus(notes: list[str] | None = None) -> list[Document]:
    """The demo documents (``id``, ``title``, ``text`` per line; the title goes to metadata)."""
    from ragsweep.config import JsonlCorpus
    from ragsweep.datasets.jsonl_corpus import load_jsonl_corpus

    return load_jsonl_corpus(JsonlCorpus(format="jsonl", path=_require(DEMO_CORPUS)), notes)


def load_demo_questions(
    documents: list[Document], notes: list[str] | None = None, locator=None, conversations: bool = False
) -> tuple[list[Question], list[str]]:
    """The demo questions, read as a JSONL questions table (``locator``: ``text_evidence.TextLocator``);
    ``conversations``: followed by the follow-up questions, read the same way with the same locator."""
    from ragsweep.config import TableQuestions
    from ragsweep.datasets.questions_table import load_table_questions

    def table(path: Path) -> TableQuestions:
        return TableQuestions(format="jsonl", path=_require(path))

    if not conversations:
        return load_table_questions(table(DEMO_QUESTIONS), documents, notes, locator)
    if locator is None:
        from ragsweep.datasets.text_evidence import TextLocator

        locator = TextLocator({d.doc_id: d.text for d in documents})
    # One locator reads both files, so its counts and its unlocated texts cover both: the second read's note and
    # list (cumulative) are the ones kept.
    questions, _ = load_table_questions(table(DEMO_QUESTIONS), documents, None, locator)
    follow_ups, unlocated = load_table_questions(table(DEMO_CONVERSATIONS), documents, notes, locator)
    return questions + follow_ups, unlocated
