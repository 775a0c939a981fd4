"""SQuAD v1.1 / v2.0 JSON: ``data[].paragraphs[].{context, qas[]}``.

Each distinct context is a document (``<title>#<paragraph index>``), so retrieval is over
paragraphs, as in the usual open-domain SQuAD setting. v2 unanswerable questions become
``out_of_scope`` questions with no evidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsweep.datasets.files import read_json_strict
from ragsweep.datasets.locate import find_span
from ragsweep.datasets.types import Document, EvidenceSpan, Question
from ragsweep.errors import RagsweepError

if TYPE_CHECKING:
    from ragsweep.config import SquadCorpus, SquadQuestions


def _articles(path: Path) -> list[Any]:
    data = read_json_strict(path)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise RagsweepError(f'{path}: not a SQuAD file (expected {{"data": [{{"title", "paragraphs"}}]}})')
    return data["data"]


def _paragraphs(path: Path) -> list[tuple[str, int, int, dict]]:
    """``(title, article index, paragraph index, paragraph)`` with the structure checked."""
    out = []
    for a, article in enumerate(_articles(path)):
        if not isinstance(article, dict) or not isinstance(article.get("paragraphs"), list):
            raise RagsweepError(f"{path}: data[{a}] needs a 'paragraphs' list")
        title = str(article.get("title") or f"article{a}")
        for p, para in enumerate(article["paragraphs"]):
            if not isinstance(para, dict) or not isinstance(para.get("context"), str):
                raise RagsweepError(f"{path}: data[{a}].paragraphs[{p}] needs a 'context' string")
            out.append((title, a, p, para))
    return out


def load_squad_corpus(spec: SquadCorpus) -> list[Document]:
    """One document per distinct, non-empty context; a repeated context keeps its first id."""
    path = Path(spec.path)
    documents: list[Document] = []
    seen_text: set[str] = set()
    used_ids: set[str] = set()
    for title, a, p, para in _paragraphs(path):
        text = para["context"]
        if not text.strip() or text in seen_text:
            continue
        doc_id = f"{title}#{p}"
        if doc_id in used_ids:  # two articles with the same title
            doc_id = f"{title} ({a})#{p}"
        seen_text.add(text)
        used_ids.add(doc_id)
        documents.append(Document(doc_id=doc_id, text=text, metadata={"title": title}))
    return documents


def _answer_span(context: str, answer: dict) -> tuple[tuple[int, int] | None, bool]:
    """Span from ``answer_start`` (trimmed of surrounding spaces), else searched by text; and whether searched."""
    text, start = answer.get("text"), answer.get("answer_start")
    if not isinstance(text, str) or not text.strip():
        return None, False
    if (
        isinstance(start, int)
        and not isinstance(start, bool)
        and start >= 0
        and context[start : start + len(text)] == text
    ):
        lead = len(text) - len(text.lstrip())
        return (start + lead, start + len(text.rstrip())), False
    return find_span(context, text), True


def load_squad_questions(
    spec: SquadQuestions, documents: list[Document], notes: list[str] | None = None
) -> list[Question]:
    """Questions whose contexts are matched to corpus documents by their text."""
    path = Path(spec.path)
    by_text: dict[str, str] = {}
    for d in documents:
        by_text.setdefault(d.text, d.doc_id)
    questions: list[Question] = []
    relocated = 0
    for title, a, p, para in _paragraphs(path):
        for k, qa in enumerate(para.get("qas") or []):
            where = f"data[{a}].paragraphs[{p}].qas[{k}]"
            if not isinstance(qa, dict) or not isinstance(qa.get("question"), str) or not qa["question"].strip():
                raise RagsweepError(f"{path}: {where} needs a non-empty 'question'")
            qid = str(qa.get("id") or f"{title}#{p}.{k}")
            if qa.get("is_impossible"):
                questions.append(Question(qid=qid, question=qa["question"].strip(), qtype="out_of_scope"))
                continue
            answers = [x for x in qa.get("answers") or [] if isinstance(x, dict)]
            if not answers:
                questions.append(Question(qid=qid, question=qa["question"].strip()))
                continue
            doc_id = by_text.get(para["context"])
            if doc_id is None:
                raise RagsweepError(
                    f"{path}: {where}: its context is not in the corpus; use the same SQuAD file "
                    f"for dataset.corpus and dataset.questions"
                )
            first = answers[0]
            span, searched = _answer_span(para["context"], first)
            if span is None:
                raise RagsweepError(
                    f"{path}: {where}.answers[0] text {first.get('text')!r} is not in its context; "
                    f"fix the answer or its answer_start"
                )
            relocated += searched
            questions.append(
                Question(
                    qid=qid,
                    question=qa["question"].strip(),
                    reference_answer=str(first["text"]).strip(),
                    evidence=(EvidenceSpan(doc_id, *span),),
                    qtype=None,
                )
            )
    if relocated and notes is not None:
        notes.append(f"{relocated} SQuAD answer(s) located by text: answer_start did not point at the answer")
    return questions
