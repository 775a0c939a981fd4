"""``ragsweep run --dry-run``: the LLM calls, tokens and dollars a run would need, before any is spent.

Nothing here calls an LLM or an embedding API. Work already in the run's journal is not counted.
Prompt tokens are estimated from the real prompt templates, the questions, and the mean chunk
length of each splitter at the configuration's top_k (chunks come from the cache, or from running
the splitter locally; a semantic splitter whose chunks are not cached is assumed to give 256-token
chunks). Completion tokens are counted at ``max_tokens``, and stage 2 at ``max_configs``
configurations (selection keeps the top N plus those not significantly worse, at most
``max_configs``), so the cost is an upper bound. LLM cache hits are not predicted: a re-run
usually costs less.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ragsweep.pipelines.estimate_retrieval import llm_history, llm_rerank, llm_transforms
from ragsweep.pipelines.stage_estimate import StageEstimate
from ragsweep.run_dir import RunDir

if TYPE_CHECKING:
    from ragsweep.cache_dir import CacheDir
    from ragsweep.config import LLMSpec, SweepSpec
    from ragsweep.datasets.types import Dataset, Question
    from ragsweep.pipelines.grid import Configuration

_SEMANTIC_GUESS = 256
_EXTRACTIVE_ANSWER = 60


@dataclass
class _Run:
    """What every stage's estimate reads: the spec, the questions and configurations still to do, what is
    journaled, the questions' token counts, and each splitter's chunks and mean chunk length (computed once)."""

    spec: SweepSpec
    dataset: Dataset
    questions: list[Question]
    configs: list[Configuration]
    cache: CacheDir
    done: set
    judged: set
    q_tokens: dict[str, int]
    overhead: int
    chunk_lists: dict[str, list | None] = field(default_factory=dict)
    chunk_tokens: dict[str, float] = field(default_factory=dict)
    baseline_tokens: dict[tuple[str, str], int] = field(default_factory=dict)

    def chunks_of(self, config):
        if config.chunk_key not in self.chunk_lists:
            self.chunk_lists[config.chunk_key] = _chunks(self.spec, self.dataset, config, self.cache)
        return self.chunk_lists[config.chunk_key]

    def mean_chunk(self, config) -> float:
        if config.chunk_key not in self.chunk_tokens:
            self.chunk_tokens[config.chunk_key] = _mean_tokens(self.chunks_of(config))
        return self.chunk_tokens[config.chunk_key]


def estimate_run(
    spec, run_dir: Path | None = None, cache_dir: Path | None = None, limit: int | None = None
) -> list[StageEstimate]:
    """Per stage (query rewrites, transforms, reranking, generation, graph extraction, chunk contexts, each
    judge): the LLM calls, tokens and cost of what the run directory does not hold yet."""
    from ragsweep.cache_dir import DEFAULT_CACHE, CacheDir
    from ragsweep.datasets.load import load_dataset
    from ragsweep.llm.pricing import price_for
    from ragsweep.llm.tokens import MESSAGE_OVERHEAD, REPLY_PRIMING, count_tokens
    from ragsweep.pipelines.grid import expand
    from ragsweep.pipelines.preflight import check_llm_settings

    check_llm_settings(spec)
    dataset = load_dataset(spec.dataset)
    questions = dataset.questions[:limit] if limit else list(dataset.questions)
    configs = expand(spec)
    cache = CacheDir(Path(cache_dir or spec.cache_dir or DEFAULT_CACHE))
    done, judged = _done(Path(run_dir or spec.default_run_dir()), spec, configs)
    q_tokens = {q.qid: count_tokens(q.question) for q in questions}
    r = _Run(spec, dataset, questions, configs, cache, done, judged, q_tokens, REPLY_PRIMING + MESSAGE_OVERHEAD)
    out = _stage1(r) if spec.llm is not None else []
    contexts = _chunk_contexts(spec, dataset, configs, cache, r.chunks_of, r.overhead)
    if contexts.calls or contexts.notes:
        out.append(contexts)
    if spec.stage2 is not None:  # judges on the top N configurations, test questions
        out += _judges(r)
    for e in out:
        if price_for(e.model, spec.prices) is None:
            e.notes.append("no price for this model: tokens only (add it to the spec's prices)")
    return out


def _stage1(r: _Run) -> list[StageEstimate]:
    """Stage 1's LLM calls: query rewrites, LLM transforms, LLM reranking, generation, graph extraction."""
    from llama_index.core.retrievers.fusion_retriever import QUERY_GEN_PROMPT

    from ragsweep.llm.pricing import price_for
    from ragsweep.llm.tokens import count_tokens

    spec, configs, questions, done = r.spec, r.configs, r.questions, r.done
    llm = _llm(spec)
    out: list[StageEstimate] = []
    price = price_for(llm.model, spec.prices)
    rewrites = {
        (q.qid, n)
        for c in configs
        if (n := getattr(c.retriever, "num_queries", 1)) > 1
        for q in questions
        if (c.config_hash, q.qid) not in done
    }
    if rewrites:
        est = StageEstimate("query_rewrite", llm.model)
        base = count_tokens(QUERY_GEN_PROMPT.format(num_queries=2, query=""))
        for qid, _ in rewrites:
            est.add(1, r.overhead + base + r.q_tokens[qid], llm.max_tokens, price)
        out.append(est)
    for est in (
        llm_transforms(spec, configs, questions, done, r.overhead, price),
        llm_history(spec, configs, questions, done, r.overhead, price),
    ):
        if est.calls:
            out.append(est)
    rerank = llm_rerank(r, price)
    if rerank.calls:
        out.append(rerank)
    if spec.generator.calls_llm:
        out.append(_generation(r, price))
    graphs = _graph_extraction(r, price)
    if graphs.calls or graphs.notes:
        out.append(graphs)
    return out


