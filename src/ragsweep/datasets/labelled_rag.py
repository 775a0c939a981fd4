"""LlamaIndex ``LabelledRagDataset`` JSON: ``{"examples": [{"query", "reference_contexts", "reference_answer", ...}]}``.

The file carries no document ids, so each reference context is located in the corpus by text.
We load with LlamaIndex's own class when the installed ``llama-index-core`` still ships it; 0.14
dropped ``llama_index.core.llama_dataset``, so otherwise a pydantic mirror of the same schema
(fields and defaults of ``LabelledRagDataExample``) reads the file.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from pydantic import BaseModel, Field, ValidationError

from ragsweep.datasets.files import read_json_strict
from ragsweep.datasets.questions_table import default_qid, unique_spans
from ragsweep.datasets.text_evidence import TextLocator
from ragsweep.datasets.types import Document, EvidenceSpan, Question
from ragsweep.errors import RagsweepError

if TYPE_CHECKING:
    from ragsweep.config import LabelledRagQuestions


class CreatedByType(str, Enum):
    HUMAN = "human"
    AI = "ai"


class CreatedBy(BaseModel):
    model_name: Optional[str] = ""
    type: CreatedByType


class LabelledRagDataExample(BaseModel):
    """Same fields and defaults as ``llama_index.core.llama_dataset.LabelledRagDataExample``."""

    query: str = Field(default_factory=str)
    query_by: Optional[CreatedBy] = None
    reference_contexts: Optional[list[str]] = None
    reference_answer: str = Field(default_factory=str)
    reference_answer_by: Optional[CreatedBy] = None


def _examples(path: Path) -> list[Any]:
    """Parse and validate the file; every example has ``query``/``reference_contexts``/``reference_answer``."""
    data = read_json_strict(path)
    if not isinstance(data, dict) or not isinstance(data.get("examples"), list):
        raise RagsweepError(
            f'{path}: not a LabelledRagDataset file (expected {{"examples": [...]}}); '
            f"save it with LabelledRagDataset.save_json"
        )
    try:
        from llama_index.core.llama_dataset import LabelledRagDataset  # type: ignore[import-not-found]
    except ImportError:
        model: Any = LabelledRagDataExample
    else:  # pragma: no cover - only with a llama-index-core that still ships llama_dataset
        model = LabelledRagDataset._example_type
    out = []
    for i, raw in enumerate(data["examples"]):
        try:
            out.append(model.model_validate(raw))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"]) or "(example)"
            raise RagsweepError(f"{path}: examples[{i}].{loc}: {err['msg']}; fix that example") from None
    return out


def load_labelled_rag_questions(
    spec: LabelledRagQuestions,
    documents: list[Document],
    notes: list[str] | None = None,
    locator: TextLocator | None = None,
) -> tuple[list[Question], list[str]]:
    """One question per example (ids q0001…); reference contexts become evidence where found."""
    path = Path(spec.path)
    locator = locator or TextLocator({d.doc_id: d.text for d in documents})
    questions: list[Question] = []
    for i, ex in enumerate(_examples(path), 1):
        if not ex.query.strip():
            raise RagsweepError(f"{path}: examples[{i - 1}].query is empty; every example needs a query")
        qid = default_qid(i)
        spans: list[EvidenceSpan] = []
        for j, ctx in enumerate(ex.reference_contexts or []):
            if ctx.strip():
                hit = locator.locate(qid, f"reference_contexts[{j}]", ctx)
                if hit is not None:
                    spans.append(hit)
        questions.append(
            Question(
                qid=qid,
                question=ex.query.strip(),
                reference_answer=ex.reference_answer or None,
                evidence=unique_spans(spans),
                qtype=None,
            )
        )
    locator.note_into(notes)
    return questions, list(locator.unlocated)
