"""What a candidate would cost to evaluate, given what the search has computed already.

A configuration needs its splitter's chunks, an index per (splitter, embedding), a knowledge graph per
splitter for graph retrievers, and an answer per question; the first three are shared (the plan of
stages computes each once), so a configuration that reuses a computed splitter and index costs only
its answers. ``units`` lists what a candidate would add; ``CostModel`` learns seconds per unit from the
trials so far by non-negative least squares over what each of them added (Lawson & Hanson 1974,
"Solving Least Squares Problems", ch. 23), so the prediction is in this machine's seconds. Snoek et
al. 2012 ("Practical Bayesian Optimization of Machine Learning Algorithms", NeurIPS) weigh expected
improvement by predicted cost the same way; here the cheapest of a few proposals is evaluated.
"""

from __future__ import annotations

import math

GRAPH_KINDS = ("knowledge_graph", "hybrid_kg")


def shared_units(config) -> set[tuple[str, ...]]:
    """The shared units a configuration needs (chunks, index, graph), as keys."""
    out = {("chunk", config.chunk_key)}
    if config.embedding is not None and config.retriever.needs_embedding:
        out.add(("index", config.chunk_key, config.embedding.label()))
    if config.retriever.kind in GRAPH_KINDS:
        out.add(("graph", config.chunk_key))
    return out


def answer_kind(config) -> str:
    """What an answer's cost depends on: the retriever kind, reranker and transform."""
    parts = [config.retriever.kind, config.reranker.kind if config.reranker is not None else "none",
             config.query_transform.kind if config.query_transform is not None else "none"]
    return "answer:" + "/".join(parts)


def features(config, done: set[tuple[str, ...]], questions: int) -> dict[str, float]:
    """What evaluating ``config`` on ``questions`` adds, given the units ``done``: counts per cost kind."""
    out: dict[str, float] = {}
    for unit in shared_units(config) - done:
        out[unit[0]] = out.get(unit[0], 0.0) + 1.0
    out[answer_kind(config)] = float(questions)
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
        return sum(n for k, n in feats.items() if not k.startswith("answer:"))

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
