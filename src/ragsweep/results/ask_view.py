"""``ragsweep ask``: one question through one configuration of a run, shown with its sources.

When the question is one of the run's dataset (same text up to case and whitespace, or named with
``--qid``), each source is marked where it overlaps that question's gold evidence, with the rule
the retrieval metrics use, so a user sees why a configuration scored as it did.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ragsweep.errors import RagsweepError
from ragsweep.results.run import overlaps_gold

if TYPE_CHECKING:
    from ragsweep.datasets.types import Dataset, Question
    from ragsweep.pipelines.answer_record import AnswerRecord


@dataclass
class AskResult:
    """The answer payload (sources with their text) and the dataset question it matched, if any."""

    out: AnswerRecord
    matched: Question | None = None
    by_qid: bool = False


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def match_question(dataset: Dataset, question: str, qid: str | None = None) -> Question | None:
    """The dataset question named by ``qid``, else the first one with the same text (case and
    whitespace aside), else None."""
    if qid is not None:
        for q in dataset.questions:
            if q.qid == qid:
                return q
        examples = ", ".join(q.qid for q in dataset.questions[:3])
        raise RagsweepError(
            f"--qid: {qid!r} is not a question of the run's dataset (ids look like {examples}); "
            f"fix the id or leave --qid out"
        )
    wanted = _normal(question)
    return next((q for q in dataset.questions if _normal(q.question) == wanted), None)


def ask_run(
    run_dir: Path, config_id: str, question: str, cache: Path | None = None, qid: str | None = None
) -> AskResult:
    """Answer ``question`` with ``config_id`` of the run in ``run_dir`` (reusing its caches) and mark
    the sources that overlap the matched question's gold evidence (``source["gold"]``)."""
    from ragsweep.pipelines import ask
    from ragsweep.results.configuration import open_configuration

    run = open_configuration(run_dir, config_id, cache)
    dataset = run.dataset()
    matched = match_question(dataset, question, qid)
    # a follow-up of the dataset is asked with its conversation, as the sweep asked it
    asked = replace(matched, question=question) if matched is not None and matched.history else question
    out = ask.answer_question(run.spec, run.config, dataset, asked, cache_dir=run.cache, chosen=run.chosen)
    if matched is not None and matched.evidence:
        spans = [{"doc_id": e.doc_id, "start": e.start, "end": e.end} for e in matched.evidence]
        for s in out["sources"]:
            s["gold"] = overlaps_gold(s, spans)
    return AskResult(out, matched, by_qid=qid is not None)


def print_ask(result: AskResult, console) -> None:
    """The answer, the matched question and the sources table (page and gold columns when known)."""
    from rich.markup import escape
    from rich.table import Table

    out, q = result.out, result.matched
    console.print(f"[bold]answer[/bold] ({out['generator']}): {escape(out['answer'] or '(empty)')}")
    console.print(f"retrieval {out['retrieval_ms']:.1f} ms, generation {out['generation_ms']:.1f} ms")
    if q is not None:
        how = "named by --qid" if result.by_qid else "same text"
        gold = (
            f"{len(q.evidence)} gold evidence span(s); sources overlapping one are marked ✓"
            if q.evidence
            else "it has no gold evidence"
        )
        console.print(f"dataset question {escape(q.qid)} ({how}): {gold}")
        if q.history:
            console.print(f"asked with the conversation before it ({len(q.history)} turns), as the sweep asked it")
    sources = out["sources"]
    pages = any(s.get("page") for s in sources)
    marks = any("gold" in s for s in sources)
    table = Table(title="sources")
    # the optional columns leave the others where they were for corpora without pages or gold
    reranked = any("rank_base" in s for s in sources)
    for col in (
        "rank",
        "score",
        "document",
        *(["page"] if pages else []),
        "span",
        *(["rank before rerank"] if reranked else []),
        "vector rank",
        "bm25 rank",
        "graph rank",
        *(["gold"] if marks else []),
        "text",
    ):
        table.add_column(col)
    for s in sources:
        text = " ".join(s["text"].split())[:160]
        if s.get("triplets"):  # knowledge-graph sources: the triplets that led to the chunk
            text = "; ".join(s["triplets"][:3]) + "\n" + text
        table.add_row(
            str(s["rank"]),
            f"{s['score']:.4f}" if s["score"] is not None else "-",
            escape(str(s["doc_id"])),
            *([escape(str(s.get("page") or "-"))] if pages else []),
            f"{s['start']}-{s['end']}",
            *([str(s.get("rank_base") or "-")] if reranked else []),
            str(s["rank_vector"] or "-"),
            str(s["rank_bm25"] or "-"),
            str(s.get("rank_graph") or "-"),
            *(["✓" if s.get("gold") else ""] if marks else []),
            escape(text),
        )
    console.print(table)
