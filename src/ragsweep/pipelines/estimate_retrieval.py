"""The dry run's count of the LLM calls retrieval makes: LLM query transforms and LLM reranking, each once per
(question, step) whatever the configurations that share it (``pipelines.estimate``)."""

from __future__ import annotations

import math

from ragsweep.pipelines.stage_estimate import DryRunInputs, StageEstimate


def steps(config, est: StageEstimate) -> list[tuple]:
    """(query transform, reranker) a configuration retrieves with: its own, or each class's of an adaptive
    one, whose questions' classes are not known before its classifier is trained: every question is counted
    in every class (an upper bound, said in ``est``'s notes)."""
    if config.adaptive is None:
        return [(config.query_transform, config.reranker)]
    routes = [(r.transform, r.reranker) for r in config.adaptive.routes]
    note = (
        f"{config.config_id}: every question counted in each class with an LLM step (classes are predicted "
        "when the run trains the classifier): an upper bound"
    )
    if any(x is not None and x.uses_llm for pair in routes for x in pair) and note not in est.notes:
        est.notes.append(note)
    return routes


def llm_rerank(run: DryRunInputs, price) -> StageEstimate:
    """LLM reranking: once per (question, base retriever, reranker) whatever the top_k, in batches of
    ``batch_size`` candidates, each candidate's chunk in the prompt; the reply lists numbers and scores."""
    from llama_index.core.prompts.default_prompts import DEFAULT_CHOICE_SELECT_PROMPT_TMPL

    from ragsweep.llm.tokens import count_tokens

    spec, configs, questions, done, q_tokens, overhead = (
        run.spec,
        run.configs,
        run.questions,
        run.done,
        run.q_tokens,
        run.overhead,
    )
    assert spec.llm is not None, "estimated for a spec with an LLM"
    est = StageEstimate("rerank", spec.llm.model)
    base = count_tokens(DEFAULT_CHOICE_SELECT_PROMPT_TMPL.format(context_str="", query_str=""))
    seen: set[tuple] = set()
    for c, t, r in ((c, t, r) for c in configs for t, r in steps(c, est)):
        if r is None or not r.uses_llm:
            continue
        for q in questions:
            # one reordering per (question, index, retriever, transform, reranker) serves every top_k,
            # except for tuned fusion weights, which are chosen per top_k
            key = (
                q.qid,
                c.chunk_key,
                c.embedding.label() if c.embedding else None,
                c.retriever.label(),
                t.label() if t else None,
                r.label(),
                c.top_k if getattr(c.retriever, "tuned", False) else None,
            )
            if (c.config_hash, q.qid) in done or key in seen:
                continue
            seen.add(key)
            batches = math.ceil(r.candidates / r.batch_size)
            per_doc = run.mean_chunk(c) + 6  # "Document N:" and blank lines
            est.add(
                batches,
                batches * (overhead + base + q_tokens[q.qid]) + int(r.candidates * per_doc),
                batches * min(spec.llm.max_tokens, 8 * r.batch_size),
                price,
            )
    return est


def llm_transforms(spec, configs, questions, done, overhead, price) -> StageEstimate:
    """LLM query transforms: one call per (transform, question text), whatever the indexes, retrievers, top_k
    and rerankers that use it (the process memoises what it wrote), with the prompt it sends."""
    from ragsweep.llm.tokens import count_tokens
    from ragsweep.retrievers.transforms.base import transform_key
    from ragsweep.retrievers.transforms.registry import prompt

    est = StageEstimate("query_transform", spec.llm.model)
    seen: set[tuple[str, str]] = set()
    for c, t in ((c, t) for c in configs for t, _ in steps(c, est)):
        if t is None or not t.uses_llm:
            continue
        key = transform_key(t)
        for q in questions:
            if (c.config_hash, q.qid) in done or (key, q.question) in seen:
                continue
            seen.add((key, q.question))
            est.add(1, overhead + count_tokens(prompt(t, q.question)), spec.llm.max_tokens, price)
    return est


def llm_history(spec, configs, questions, done, overhead, price) -> StageEstimate:
    """History modes that condense with the LLM: one call per (mode, follow-up with its conversation), whatever the
    configurations that use it (the process memoises the rewrite), with the prompt it sends; none for a question
    asked alone."""
    from ragsweep.history.base import memo_key
    from ragsweep.history.condense import prompt
    from ragsweep.llm.tokens import count_tokens

    est = StageEstimate("history", spec.llm.model)
    seen: set[tuple[str, str]] = set()
    for c in configs:
        if c.history is None or not c.history.uses_llm:
            continue
        for q in questions:
            key = (c.history.kind, memo_key(q))
            if not q.history or (c.config_hash, q.qid) in done or key in seen:
                continue
            seen.add(key)
            est.add(1, overhead + count_tokens(prompt(c.history, q)), spec.llm.max_tokens, price)
    return est
