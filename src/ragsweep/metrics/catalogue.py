"""Every per-question figure ragsweep reports, declared once.

A metric's name, the function that computes it (where one pure function does), its direction, family, labels,
citation and what it may be used for are written here and nowhere else: record and summary columns, the
end-of-run table, the verdict's wording, the report, the figures, ``compare``, the metrics fusion weights may be
tuned on and the metrics a verdict may be chosen by are all derived from ``CATALOGUE`` (as LlamaIndex's
``METRIC_REGISTRY`` and ``resolve_metrics`` do for its retrieval metrics).

The declaration order is the column order of records and summaries; do not reorder existing entries (a summary
written before would no longer compare column for column). A new metric is one new entry (and, when one pure
function computes it, that function's module).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ragsweep.metrics.answer import answer_contains, exact_match, token_f1
from ragsweep.metrics.document import document_reciprocal_rank
from ragsweep.metrics.hit import hit_at_k
from ragsweep.metrics.mrr import reciprocal_rank
from ragsweep.metrics.ndcg import ndcg_at_k
from ragsweep.metrics.span import span_precision_at_k, span_recall_at_k

# bertscore: the answer against the reference answer by contextual embeddings (evaluation/bertscore.py);
# answer: the answer against the reference answer, SQuAD-normalised (metrics/answer.py), ``fn(answer, references)``;
# retrieval: the ranked chunks against gold character spans at the configuration's top_k, ``fn(retrieved, gold, k)``;
# latency: milliseconds per question, as the answer stage measures them; abstention: 1/0 per question, NaN where
# undefined (metrics/abstention.py); groundedness: a cheap detector of the answer against its context;
# degenerate: 1/0 flags of LLM answers (pipelines/degenerate.py); judge: stage-2 LLM judges (evaluation/judges.py)
Family = Literal["bertscore", "answer", "retrieval", "latency", "abstention", "groundedness", "degenerate", "judge"]


@dataclass(frozen=True)
class Metric:
    """One metric. ``short`` fits the end-of-run table's 5-wide columns; ``label`` is what every other place
    prints (the figures add ``@k`` where ``per_k``); ``table`` / ``compare`` / ``report`` / ``explorer``: position
    among the end-of-run table's columns, ``compare``'s default metrics, the report's summary columns and its
    per-question explorer's (None: not one of them); ``digits``: the decimals one question's value is shown with."""

    name: str
    family: Family
    label: str
    short: str | None = None
    higher_is_better: bool = True
    selectable: bool = True  # a verdict, stage 2's selection or a search may be decided by it
    tunable: bool = False  # fusion weights may be tuned on it (retrieval metrics of the fused ranking)
    per_k: bool = False  # measured at the configuration's top_k
    table: int | None = None
    compare: int | None = None
    report: int | None = None
    explorer: int | None = None
    digits: int = 3
    judge: str | None = None  # the stage-2 judge whose replies give it
    fn: Callable[..., float] | None = None
    cite: str = ""

    @property
    def column(self) -> str:
        """The end-of-run table's column heading."""
        return self.short or self.name

    @property
    def axis(self) -> str:
        """A figure's axis label."""
        return f"{self.label}@k" if self.per_k else self.label


_BERTSCORE = "Zhang et al. 2020, BERTScore: Evaluating Text Generation with BERT (ICLR)"
_SQUAD = "Rajpurkar et al. 2016, SQuAD: 100,000+ Questions for Machine Comprehension of Text (EMNLP)"
_ABSTAIN = "Rajpurkar, Jia & Liang 2018, Know What You Don't Know: Unanswerable Questions for SQuAD (ACL)"
_SPANS = "Pipitone & Alami 2024, LegalBench-RAG (character-span precision and recall)"
_QUIP = "Shi et al. 2024, Detecting Pretraining Data from Large Language Models (QuIP-style n-gram overlap)"


def _bertscore(part: str, word: str, rescaled: bool) -> Metric:
    name = f"bertscore_{part}" + ("_rescaled" if rescaled else "")
    label = f"BERTScore {word}" + (" (rescaled)" if rescaled else "")
    short = {("f1", True): "BS-F1", ("f1", False): "BS-F1 raw"}.get((part, rescaled))
    report = {"f1": 0, "p": 1, "r": 2}[part] if rescaled else None
    return Metric(
        name,
        "bertscore",
        label,
        short=short,
        report=report,
        table=0 if short == "BS-F1" else None,
        compare=0 if short == "BS-F1" else None,
        explorer=0 if short == "BS-F1" else None,
        cite=_BERTSCORE,
    )


class Placement(NamedTuple):
    """A metric's ``table`` / ``compare`` / ``report`` / ``explorer`` positions (None: not there) and the decimals a
    question's value is shown with, given together so a declaration reads as where and how the metric is shown."""

    table: int | None
    compare: int | None
    report: int | None
    explorer: int | None = None
    digits: int = 3


def _retrieval(name: str, label: str, short: str, fn: Callable[..., float], placed: Placement, cite: str) -> Metric:
    return Metric(
        name,
        "retrieval",
        label,
        short=short,
        tunable=True,
        per_k=True,
        table=placed.table,
        compare=placed.compare,
        report=placed.report,
        explorer=placed.explorer,
        digits=placed.digits,
        fn=fn,
        cite=cite,
    )


