"""The knowledge graphs of one chunk set as retrievers: built (or reopened) on first use, served from the
store each retriever names, queried once per question at the largest top_k.

One graph per extractor serves every retriever over these chunks (knowledge_graph and hybrid_kg,
any store, any keyword/depth setting); one memoised retriever per distinct retrieval setting.
A failure (an empty graph, an extractor error) is remembered, so each configuration that needs
that graph is recorded as failed with the same reason without building it again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsweep.cache_dir import CacheDir
from ragsweep.errors import RagsweepError, short_reason
from ragsweep.graphs.extractors import extractor_identity, make_extractor
from ragsweep.graphs.neo4j_store import Neo4jConnection


def _remembered(memo: dict, key, make, failure: str):
    """``memo[key]``, made on first use; a failure is remembered (as a RagsweepError prefixed with
    ``failure``) and raised again for every later caller. Budget and fatal LLM errors stop the stage
    instead and are not remembered: a later run with more budget makes it."""
    if key not in memo:
        from ragsweep.llm.budget import BudgetExhausted
        from ragsweep.llm.engine import LLMFatalError

        try:
            memo[key] = make()
        except (BudgetExhausted, LLMFatalError):
            raise
        except RagsweepError as exc:
            memo[key] = exc
        except Exception as exc:  # noqa: BLE001 - every configuration on this graph fails alike
            memo[key] = RagsweepError(f"{failure}: {short_reason(exc)}")
    got = memo[key]
    if isinstance(got, Exception):
        raise got
    return got


@dataclass(frozen=True)
class GraphChunks:
    """The chunks graphs are built over, with what names them: ``key`` (the splitter's chunk key, in labels
    and messages) and the corpus fingerprint and chunk digest the graphs' cache keys are made of."""

    key: str
    chunks: list
    corpus_fingerprint: str
    digest: str


@dataclass(frozen=True)
class GraphServices:
    """What building and serving graphs uses of the run: the cache root, the run's stats (its ``graphs``)
    and progress bars, the LLM of LLM extractors and the Neo4j connection (None where none is used)."""

    cache_root: Path
    stats: Any
    bars: Any
    llm: Any = None
    neo4j: Neo4jConnection | None = None


