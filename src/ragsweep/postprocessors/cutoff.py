"""Similarity cutoff: drop retrieved nodes that score too low (LlamaIndex ``SimilarityPostprocessor``).

Scores are on each retriever's own scale. ``absolute`` on a plain vector retriever compares cosine
similarity: llama-index-vector-stores-chroma reports exp(-cosine distance), so the cosine is recovered
as 1 + ln(score). ``relative`` keeps the nodes scoring at least ``cutoff`` x the question's top score,
which means the same on any positive scale (BM25, RRF, reranker scores). Nodes without a score are
dropped, as LlamaIndex does; an empty context is a legitimate outcome.
"""

from __future__ import annotations

import math

from ragsweep.postprocessors.base import Shaped


def cosine_from_chroma(score: float) -> float:
    """Chroma's similarity exp(-(1 - cos)) back to the cosine (a score of 0 is the lowest, -1)."""
    return 1.0 + math.log(score) if score > 0 else -1.0


def _scored(config, nodes: list) -> list:
    """The nodes with the score the cutoff compares (copies; the originals keep theirs)."""
    from llama_index.core.schema import NodeWithScore

    if config.retriever.searches == ("vector",) and config.reranker is None and config.query_transform is None:
        return [
            NodeWithScore(node=n.node, score=None if n.score is None else cosine_from_chroma(float(n.score)))
            for n in nodes
        ]
    return [NodeWithScore(node=n.node, score=n.score) for n in nodes]


def apply(spec, config, nodes: list, dataset) -> Shaped:
    from llama_index.core.postprocessor import SimilarityPostprocessor

    info: dict = {"mode": spec.mode}
    if spec.mode == "absolute":
        threshold = spec.cutoff
        scored = _scored(config, nodes)
    else:
        scored = [n for n in nodes]
        top = max((float(n.score) for n in nodes if n.score is not None), default=None)
        if top is None or top <= 0:  # a share of a non-positive top score means nothing: keep what there is
            info["skipped"] = "no positive top score"
            return Shaped(list(nodes), list(nodes), {"postprocess": info})
        threshold = spec.cutoff * top
    info["threshold"] = threshold
    kept_ids = {id(n.node) for n in SimilarityPostprocessor(similarity_cutoff=threshold).postprocess_nodes(scored)}
    kept = [n for n in nodes if id(n.node) in kept_ids]
    info["dropped"] = len(nodes) - len(kept)
    return Shaped(kept, kept, {"postprocess": info})