def _generation(r: _Run, price) -> StageEstimate:
    """LLM answers: per configuration, its prompt with top_k mean chunks, split into calls of context_window."""
    from llama_index.core.prompts import PromptTemplate
    from llama_index.core.prompts.default_prompts import DEFAULT_TEXT_QA_PROMPT_TMPL

    from ragsweep.config import LLMGeneratorSpec
    from ragsweep.llm.tokens import count_tokens
    from ragsweep.pipelines.generator_prompts import template_text

    llm = _llm(r.spec)
    generator = cast(LLMGeneratorSpec, r.spec.generator)  # generation is estimated for an LLM generator only
    est = StageEstimate("generation", llm.model)
    largest = 0  # the longest prompt one call sends (LlamaIndex packs chunks up to context_window)
    for c in r.configs:
        template = template_text(generator, c.prompt or generator.prompt_file)
        # filled as LlamaIndex fills it (its known slots only: a prompt file's other braces, JSON say, stay)
        empty = PromptTemplate(template or DEFAULT_TEXT_QA_PROMPT_TMPL).format(context_str="", query_str="")
        base = count_tokens(empty) + 40  # + system prompt
        room = max(1, llm.context_window - llm.max_tokens - base)
        ctx = c.top_k * r.mean_chunk(c)
        calls_per_q = max(1, math.ceil(ctx / room))
        largest = max(largest, r.overhead + base + int(min(ctx, room)) + max(r.q_tokens.values(), default=0))
        for q in r.questions:
            if (c.config_hash, q.qid) in r.done:
                continue
            if c.baseline is not None:  # its own context: none, the gold spans, the documents cut to the budget
                ctx = _ctx_of(r, c, q)
                calls_per_q = max(1, math.ceil(ctx / room))
                largest = max(largest, r.overhead + base + int(min(ctx, room)) + r.q_tokens[q.qid])
            est.add(
                calls_per_q,
                calls_per_q * (r.overhead + base + r.q_tokens[q.qid]) + int(ctx),
                calls_per_q * llm.max_tokens,
                price,
            )
    est.notes.append(
        f"longest prompt about {largest:,} tokens (mean chunks at top_k, packed up to "
        f"context_window {llm.context_window:,}): the server's context must hold it plus "
        f"max_tokens {llm.max_tokens:,}"
    )
    return est


