"""Retrieve and answer: each configuration searches its indexes for each question and answers from what
it found (the extractive baseline here; an LLM later, in ``generate``). One row per (configuration,
question) goes to the sink (the journal, or a task's list), with sources, retrieval metrics and
latencies; a failing question or configuration is recorded with its reason and the rest go on.
"""

from __future__ import annotations

import time
import traceback
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable

from ragsweep import tracing
from ragsweep.datasets.types import Question
from ragsweep.errors import short_reason
from ragsweep.history.base import Standalone
from ragsweep.pipelines.answer_record import AnswerRecord, AnswerSink, Outlet, Retrieved, merged
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.grid import Configuration
from ragsweep.pipelines.stats import Timer

if TYPE_CHECKING:
    from ragsweep.config import RetrieverSpec
    from ragsweep.history.base import HistoryMode
    from ragsweep.pipelines.stages.abstain import AbstentionRule
    from ragsweep.retrievers.memo import SharedResults


@dataclass
class GroupIndexes:
    """What one splitter's configurations search: the parts built in memory (BM25, TF-IDF: by name), a vector
    index and the question latencies per embedding label, the knowledge graphs (opened by the splitter's earlier
    units: ``executors.inprocess``)."""

    parts: dict[str, SharedResults] = field(default_factory=dict)
    vectors: dict[str, SharedResults] = field(default_factory=dict)
    query_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    graphs: Any = None


def record_failures(
    configs: list[Configuration], pending: dict[str, list[Question]], sink: AnswerSink, stats, bar, reason: str
) -> None:
    """Every pending question of ``configs`` fails with ``reason`` (the rest of the sweep goes on)."""
    for c in configs:
        for q in pending[c.config_hash]:
            sink.add_answer(c.config_hash, q.qid, c.config_id, {"error": reason})
            stats.failed += 1
        bar.advance(len(pending[c.config_hash]))
    sink.flush()


def answer_group(
    ctx: StageContext,
    configs: list[Configuration],
    indexes: GroupIndexes,
    pending: dict[str, list[Question]],
    out: Outlet,
) -> None:
    """Answer the pending questions of one splitter's ``configs`` (those whose indexes exist) into ``out``."""
    from ragsweep.retrievers.factory import IndexRetrievers

    by_emb: dict[str | None, list[Configuration]] = defaultdict(list)
    for c in configs:
        by_emb[c.embedding.label() if c.embedding is not None else None].append(c)
    for label, cfgs in by_emb.items():
        # what the retrievers were built over: a unit of vector configurations alone opens no BM25 index
        key = (cfgs[0].chunk_key, label, indexes.graphs is not None, tuple(sorted(indexes.parts)))
        memo = ctx.retrievers_memo
        retrievers = memo.get(key) if memo is not None else None
        if retrievers is None:
            retrievers = IndexRetrievers(
                dict(indexes.parts),
                indexes.vectors.get(label) if label else None,
                llm=ctx.llm,
                graphs=indexes.graphs,
                rerankers=ctx.rerankers,
                transform_memo=ctx.transform_memo,
            )
            if memo is not None:
                memo[key] = retrievers
        query_ms = indexes.query_ms.get(label, {}) if label else {}
        for config in cfgs:
            answer_config(ctx, config, retrievers, pending[config.config_hash], out, query_ms)


@dataclass
class BuiltEngine:
    """One configuration's query engine: the retriever spec (with tuned weights), the retriever, the extractive
    engine (None with an LLM generator), the abstention rule and the adaptive router (None without), and the
    splitter's shared retrievers it was built from (``retrievers.factory.IndexRetrievers``: ranks and costs)."""

    retrievers: Any
    spec_r: RetrieverSpec
    tuning: dict | None
    retriever: Any  # a LlamaIndex BaseRetriever
    engine: Any  # RetrieverQueryEngine
    abstain: AbstentionRule | None
    route: Callable | None
    history: HistoryMode | None = None  # how a follow-up's conversation is used (None: the follow-up alone)


def answer_config(
    ctx: StageContext,
    config: Configuration,
    retrievers,
    questions: list[Question],
    out: Outlet,
    query_ms: dict[str, float],
) -> None:
    """Answer ``questions`` with one configuration and write each result to ``out``.

    ``retrieval_ms`` is the index search (and fusion) time plus the question's embedding latency,
    measured once per (model, question) when it was embedded (``query_ms``), since the vector was
    computed ahead of the search and served from the cache. With an LLM generator, the retrieved
    nodes go to ``out.retrieved`` and are answered concurrently afterwards (``generate``).
    """
    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError

    stats = ctx.stats
    try:
        built = build_engine(ctx, config, retrievers)
    except (BudgetExhausted, LLMFatalError):
        raise
    except Exception as exc:  # noqa: BLE001
        record_failures(
            [config],
            {config.config_hash: questions},
            out.sink,
            stats,
            out.bar,
            f"building the query engine failed: {short_reason(exc)}",
        )
        return
    with Timer(stats, "answering"):
        for q in questions:
            try:
                if not answer_question(ctx, config, built, q, out, query_ms):
                    continue  # left to the LLM generator, which advances the bar
            except (BudgetExhausted, LLMFatalError):
                raise
            except Exception as exc:  # noqa: BLE001 - one question failing must not lose the rest
                out.sink.add_answer(
                    config.config_hash,
                    q.qid,
                    config.config_id,
                    {"error": short_reason(exc), "traceback": traceback.format_exc(limit=5)},
                )
                stats.failed += 1
            out.bar.advance(1)


