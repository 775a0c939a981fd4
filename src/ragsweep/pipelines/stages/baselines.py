"""Stage: answer the reference baselines (``baselines:``) from the contexts they are given, not retrieved
(``ragsweep.baselines.contexts``): the gold spans, the gold documents, or nothing. Each row is what an answer row
is (sources with offsets, the retrieval metrics of those sources, the answer), so scoring, records and the
summary treat a baseline as a configuration; the choice, stage 2, the search and export leave it out
(``grid.is_baseline``). The extractive generator answers here; an LLM generator's questions go to the outlet's
``retrieved`` and are answered with the configurations' (``stages.generate``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragsweep.baselines.contexts import Span, context_spans
from ragsweep.datasets.types import Dataset, Question
from ragsweep.pipelines.answer_record import AnswerRecord, Outlet, Retrieved
from ragsweep.pipelines.grid import Configuration

if TYPE_CHECKING:
    from ragsweep.pipelines.plan import Unit
    from ragsweep.pipelines.plan_run import PlanRun

SCORE = 1.0  # a given context is not ranked: every passage scores the same


def context_nodes(spans: list[Span], dataset: Dataset) -> list:
    """The spans as LlamaIndex nodes with the metadata a retrieved chunk carries (document, offsets)."""
    from llama_index.core.schema import NodeWithScore, TextNode

    nodes = []
    for i, s in enumerate(spans):
        text = dataset.document(s.doc_id).text[s.start : s.end]
        node = TextNode(
            id_=f"baseline:{s.doc_id}:{s.start}:{s.end}:{i}",
            text=text,
            metadata={"doc_id": s.doc_id},
            excluded_embed_metadata_keys=["doc_id"],  # as a chunk's: the generator reads the text alone
            excluded_llm_metadata_keys=["doc_id"],
            start_char_idx=s.start,
            end_char_idx=s.end,
        )
        nodes.append(NodeWithScore(node=node, score=SCORE))
    return nodes


@dataclass(frozen=True)
class BaselineAnswering:
    """How a run's baselines answer: ``k``, the rank the retrieval metrics are cut at (the run's largest top_k);
    ``max_chars``, the context's budget (``context_budget``: None, whole documents); ``synthesizer``, the
    extractive one (None: the default; an LLM generator's answers are left to it)."""

    k: int
    max_chars: int | None = None
    synthesizer: Any = None


def answer_baseline(config: Configuration, q: Question, dataset: Dataset, out: Outlet, how: BaselineAnswering) -> bool:
    """Answer ``q`` with the baseline ``config``; False when the answer is left to the LLM generator (the row goes
    to ``out.retrieved``)."""
    from llama_index.core.schema import QueryBundle

    from ragsweep.metrics import all_retrieval_metrics
    from ragsweep.pipelines.extractive import GENERATOR_LABEL, ExtractiveSynthesizer

    assert config.baseline is not None
    spans = context_spans(config.baseline, q.evidence, lambda d: len(dataset.document(d).text), how.max_chars)
    nodes = context_nodes(spans, dataset)
    sources = [
        {"rank": i, "node_id": n.node.node_id, "doc_id": s.doc_id, "start": s.start, "end": s.end, "score": SCORE}
        for i, (n, s) in enumerate(zip(nodes, spans), start=1)
    ]
    metrics = all_retrieval_metrics([(s.doc_id, s.start, s.end) for s in spans], q.evidence, max(how.k, len(spans)))
    record: AnswerRecord = {"sources": sources, "retrieval_ms": None, "query_embedding_ms": None, "error": None}
    record = {**record, **metrics}  # type: ignore[typeddict-item]
    if out.retrieved is not None:
        out.retrieved.append(Retrieved(config, q, nodes, record))
        return False
    t0 = time.perf_counter()
    synth = how.synthesizer if how.synthesizer is not None else ExtractiveSynthesizer()
    answer = str(synth.synthesize(QueryBundle(q.question), nodes)) if nodes else ""
    done: AnswerRecord = {
        **record,
        "answer": answer,
        "answer_empty": not answer.strip(),
        "generator": GENERATOR_LABEL,
        "generation_ms": (time.perf_counter() - t0) * 1000,
    }
    out.sink.add_answer(config.config_hash, q.qid, config.config_id, done)
    return True


def run_unit(run: PlanRun, _unit: Unit) -> None:
    """The baselines unit: the reference baselines' answers, in the driver's process (no index to search)."""
    llm = run.st.spec.generator.calls_llm
    out = Outlet(run.st.journal, run.bar, run.retrieved if llm else None)
    answer_baselines(run.st.ctx, run.plan.baselines, run.plan.pending, out)


def answer_baselines(ctx, configs: list[Configuration], pending: dict, out: Outlet) -> None:
    """Every pending question of the baselines ``configs``; an LLM generator's go to ``out.retrieved``."""
    spec = ctx.spec
    from ragsweep.pipelines.extractive import ExtractiveSynthesizer

    llm = out.retrieved is not None
    synth = None if llm else ExtractiveSynthesizer(spec.generator.max_sentences)  # type: ignore[union-attr]
    how = BaselineAnswering(k=max(spec.top_k), max_chars=context_budget(spec), synthesizer=synth)
    for config in configs:
        for q in pending[config.config_hash]:
            if answer_baseline(config, q, ctx.dataset, out, how):
                ctx.stats.answered += 1
            out.bar.advance(1)
    out.sink.flush()


async def closed_book_answer(llm, generator, question: str) -> str:
    """An LLM generator's ``no_retrieval`` answer (through the run's shared client: cached, limited, priced)."""
    from llama_index.core.prompts import PromptTemplate

    from ragsweep.baselines.closed_book import closed_book_template

    return await llm.apredict(PromptTemplate(closed_book_template(generator)), query_str=question)


PROMPT_TOKENS = 512  # the template and the question, beside the context
CHARS_PER_TOKEN = 3  # conservative for English prose (about 4 with GPT-style tokenizers)


def context_budget(spec) -> int | None:
    """The characters of context a full-document baseline may hand the LLM: its context window less the reply
    and the prompt, at ``CHARS_PER_TOKEN``; None (whole documents) for the extractive generator."""
    if not spec.generator.calls_llm or spec.llm is None:
        return None
    return max(0, (spec.llm.context_window - spec.llm.max_tokens - PROMPT_TOKENS) * CHARS_PER_TOKEN)