def _ctx_of(r: _Run, c, q) -> int:
    """A baseline's context tokens for ``q`` (memoised: every judge and the generation ask for it)."""
    key = (c.config_hash, q.qid)
    if key not in r.baseline_tokens:
        r.baseline_tokens[key] = _baseline_context_tokens(r, c.baseline, q)
    return r.baseline_tokens[key]


def _baseline_context_tokens(r: _Run, kind: str, q) -> int:
    """The tokens of a reference baseline's context for ``q`` (``baselines.contexts``, the LLM's budget)."""
    from ragsweep.baselines.contexts import context_spans
    from ragsweep.llm.tokens import count_tokens
    from ragsweep.pipelines.stages.baselines import context_budget

    doc = r.dataset.document
    spans = context_spans(kind, q.evidence, lambda d: len(doc(d).text), context_budget(r.spec))
    return sum(count_tokens(doc(s.doc_id).text[s.start : s.end]) for s in spans)


def _judge_templates(s2) -> dict[str, str]:
    """Each judge's prompt template text: the spec's file, else LlamaIndex's."""
    from llama_index.core.evaluation.correctness import DEFAULT_EVAL_TEMPLATE as CORRECTNESS
    from llama_index.core.evaluation.faithfulness import DEFAULT_EVAL_TEMPLATE as FAITHFULNESS
    from llama_index.core.evaluation.relevancy import DEFAULT_EVAL_TEMPLATE as RELEVANCY

    from ragsweep.evaluation.judges import prompt_texts

    texts = prompt_texts(s2.prompts)
    return {
        "correctness": texts.get("correctness") or "\n".join(m.content or "" for m in CORRECTNESS.message_templates),
        "faithfulness": texts.get("faithfulness") or FAITHFULNESS.get_template(),
        "relevancy": texts.get("relevancy") or RELEVANCY.get_template(),
    }


def _judges(r: _Run) -> list[StageEstimate]:
    """Stage 2: each judge on at most max_configs configurations over the validation and test questions it judges
    that are not judged yet, each judgement ``repeats`` times."""
    from ragsweep.evaluation.split import question_split
    from ragsweep.llm.pricing import price_for
    from ragsweep.llm.tokens import count_tokens

    spec, configs = r.spec, r.configs
    s2 = spec.stage2
    assert s2 is not None  # estimate_run asks for judges only when the spec has stage 2
    judge_llm = s2.llm or _llm(spec)
    price = price_for(judge_llm.model, spec.prices)
    split = question_split(spec, r.dataset)
    from ragsweep.pipelines.stages.judge import judged_questions_of, judged_references

    test = judged_questions_of(spec, r.questions, split)  # a share of the validation and of the test questions
    n_val = sum(split.get(q.qid) == "validation" for q in test)

    refs = judged_references(spec, configs)  # judged beside the selection (never selected), with their contexts
    grid = [c for c in configs if c.baseline is None]
    n_sel = min(s2.max_configs, len(grid))  # the most stage 2 can select
    answer = spec.llm.max_tokens if spec.generator.calls_llm and spec.llm else _EXTRACTIVE_ANSWER
    ctx = max(spec.top_k) * (sum(r.mean_chunk(c) for c in grid) / max(1, len(grid)))
    templates = _judge_templates(s2)
    out = []
    for name in s2.judges:
        est = StageEstimate(f"judge:{name}", judge_llm.model)
        base = count_tokens(templates[name]) + r.overhead
        ref_hashes = {c.config_hash for c in refs}
        left = max(0, len(test) * n_sel - sum(1 for k in r.judged if k[2] == name and k[0] not in ref_hashes))
        for q in test[: max(0, math.ceil(left / max(1, n_sel)))]:
            ref = count_tokens(q.reference_answer or "")
            prompt = base + r.q_tokens[q.qid] + answer + (ref if name == "correctness" else int(ctx))
            n = n_sel * s2.repeats  # each judgement asked repeats times
            est.add(n, n * prompt, n * judge_llm.max_tokens, price)
        room = max(1, judge_llm.context_window - judge_llm.max_tokens - base)
        for c in refs:  # each baseline's own context: none, the gold spans, the documents (refined past the window)
            for q in test:
                if (c.config_hash, q.qid, name) in r.judged or (name != "correctness" and c.baseline == "no_retrieval"):
                    continue  # judged, or nothing to judge against (no context: unmeasured without a call)
                given = count_tokens(q.reference_answer or "") if name == "correctness" else _ctx_of(r, c, q)
                calls = max(1, math.ceil(given / room)) * s2.repeats
                prompt = calls * (base + r.q_tokens[q.qid] + answer) + given * s2.repeats
                est.add(calls, prompt, calls * judge_llm.max_tokens, price)
        est.notes.append(
            f"at most {n_sel} configurations x {n_val} validation + {len(test) - n_val} test questions "
            f"(top {s2.top_n} plus those not significantly worse, at most max_configs = {s2.max_configs})"
            + (f", and the reference baselines {', '.join(c.baseline or '' for c in refs)}" if refs else "")
            + (f", each judgement {s2.repeats} times" if s2.repeats > 1 else "")
        )
        out.append(est)
    return out


