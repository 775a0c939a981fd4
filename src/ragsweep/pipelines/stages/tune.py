"""Fusion weights tuned on the validation questions (``weights: tune``).

Hybrid search is usually reported with fixed, hand-set weights; tuned on held-out questions it
gains most (an Adobe domain-QA hybrid-search study tuned cosine + BM25 boosts on a 60 % validation
split: nDCG .760 -> .847). Here a grid over the simplex is tried on the dataset's validation
questions that have gold evidence, scored by a retrieval metric of the fused ranking at the
configuration's top_k (its query transform included, its reranker not: the weights shape the
candidates a reranker gets), and the best weights answer every question. The test questions never
see the choice, so the verdict's test mean is honest. The validation mean of a tuned configuration
is optimistic by construction, so the verdict's choice (on validation) leans towards tuned
configurations; its optimism (validation - test) shows by how much. Every candidate reuses the
memoised base results, so tuning queries no index again.
"""

from __future__ import annotations

import itertools
import time
from typing import TYPE_CHECKING

from ragsweep.datasets.types import Question

if TYPE_CHECKING:
    from ragsweep.config import RetrieverSpec


def simplex_grid(parts: int, steps: int) -> list[tuple[float, ...]]:
    """Weight vectors with entries in multiples of 1 / (steps - 1) summing to 1, in a fixed order
    (lexicographic by the first weight, descending); ``parts`` 2, ``steps`` 5: (1, 0) ... (0, 1)."""
    n = steps - 1
    out = [
        tuple(c / n for c in combo) for combo in itertools.product(range(n, -1, -1), repeat=parts) if sum(combo) == n
    ]
    return out


def choose(candidates: list[tuple[tuple[float, ...], float]]) -> tuple[float, ...]:
    """The weights with the best mean; ties go to the weights nearest equal weighting, then grid order."""
    best = max(score for _, score in candidates)
    tied = [w for w, score in candidates if score == best]
    return min(tied, key=lambda w: sum((x - 1 / len(w)) ** 2 for x in w))


def validation_questions(ctx) -> list[Question]:
    """The dataset's validation questions with gold evidence: all of them, whatever ``--limit`` says, so
    the weights are a function of the dataset and the spec alone (a run resumed with another limit
    answers with the same weights; the split settings are part of the configuration's hash)."""
    from ragsweep.evaluation.split import validation_questions as all_validation

    return [q for q in all_validation(ctx.spec, ctx.dataset) if q.evidence]


def tune_weights(ctx, config, retrievers) -> tuple[RetrieverSpec, dict]:
    """The configuration's retriever spec with its tuned weights, and what the tuning saw (the metric,
    the number of validation questions, each candidate's mean, the choice and its milliseconds).
    Without validation questions the weights are equal, and the record says why."""
    from llama_index.core.schema import QueryBundle

    from ragsweep.llm.usage import Trace, llm_scope
    from ragsweep.metrics import all_retrieval_metrics

    spec = config.retriever
    parts = len(spec.searches)
    if config.config_hash in ctx.tuned_weights:  # chosen by the run already (``ragsweep ask``)
        known = ctx.tuned_weights[config.config_hash]
        return spec.model_copy(update={"weights": tuple(known["weights"])}), known
    questions = validation_questions(ctx)
    t0 = time.perf_counter()
    if not questions:
        equal = tuple(1 / parts for _ in range(parts))
        return spec.model_copy(update={"weights": equal}), {
            "metric": config.tune_metric,
            "n_validation": 0,
            "weights": list(equal),
            "reason": "no validation questions with gold evidence: equal weights",
        }
    scored = []
    trace = Trace()  # a fusion with LLM rewrites rewrites the validation questions too: counted here
    with llm_scope(trace, stage="tune", config_id=config.config_id):
        for weights in simplex_grid(parts, spec.tune_steps):
            candidate = spec.model_copy(update={"weights": weights})
            retriever = retrievers.make(candidate, config.top_k, transform=config.query_transform)
            total = 0.0
            for q in questions:
                nodes = retriever.retrieve(QueryBundle(q.question))
                found = [(n.node.metadata.get("doc_id"), n.node.start_char_idx, n.node.end_char_idx) for n in nodes]
                total += all_retrieval_metrics(found, q.evidence, config.top_k)[config.tune_metric]
            scored.append((weights, total / len(questions)))
    chosen = choose(scored)
    return spec.model_copy(update={"weights": chosen}), {
        "metric": config.tune_metric,
        "n_validation": len(questions),
        "weights": list(chosen),
        "candidates": [[*w, round(score, 6)] for w, score in scored],
        "tuning_ms": round((time.perf_counter() - t0) * 1000, 1),
        **({"llm": trace.as_dict()} if trace.calls else {}),
    }
