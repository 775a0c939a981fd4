"""The answer record: what the answer and generate stages journal per (configuration, question), what a Ray
task sends back and what ``records.parquet`` is built from. Its keys are declared once here, so the writers
(``stages/answer``, ``stages/generate``, ``stages/abstain``, the postprocessors, the query transforms) and the
reader (``outputs/records``) are checked against one list.

Every key is optional (``total=False``): a failed row has ``error`` (and perhaps ``traceback``, ``llm``,
``error_kind``) alone, and the other keys appear with the feature that writes them. The retrieval metric
scores (``hit``, ``mrr``, ... : the catalogue's ``retrieval`` family, ``metrics/catalogue.py``) are keys of
the record too; they are added (``merged``) under the catalogue's names rather than listed here, so a
new metric stays one declaration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, cast

from ragsweep.llm.usage import LLMUse

if TYPE_CHECKING:
    from ragsweep.datasets.types import Question
    from ragsweep.pipelines.grid import Configuration


class AnswerRecord(TypedDict, total=False):
    """One (configuration, question) answer, as journaled."""

    # a failure: why (one line), where (the extractive stage's traceback), what kind (``context_window``)
    error: str | None
    traceback: str
    error_kind: str
    # retrieval: the ranked sources (``Source`` rows) and its times (ms)
    sources: list[dict[str, Any]]
    retrieval_ms: float | None  # None: nothing was retrieved (a reference baseline is given its context)
    query_embedding_ms: float | None
    rerank_ms: float | None
    postprocess_ms: float
    n_retrieved: int  # nodes retrieved before the postprocessors
    context_order: list[int]  # long_context_reorder: the ranks in the generator's order
    fusion_weights: list[float]  # tuned fusion weights (``weights: tune``) and how they were chosen
    tuning: dict[str, Any]
    expanded_query: str  # RM3
    transformed_queries: list[str]  # an LLM query transform: what it searched with, and why it fell back
    transform_note: str
    standalone_question: str  # a history mode: what a follow-up was searched with, why it fell back, its LLM use
    history_note: str
    history_llm: LLMUse
    adaptive_class: str  # adaptive: the question's predicted class and the top_k it was retrieved at
    top_k: int
    # LLM use while retrieving
    rewrite_llm: LLMUse
    transform_llm: LLMUse
    rerank_llm: LLMUse
    # the answer
    answer: str
    answer_empty: bool
    generator: str  # "extractive" or "llm:<model>"
    generation_ms: float | None
    generation_wall_ms: float
    generation_queue_ms: float
    truncated: bool
    invocation: int
    llm: LLMUse
    quip: float | None
    echoed_prompt: int
    copied_context: int
    looped: int
    # abstention (``abstain_below``, an LLM's refusal)
    abstained: bool
    abstain_threshold: float | None
    abstention_tuning: dict[str, Any]


def merged(*parts: Mapping[str, Any]) -> AnswerRecord:
    """One record from the parts its writers return (the retrieval scores by metric name, a postprocessor's, a
    transform's, the abstention rule's); a later part's key wins."""
    out: dict[str, Any] = {}
    for part in parts:
        out.update(part)
    return cast(AnswerRecord, out)


@dataclass
class Retrieved:
    """A question retrieved for and left to the LLM generator (``stages/generate``): its configuration, the
    nodes the generator reads, the record so far and the query it answers (None: the question; a history mode's
    ``generator_query`` else)."""

    config: Configuration
    question: Question
    context: list
    record: AnswerRecord
    query: str | None = None


class AnswerSink(Protocol):
    """Where answer records go: the journal, or a Ray task's list sent back to the driver."""

    def add_answer(self, config_hash: str, qid: str, config_id: str, payload: AnswerRecord) -> None: ...

    def flush(self) -> None: ...


@dataclass(frozen=True)
class Outlet:
    """Where the answering stage's results go: rows to ``sink``, progress to ``bar``, and what is left to the LLM
    generator to ``retrieved`` (None: an extractive generator leaves nothing)."""

    sink: AnswerSink
    bar: Any
    retrieved: list[Retrieved] | None = None
