"""What a candidate would cost to evaluate, given what the search has computed already.

A configuration needs its splitter's chunks, an index per (splitter, embedding), a knowledge graph per
splitter for graph retrievers, its retrieval (the retriever, transform and reranker over that index,
run once at the largest depth and shared by every top_k and postprocessor) and an answer per question;
all but the answers are shared (the plan of stages computes each once, and a search keeps what it
retrieved from trial to trial), so a configuration that differs from an evaluated one only in top_k
costs only its answers. ``units`` lists what a candidate would add; ``CostModel`` learns seconds per unit from the
trials so far by non-negative least squares over what each of them added (Lawson & Hanson 1974,
"Solving Least Squares Problems", ch. 23), so the prediction is in this machine's seconds. Snoek et
al. 2012 ("Practical Bayesian Optimization of Machine Learning Algorithms", NeurIPS) weigh expected
improvement by predicted cost the same way; here the cheapest of a few proposals is evaluated.
"""

from __future__ import annotations

import math


def shared_units(config) -> set[tuple[str, ...]]:
    """The shared units a configuration needs (chunks, index, graph, retrieval), as keys."""
    out = {("chunk", config.chunk_key), ("retrieval", config.chunk_key, retrieval_key(config))}
    if config.embedding is not None and config.retriever.needs_embedding:
        out.add(("index", config.chunk_key, config.embedding.label()))
    if config.retriever.uses_graph:
        out.add(("graph", config.chunk_key))
    return out


def retrieval_key(config) -> str:
    """What a retrieval is, but top_k and postprocessor: embedding, retriever, transform, reranker."""
    parts = [
        config.embedding.label() if config.embedding is not None else "-",
        config.retriever.label(),
        config.query_transform.label() if config.query_transform is not None else "none",
        config.reranker.label() if config.reranker is not None else "none",
        config.adaptive.spec.label() if config.adaptive is not None else "-",
    ]
    return "/".join(parts)


def retrieval_kind(config) -> str:
    """What a retrieval's cost per question depends on: the retriever kind, reranker and transform kinds."""
    parts = [
        config.retriever.kind,
        config.reranker.kind if config.reranker is not None else "none",
        config.query_transform.kind if config.query_transform is not None else "none",
    ]
    return "retrieval:" + "/".join(parts)


def features(config, done: set[tuple[str, ...]], questions: int) -> dict[str, float]:
    """What evaluating ``config`` on ``questions`` adds, given the units ``done``: counts per cost kind (a new
    retrieval counts its questions, as does the answer every configuration makes)."""
    out: dict[str, float] = {}
    for unit in shared_units(config) - done:
        kind, n = (retrieval_kind(config), float(questions)) if unit[0] == "retrieval" else (unit[0], 1.0)
        out[kind] = out.get(kind, 0.0) + n
    out["answer"] = float(questions)
    return out


class CostModel:
    """Seconds per cost kind, fitted on evaluated trials' (features, seconds)."""

    def __init__(self, observed: list[tuple[dict[str, float], float]]) -> None:
        self.weights: dict[str, float] = {}
        rows = [(f, s) for f, s in observed if f and s > 0 and math.isfinite(s)]
        kinds = sorted({k for f, _ in rows for k in f})
        if not rows or len(rows) < len(kinds):  # fewer trials than unknowns: no fit yet
            return
        import numpy as np
        from scipy.optimize import nnls

        a = np.array([[f.get(k, 0.0) for k in kinds] for f, _ in rows])
        b = np.array([s for _, s in rows])
        w, _ = nnls(a, b)
        self.weights = dict(zip(kinds, (float(x) for x in w)))

    @staticmethod
    def proxy(feats: dict[str, float]) -> float:
        """Before a fit: the shared units a candidate adds (each costs more than a few answers)."""
        return sum(n for k, n in feats.items() if k in ("chunk", "index", "graph")) + 0.01 * feats.get(
            next((k for k in feats if k.startswith("retrieval:")), ""), 0.0
        )

    def predict(self, feats: dict[str, float]) -> float | None:
        """Predicted seconds (a kind never seen costs the mean of the seen kinds of its family); None untrained."""
        if not self.weights:
            return None
        total = 0.0
        for kind, n in feats.items():
            if kind in self.weights:
                total += self.weights[kind] * n
                continue
            family = [w for k, w in self.weights.items() if k.split(":")[0] == kind.split(":")[0]]
            total += (sum(family) / len(family) if family else 0.0) * n
        return total