def build_engine(ctx: StageContext, config: Configuration, retrievers) -> BuiltEngine:
    """Tune the fusion weights (on the validation questions) when asked, build the retriever (a knowledge graph,
    a reranker on first use), the extractive engine, the abstention rule and the adaptive router."""
    from llama_index.core.query_engine import RetrieverQueryEngine

    from ragsweep.pipelines.extractive import ExtractiveSynthesizer
    from ragsweep.pipelines.stages.abstain import abstention_rule

    spec = ctx.spec
    spec_r, tuning, route = config.retriever, None, None
    if getattr(spec_r, "tuned", False):  # weights: tune -> chosen on the validation questions first
        from ragsweep.pipelines.stages.tune import tune_weights

        spec_r, tuning = tune_weights(ctx, config, retrievers)
    retriever = retrievers.make(spec_r, config.top_k, config.reranker, config.query_transform)
    synth = None if spec.generator.calls_llm else ExtractiveSynthesizer(spec.generator.max_sentences)  # type: ignore[union-attr]
    engine = RetrieverQueryEngine(retriever=retriever, response_synthesizer=synth) if synth else None
    abstain = abstention_rule(ctx, config, retriever) if engine is not None else None  # abstain_below
    if config.adaptive is not None:  # each question's predicted class picks its top_k, reranker, transform
        from ragsweep.pipelines.stages.adaptive import router

        route = router(ctx, config, retrievers, spec_r)
    history = None
    if config.history is not None:
        from ragsweep.history.base import history_mode

        history = history_mode(config.history, ctx.llm, ctx.transform_memo)
    return BuiltEngine(retrievers, spec_r, tuning, retriever, engine, abstain, route, history)


@dataclass
class _Fetched:
    """One question's retrieval: its query, the route's settings, the shaped ranking and context, latencies, and
    what the history mode made of the conversation (``asked``: None without one)."""

    bundle: Any
    top_k: int
    reranker: Any
    transform: Any
    routed: dict
    nodes: list
    context: list
    shaped: dict
    rewrites: Any
    retrieval_ms: float
    embed_ms: float | None
    asked: Standalone | None = None


def _retrieve(
    ctx: StageContext, config: Configuration, built: BuiltEngine, q: Question, query_ms: dict[str, float]
) -> _Fetched:
    """Search for one question (with its history mode's standalone text, through its route when adaptive) and
    shape what came back."""
    from llama_index.core.schema import QueryBundle

    from ragsweep.llm.usage import Trace, llm_scope
    from ragsweep.postprocessors.registry import postprocess
    from ragsweep.retrievers.memo import REPLAY

    retriever, top_k, reranker, transform, routed = (
        built.retriever,
        config.top_k,
        config.reranker,
        config.query_transform,
        {},
    )
    REPLAY.take()
    rewrites = Trace()
    t0 = time.perf_counter()
    asked = built.history.standalone(q) if built.history is not None else None  # an LLM's rewrite: memoised
    searched = q if asked is None else replace(q, question=asked.text)
    if built.route is not None:
        retriever, top_k, reranker, transform, routed = built.route(searched)
    bundle = QueryBundle(searched.question)
    with llm_scope(rewrites, stage="query_rewrite", config_id=None):
        nodes = retriever.retrieve(bundle)
    # LLM rewrites count at their original service time, also when served from the cache
    # (fresh calls are inside the measured wall time already, less what they waited in a queue)
    search_ms = (time.perf_counter() - t0) * 1000 + REPLAY.take() + rewrites.cached_ms - rewrites.queue_ms
    embed_ms = query_ms.get(searched.question) if config.embedding is not None else None
    shaped, post_ms = postprocess(config, nodes, ctx.dataset)  # postprocessors: cutoff, window, ...
    # metrics on the ranking, the generator reads the context
    return _Fetched(
        bundle,
        top_k,
        reranker,
        transform,
        routed,
        shaped.ranked,
        shaped.context,
        shaped.record,
        rewrites,
        search_ms + (embed_ms or 0.0) + post_ms,
        embed_ms,
        asked,
    )


