"""Exact cosine search over a Chroma collection's own vectors.

Chroma answers a query from its HNSW graph, an approximate search whose results depend on how the graph was
linked, and Chroma 1.5's Rust core links it on several threads whatever ``hnsw:num_threads`` says: two cold builds
of one contractnli x4 collection (4,400 chunks) gave a different top 10 for 4 of 70,344 (configuration, question)
pairs, a chunk scoring 0.659 missed by one build and ranked first by the other (BENCHMARKS "Cost against corpus
size"). A sweep compares configurations, and a result that moves with a build's thread timing is noise no
configuration made. So a collection the sweep built (or an export holds) is searched exactly: its vectors read
once into one float32 matrix, rows scaled to unit length as Chroma's cosine space stores them, and each query's
cosine distance ``1 - dot`` computed in float32 by numpy's own sum of products (``einsum``), the similarity
``exp(-distance)`` as LlamaIndex turns Chroma's distance into a score. Not BLAS: OpenBLAS's matrix-vector product
computes the last rows of each thread's share with another kernel, so with 7,644 rows 4 similarities moved in their
last bit between one thread (a Ray worker) and two (a local run), and the two-node Ray run of contractnli x8 gave
other sources than the local one; ``einsum`` takes one path for every row, whatever its position or the threads.
Equal scores are ordered by node id. The collection stays a Chroma collection, and its HNSW graph is what a user's
own Chroma queries use; the sweep's results no longer depend on it.

The matrix is the collection's vectors held once (384 float32 per chunk for MiniLM: 11.7 MB for contractnli x8's
largest collection, 7,644 chunks); a query costs one pass over it (0.43 ms there, against 0.09 ms for BLAS on two
threads).
"""

from __future__ import annotations

import math

import numpy as np


class ExactVectors:
    """A collection's ids and unit-length float32 vectors, searched exhaustively."""

    def __init__(self, ids: list[str], vectors) -> None:
        matrix = np.array(vectors, dtype=np.float32, copy=True).reshape(len(ids), -1)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix /= np.where(norms > 0, norms, np.float32(1.0))
        self.ids = list(ids)
        self.matrix = np.ascontiguousarray(matrix)

    @classmethod
    def of(cls, collection) -> ExactVectors:
        """Every vector of a Chroma ``collection``, read once."""
        got = collection.get(include=["embeddings"])
        embeddings = got["embeddings"]
        return cls(got["ids"], embeddings if embeddings is not None and len(embeddings) else np.empty((0, 0)))

    def __len__(self) -> int:
        return len(self.ids)

    def top(self, query, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest (id, similarity), best first, equal similarities by id."""
        if k <= 0 or not self.ids:
            return []
        q = np.asarray(query, dtype=np.float32).ravel()
        norm = np.linalg.norm(q)
        if norm > 0:
            q = q / norm
        # float32, as Chroma's cosine distance; einsum, not BLAS: the same bits for a row wherever it is and whatever
        # the thread count (module docstring)
        distance = np.float32(1.0) - np.einsum("ij,j->i", self.matrix, q)
        k = min(k, len(self.ids))
        cut = np.partition(distance, k - 1)[k - 1]
        near = np.flatnonzero(distance <= cut)  # every vector tied at the cut, so ties are ordered by id
        order = sorted(near.tolist(), key=lambda i: (distance[i], self.ids[i]))[:k]
        return [(self.ids[i], math.exp(-float(distance[i]))) for i in order]