def _llm(spec: SweepSpec) -> LLMSpec:
    """The spec's LLM, which the stages estimated here are only asked for when it has one."""
    assert spec.llm is not None, "an LLM stage estimated for a spec without llm"
    return spec.llm


def _done(run_dir: Path, spec, configs) -> tuple[set, set]:
    """Answers and judgements already journaled for these configurations and judge settings."""
    path = RunDir(run_dir).journal
    if not path.is_file():
        return set(), set()
    from ragsweep.pipelines.journal import Journal

    hashes = {c.config_hash for c in configs}
    j = Journal(path)
    try:
        keys = None
        if spec.stage2 is not None:
            from ragsweep.pipelines.stages.judge import judge_keys

            keys = judge_keys(spec)
        repeats = spec.stage2.repeats if spec.stage2 is not None else 1
        made = j.repeated_judgements(keys, repeats) if keys else {}
        # judged: every repeat made (a judgement with repeats still to make is counted as to do)
        judged = {k for k, runs in made.items() if k[0] in hashes and all(p is not None and p["ok"] for p in runs)}
        return {d for d in j.done() if d[0] in hashes}, judged
    finally:
        j.close()


def _chunks(spec, dataset, config, cache):
    """The configuration's chunks: cached, or split locally; None for an uncached semantic splitter
    (it would need embeddings, which a dry run does not compute)."""
    from ragsweep.pipelines.stages.chunk import cached_chunks_path
    from ragsweep.splitters.chunk_store import load_chunks

    chunks = load_chunks(cached_chunks_path(cache, config, dataset))
    if chunks is None and config.chunk_embedding is None:
        from ragsweep.splitters.build import make_parser, split_corpus

        chunks = split_corpus(dataset.documents, make_parser(config.splitter, None), config.chunk_key)
    return chunks