def answer_question(
    ctx: StageContext,
    config: Configuration,
    built: BuiltEngine,
    q: Question,
    out: Outlet,
    query_ms: dict[str, float],
) -> bool:
    """Retrieve for one question, shape the context, answer it (extractive) and write its row; returns False
    when the answer is left to the LLM generator (the row goes to ``out.retrieved`` instead)."""
    from ragsweep.metrics import all_retrieval_metrics
    from ragsweep.pipelines.extractive import GENERATOR_LABEL

    got, retrievers = _retrieve(ctx, config, built, q, query_ms), built.retrievers
    text = got.bundle.query_str  # the question, or what its history mode searched with
    if built.engine is not None:
        t1 = time.perf_counter()
        answer = str(built.engine.synthesize(got.bundle, got.context)) if got.context else ""
        generation_ms = (time.perf_counter() - t1) * 1000
        if built.abstain is not None:
            answer, abstained = built.abstain.apply(got.nodes, answer)
    ranks = retrievers.source_ranks(built.spec_r, got.top_k, text, got.reranker, got.transform)
    rerank = retrievers.rerank_costs(built.spec_r, got.reranker, text, got.transform)
    sources = _source_rows(ctx, got.nodes, ranks, got.reranker is not None)
    metrics = all_retrieval_metrics([(s["doc_id"], s["start"], s["end"]) for s in sources], q.evidence, got.top_k)
    record: AnswerRecord = {
        "sources": sources,
        "retrieval_ms": got.retrieval_ms,
        "query_embedding_ms": got.embed_ms,
        "error": None,
    }
    calls = _calls_and_tuning(retrievers, built, text, got.transform, got.rewrites, rerank)
    record = merged(record, metrics, got.shaped, got.routed, calls, got.asked.record(q.question) if got.asked else {})
    if built.engine is None:
        assert out.retrieved is not None, "an LLM generator's answers are left to it"
        query = built.history.generator_query(q, text) if built.history is not None else None
        out.retrieved.append(Retrieved(config, q, got.context, record, query))
        return False
    done: AnswerRecord = {
        **record,
        "answer": answer,
        "answer_empty": not answer.strip(),
        "generator": GENERATOR_LABEL,
        "generation_ms": generation_ms,
        # not applicable: an extractive answer is the context's own sentences, a quote by construction (QuIP is
        # for LLM answers; computing it cost half of the answering stage: BENCHMARKS "Stage 1 at the floor")
        "quip": None,
    }
    if built.abstain is not None:
        done = merged(done, built.abstain.payload(abstained))
    tracing.answered(config, q, done, got.nodes)  # off: one check
    out.sink.add_answer(config.config_hash, q.qid, config.config_id, done)
    ctx.stats.answered += 1
    return True


def _source_rows(ctx: StageContext, nodes, ranks: dict, reranked: bool) -> list[dict]:
    """One row per retrieved node, in rank order: document, offsets, page, score, its rank in each retriever
    (and before reranking), a graph's triplets and what the postprocessors added."""
    from ragsweep.datasets.pages import page_field
    from ragsweep.postprocessors.base import SOURCE_FIELDS
    from ragsweep.retrievers.knowledge_graph import TRIPLETS_KEY

    sources = []
    for rank, nws in enumerate(nodes, start=1):
        node = nws.node
        sr = ranks.get(node.node_id, {})
        sources.append(
            {
                "rank": rank,
                "node_id": node.node_id,
                "doc_id": node.metadata.get("doc_id"),
                "start": node.start_char_idx,
                "end": node.end_char_idx,
                **page_field(ctx.dataset, node.metadata.get("doc_id"), node.start_char_idx, node.end_char_idx),
                "score": float(nws.score) if nws.score is not None else None,
                "rank_vector": sr.get("vector"),
                "rank_bm25": sr.get("bm25"),
                "rank_graph": sr.get("graph"),
                **({"rank_base": sr.get("base")} if reranked else {}),
                **({"triplets": node.metadata[TRIPLETS_KEY]} if TRIPLETS_KEY in node.metadata else {}),
                **node.metadata.get(SOURCE_FIELDS, {}),
            }
        )
    return sources


def _calls_and_tuning(retrievers, built: BuiltEngine, question: str, transform, rewrites, rerank: dict) -> AnswerRecord:
    """A row's LLM calls (query rewrites, the transform's, the reranker's), its tuned fusion weights and what
    the query transform searched with (RM3's expanded_query; an LLM transform's transformed_queries)."""
    out: AnswerRecord = {}
    if rewrites.calls:
        out["rewrite_llm"] = rewrites.as_dict()
    elif rerank.get("rewrite_llm"):  # the rewrites of the reranker's memoised base retrieval
        out["rewrite_llm"] = rerank["rewrite_llm"]
    if built.tuning is not None:
        out["fusion_weights"], out["tuning"] = built.tuning["weights"], built.tuning
    out = merged(out, retrievers.transform_record(transform, question))
    if rerank:
        out["rerank_ms"] = rerank.get("rerank_ms")
        if rerank.get("rerank_llm"):
            out["rerank_llm"] = rerank["rerank_llm"]
    return out
