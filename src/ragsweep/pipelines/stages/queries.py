"""Embed the questions: once per (model, question), one at a time as a deployed engine would, timed."""

from __future__ import annotations

from ragsweep.config import EmbeddingSpec
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.stats import Timer


def embed_questions(ctx: StageContext, embedding: EmbeddingSpec, questions: list[str]) -> dict[str, float]:
    """Make sure every question has its vector; return each one's embedding latency in ms (stored with the
    vector when first computed, so later runs report the same figure)."""
    with Timer(ctx.stats, "embedding_queries"):
        return ctx.models(embedding).timed_query_embeddings(questions)