def _mean_tokens(chunks) -> float:
    from ragsweep.llm.tokens import count_tokens

    if chunks is None:
        return float(_SEMANTIC_GUESS)
    if not chunks:
        return 0.0
    sample = chunks[:: max(1, len(chunks) // 500)]
    return sum(count_tokens(c.text) for c in sample) / len(sample)


def _graph_extraction(run: _Run, price) -> StageEstimate:
    """One LLM path-extraction call per distinct chunk text (identical prompts are sent once: the LLM
    cache and the engine's in-flight deduplication), once per (splitter, extractor) whose graph is not cached."""
    from llama_index.core.prompts.default_prompts import (
        DEFAULT_DYNAMIC_EXTRACT_PROMPT,
        DEFAULT_KG_TRIPLET_EXTRACT_PROMPT,
    )

    from ragsweep.graphs.build import graph_key
    from ragsweep.graphs.extractors import extractor_identity
    from ragsweep.llm.tokens import count_tokens
    from ragsweep.pipelines.stages.chunk import chunk_digest

    spec, dataset, configs, cache, overhead = run.spec, run.dataset, run.configs, run.cache, run.overhead
    templates = {"llm_simple": DEFAULT_KG_TRIPLET_EXTRACT_PROMPT, "llm_dynamic": DEFAULT_DYNAMIC_EXTRACT_PROMPT}
    llm = _llm(spec)
    est = StageEstimate("graph_extraction", llm.model)
    seen: set = set()
    for c in configs:
        r: Any = c.retriever  # a graph retriever's spec, when it extracts with an LLM
        if not getattr(r, "uses_llm", False):
            continue
        ident = extractor_identity(r, llm)
        if (c.chunk_key, repr(ident)) in seen:
            continue
        seen.add((c.chunk_key, repr(ident)))
        chunks = run.chunks_of(c)
        if chunks is None:
            est.notes.append(f"{c.chunk_key}: semantic chunks not cached yet, its graph is not counted")
            continue
        key = graph_key(dataset.corpus_fingerprint(), chunk_digest(chunks), ident)
        if cache.graph(key).is_file():
            continue
        base = overhead + count_tokens(templates[r.extractor].get_template())
        for text in dict.fromkeys(ch.text for ch in chunks):
            est.add(1, base + count_tokens(text), llm.max_tokens, price)
    return est


def _chunk_contexts(spec, dataset, configs, cache, chunks_of, overhead: int) -> StageEstimate:
    """One call per distinct (document window, chunk) of each splitter with ``context: llm`` whose chunks are
    not cached: the prompt's template, window and chunk, and ``max_tokens`` of context at most."""
    from ragsweep.config import context_llm
    from ragsweep.llm.pricing import price_for
    from ragsweep.llm.tokens import count_tokens
    from ragsweep.pipelines.stages.chunk import cached_chunks_path
    from ragsweep.pipelines.stages.chunk_context import keys
    from ragsweep.splitters.situate import fill, render_window, template_text

    # splitters whose context an LLM writes (context_llm: None for an offline one, or with no LLM to write it)
    todo = {c.chunk_key: (c, llm) for c in configs if (llm := context_llm(c.splitter.context, spec.llm)) is not None}
    est = StageEstimate("chunk_context", ", ".join(dict.fromkeys(x.model for _, x in todo.values())))
    texts = {d.doc_id: d.text for d in dataset.documents}
    counted: dict[tuple, int] = {}  # windows are shared by the chunks of a document (block): counted once

    def window_tokens(doc_id: str, bounds: tuple) -> int:
        if (doc_id, bounds) not in counted:
            counted[(doc_id, bounds)] = count_tokens(render_window(texts[doc_id], bounds))
        return counted[(doc_id, bounds)]

    for key, (c, llm) in todo.items():
        if cached_chunks_path(cache, c, dataset).is_file():
            continue
        chunks = chunks_of(c)
        if chunks is None:
            est.notes.append(f"{key}: semantic chunks not cached yet, its contexts are not counted")
            continue
        base = overhead + count_tokens(fill(template_text(c.splitter.context.prompt_file), "", ""))
        ks, _ = keys(chunks, dataset.documents, c.splitter.context)
        price = price_for(llm.model, spec.prices)
        for doc_id, bounds, text in dict.fromkeys(ks):
            est.add(1, base + window_tokens(doc_id, bounds) + count_tokens(text), llm.max_tokens, price)
    return est
