"""Graph: the knowledge graphs of one splitter's chunks (one per extractor), built once and cached, loaded
into Neo4j where a retriever says so, served as retrievers by ``retrievers.graph_index.ChunkGraphs``."""

from __future__ import annotations

from ragsweep.errors import short_reason
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.grid import Configuration
from ragsweep.pipelines.stages.chunk import chunk_digest


def uses_neo4j(configs: list[Configuration]) -> bool:
    return any(getattr(c.retriever, "store", None) == "neo4j" for c in configs)


def neo4j_connection(spec, configs: list[Configuration]):
    """The run's Neo4j connection when a configuration serves its graph from Neo4j, else None."""
    if not uses_neo4j(configs):
        return None
    from ragsweep.graphs.neo4j_store import Neo4jConnection

    return Neo4jConnection(spec.neo4j)


def chunk_graphs(ctx: StageContext, config: Configuration, chunks):
    """The graphs (built lazily, from the cache when there) and graph retrievers of ``config``'s chunks."""
    from ragsweep.retrievers.graph_index import ChunkGraphs, GraphChunks, GraphServices

    return ChunkGraphs(
        spec=ctx.spec,
        chunks=GraphChunks(config.chunk_key, chunks, ctx.dataset.corpus_fingerprint(), chunk_digest(chunks)),
        k_max=ctx.k_max,
        services=GraphServices(ctx.cache.root, ctx.stats, ctx.bars, llm=ctx.llm, neo4j=ctx.neo4j),
    )


def graph_file_keys(ctx: StageContext, configs: list[Configuration], chunks) -> list[str]:
    """The cache keys of the graphs ``configs`` need (``<cache>/graphs/<key>.json``)."""
    from ragsweep.graphs.build import graph_key
    from ragsweep.graphs.extractors import extractor_identity

    digest = chunk_digest(chunks)
    return list(
        dict.fromkeys(
            graph_key(ctx.dataset.corpus_fingerprint(), digest, extractor_identity(c.retriever, ctx.spec.llm))
            for c in configs
        )
    )


def build_graphs(graphs, configs: list[Configuration]) -> dict[str, str]:
    """Build (or reopen) and serve the graph of every graph retriever of ``configs``; returns, per
    retriever spec (JSON), why its graph failed, in the words a failed answer records."""
    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError

    failures = {}
    for key, rspec in {c.retriever.model_dump_json(): c.retriever for c in configs}.items():
        try:
            graphs.shared(rspec)
        except (BudgetExhausted, LLMFatalError):
            raise  # stops the stage: a later run with more budget builds it
        except Exception as exc:  # noqa: BLE001 - recorded against the configurations on this graph
            failures[key] = f"building the query engine failed: {short_reason(exc)}"
    return failures