CATALOGUE: tuple[Metric, ...] = (
    _bertscore("p", "precision", False),
    _bertscore("r", "recall", False),
    _bertscore("f1", "F1", False),
    _bertscore("p", "precision", True),
    _bertscore("r", "recall", True),
    _bertscore("f1", "F1", True),
    Metric(
        "answer_contains",
        "answer",
        "answer contains gold",
        short="contains",
        table=2,
        report=3,
        fn=answer_contains,
        cite=_SQUAD,
    ),
    Metric("exact_match", "answer", "exact match", short="EM", report=4, fn=exact_match, cite=_SQUAD),
    Metric("token_f1", "answer", "token F1", short="tokF1", report=5, fn=token_f1, cite=_SQUAD),
    _retrieval("hit", "hit", "hit", hit_at_k, Placement(table=1, compare=2, report=6, explorer=2, digits=0), cite=""),
    _retrieval(
        "mrr",
        "MRR",
        "MRR",
        reciprocal_rank,
        Placement(table=3, compare=3, report=7),
        cite="Voorhees 1999, The TREC-8 Question Answering Track Report",
    ),
    _retrieval(
        "ndcg",
        "nDCG",
        "nDCG",
        ndcg_at_k,
        Placement(table=4, compare=1, report=8, explorer=1),
        cite="Järvelin & Kekäläinen 2002, Cumulated gain-based evaluation of IR techniques (TOIS)",
    ),
    _retrieval(
        "span_recall", "span recall", "spanR", span_recall_at_k, Placement(table=5, compare=4, report=9), cite=_SPANS
    ),
    _retrieval(
        "span_precision",
        "span precision",
        "spanP",
        span_precision_at_k,
        Placement(table=6, compare=None, report=10),
        cite=_SPANS,
    ),
    _retrieval(
        "doc_mrr",
        "document MRR",
        "docMRR",
        document_reciprocal_rank,
        Placement(table=None, compare=None, report=11),
        cite="",
    ),
    Metric("retrieval_ms", "latency", "retrieval latency (ms)", higher_is_better=False, selectable=False),
    Metric("query_embedding_ms", "latency", "query embedding (ms)", higher_is_better=False, selectable=False),
    Metric("rerank_ms", "latency", "reranking (ms)", higher_is_better=False, selectable=False),
    Metric("postprocess_ms", "latency", "postprocessing (ms)", higher_is_better=False, selectable=False),
    Metric(
        "generation_ms", "latency", "generation latency: server time (ms)", higher_is_better=False, selectable=False
    ),
    Metric("abstention_rate", "abstention", "abstains (unanswerable)", short="abst", table=7, report=12, cite=_ABSTAIN),
    Metric(
        "false_abstention_rate",
        "abstention",
        "abstains (answerable)",
        short="fAbst",
        higher_is_better=False,
        table=8,
        report=13,
        cite=_ABSTAIN,
    ),
    Metric("quip", "groundedness", "QuIP (answer n-grams found in its context)", cite=_QUIP),
    Metric("echoed_prompt", "degenerate", "echoes the prompt", higher_is_better=False, selectable=False),
    Metric("copied_context", "degenerate", "copies the context", higher_is_better=False, selectable=False),
    Metric("looped", "degenerate", "restates itself in a loop", higher_is_better=False, selectable=False),
    Metric("correctness", "judge", "correctness (1-5)", selectable=False, compare=5, judge="correctness"),
    Metric("correctness_pass", "judge", "correctness pass rate", selectable=False, compare=6, judge="correctness"),
    Metric("faithfulness", "judge", "faithfulness pass rate", selectable=False, compare=7, judge="faithfulness"),
    Metric("relevancy", "judge", "relevancy pass rate", selectable=False, compare=8, judge="relevancy"),
)
BY_NAME: dict[str, Metric] = {m.name: m for m in CATALOGUE}


def names(family: Family | None = None, **flags: object) -> list[str]:
    """The metrics of ``family`` (all when None) whose attributes equal ``flags``, in declaration order."""
    return [
        m.name
        for m in CATALOGUE
        if (family is None or m.family == family) and all(getattr(m, k) == v for k, v in flags.items())
    ]


def ordered(position: str) -> list[str]:
    """The metrics with a ``table`` / ``compare`` / ``report`` / ``explorer`` position, in that order."""
    placed = [m for m in CATALOGUE if getattr(m, position) is not None]
    return [m.name for m in sorted(placed, key=lambda m: getattr(m, position))]


def label(name: str) -> str:
    """What a metric is called in a sentence (the name itself for a column the catalogue does not declare)."""
    m = BY_NAME.get(name)
    return m.label if m else name


def higher_is_better(name: str) -> bool:
    m = BY_NAME.get(name)
    return m.higher_is_better if m else True


def functions(family: Family) -> dict[str, Callable[..., float]]:
    """name -> function of the metrics of ``family`` one pure function computes."""
    return {m.name: m.fn for m in CATALOGUE if m.family == family and m.fn is not None}