class ChunkGraphs:
    """Graphs and memoised graph retrievers over one splitter's chunks."""

    def __init__(self, *, spec, chunks: GraphChunks, k_max: int, services: GraphServices) -> None:
        self.spec, self.chunk_key, self.chunks, self.k_max = spec, chunks.key, chunks.chunks, k_max
        self.corpus_fingerprint, self.chunk_digest = chunks.corpus_fingerprint, chunks.digest
        self.cache_root, self.stats, self.bars = services.cache_root, services.stats, services.bars
        self.llm, self.neo4j = services.llm, services.neo4j
        self._graphs: dict[str, object] = {}  # graph key -> BuiltGraph | Exception
        self._served: dict[tuple, object] = {}  # (graph key, store) -> (store, vocabulary, namespace) | Exception
        self._shared: dict[tuple, object] = {}  # retrieval setting -> SharedResults
        self._by_id = {c.node_id: c for c in self.chunks}

    def stores(self) -> list:
        """The graph retrievers' shared results (``memo.SharedResults``), one per retrieval setting."""
        return list(self._shared.values())

    def shared(self, rspec):
        """SharedResults of the graph retriever ``rspec`` describes; raises the graph's failure."""
        from ragsweep.retrievers.knowledge_graph import GraphChunkRetriever, GraphSearch
        from ragsweep.retrievers.memo import SharedResults

        key = (
            rspec.extractor,
            rspec.max_triplets_per_chunk,
            rspec.store,
            rspec.max_keywords,
            rspec.path_depth,
            rspec.max_triplets,
        )
        if key not in self._shared:
            store, vocab, ns = self._serve(rspec)
            search = GraphSearch(
                max_keywords=rspec.max_keywords,
                path_depth=rspec.path_depth,
                max_triplets=rspec.max_triplets,
                similarity_top_k=self.k_max,
                triplets_in_context=self.spec.generator.calls_llm,
            )
            base = GraphChunkRetriever(store, vocab, self._by_id, search, namespace=ns)
            self._shared[key] = SharedResults(base, self.k_max)
        return self._shared[key]

    def graph(self, rspec):
        from ragsweep.graphs.build import graph_key

        key = graph_key(self.corpus_fingerprint, self.chunk_digest, extractor_identity(rspec, self.spec.llm))
        return _remembered(
            self._graphs,
            key,
            lambda: self._build(rspec, key),
            f"building the knowledge graph of {self.chunk_key} ({rspec.extractor}) failed",
        )

    def _build(self, rspec, key: str):
        from ragsweep.graphs.build import build_or_load
        from ragsweep.llm.usage import llm_scope

        label = self._label(rspec)
        bar = self.bars.add(f"graph {label}", len(self.chunks))
        workers = self.spec.llm.concurrency if self.spec.llm else 8
        with llm_scope(None, stage="graph_extraction", config_id=None):
            built = build_or_load(
                CacheDir(self.cache_root).graph(key),
                key,
                self.chunks,
                lambda: make_extractor(rspec, self.llm, workers),
                lambda n: self.bars.advance(bar, n),
            )
        self.bars.complete(bar)
        self.stats.graphs[label] = {
            "key": key,
            "entities": built.entities,
            "relations": built.relations,
            "built": built.built,
            "seconds": round(built.seconds, 3),
        }
        if built.empty:
            raise RagsweepError(
                f"the knowledge graph of {self.chunk_key} ({rspec.extractor}) has no triplets: the "
                "extractor found no entities and relations in these chunks; use another extractor "
                "or splitter, or leave knowledge-graph retrievers out for this corpus"
            )
        return built

    def _label(self, rspec) -> str:
        """The graph's name in progress bars and the manifest: splitter/extractor (+ its limit if not default)."""
        default = type(rspec).model_fields["max_triplets_per_chunk"].default
        limit = f"-t{rspec.max_triplets_per_chunk}" if rspec.max_triplets_per_chunk != default else ""
        return f"{self.chunk_key}/{rspec.extractor}{limit}"

    def _serve(self, rspec):
        from ragsweep.graphs.build import entity_ids
        from ragsweep.retrievers.graph_keywords import EntityVocabulary

        built = self.graph(rspec)
        if rspec.store == "simple":
            return _remembered(
                self._served,
                (built.key, "simple"),
                lambda: (built.store, EntityVocabulary.of(entity_ids(built.store)), ""),
                f"serving the knowledge graph of {self.chunk_key} failed",
            )
        return _remembered(
            self._served,
            (built.key, "neo4j"),
            lambda: self._serve_neo4j(built, rspec),
            f"loading the knowledge graph of {self.chunk_key} into Neo4j failed",
        )

    def _serve_neo4j(self, built, rspec):
        from ragsweep.graphs import neo4j_store
        from ragsweep.retrievers.graph_keywords import EntityVocabulary

        assert self.neo4j is not None
        store = self.neo4j.store()
        ns = neo4j_store.namespace(built.key)
        label = self._label(rspec)
        n_items = len(built.store.graph.nodes) + len(built.store.graph.relations)
        bar = self.bars.add(f"neo4j {label}", n_items)
        loaded, seconds = neo4j_store.load(
            store, ns, built.store, built.entities, built.relations, progress=lambda n: self.bars.advance(bar, n)
        )
        self.bars.complete(bar)
        self.stats.graphs[label].update({"neo4j_loaded": loaded, "neo4j_seconds": round(seconds, 3)})
        return store, EntityVocabulary.of(neo4j_store.entity_ids(store, ns)), ns
