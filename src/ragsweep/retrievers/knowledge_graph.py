"""Knowledge-graph retrieval over a LlamaIndex property graph store, returning source chunks.

The query's entities (``graph_keywords.match_entities``) are the entry points; paths are followed
hop by hop up to ``path_depth`` with the store's ``get_triplets`` (both the embedded store and
Neo4j answer it the same way: triplets whose subject or object is one of the given entities),
triplets are ranked and the first ``max_triplets`` kept (HyPA-RAG's knowledge sequence length,
Kalra et al. 2024, arXiv:2409.09046), and the chunks they were extracted from are returned, so the
span-based retrieval metrics and BERTScore apply as to any other retriever. Each chunk carries its
triplets in ``metadata["kg_triplets"]``.

Ranking is deterministic, so every store gives the same result for the same graph: a triplet
reached at hop h touching m query entities weighs (1 + m) / h; triplets rank by hop, then by m,
then by text; a chunk scores the sum of its kept triplets' weights, ties in corpus order.
"""

from __future__ import annotations

from dataclasses import dataclass

from llama_index.core.indices.property_graph import BasePGRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from ragsweep.graphs.build import SOURCE_CHUNKS
from ragsweep.retrievers.graph_keywords import EntityVocabulary, match_entities

TRIPLETS_KEY = "kg_triplets"


@dataclass(frozen=True)
class GraphSearch:
    """How a ``GraphChunkRetriever`` searches its graph and what its chunks carry: one retrieval setting,
    kept together because every graph retriever over the same chunks and store differs only in these.

    ``max_keywords`` query entities, paths of ``path_depth`` hops, the first ``max_triplets`` triplets,
    ``similarity_top_k`` chunks; with ``triplets_in_context`` the triplets are part of what a generator
    reads (an LLM), else only of the record."""

    max_keywords: int
    path_depth: int
    max_triplets: int
    similarity_top_k: int
    triplets_in_context: bool = False


class GraphChunkRetriever(BasePGRetriever):
    """A property-graph sub-retriever that answers with the triplets' source chunks.

    ``namespace`` prefixes entity ids in a store shared by several graphs (Neo4j); ``chunks`` maps
    chunk ids to ragsweep chunks (document, offsets, text); ``search`` is how it searches.
    """

    def __init__(
        self,
        graph_store,
        vocabulary: EntityVocabulary,
        chunks: dict,
        search: GraphSearch,
        *,
        namespace: str = "",
    ) -> None:
        super().__init__(graph_store=graph_store, include_text=False)
        self._vocab = vocabulary
        self._chunks = chunks
        self._order = {cid: i for i, cid in enumerate(chunks)}
        self._max_keywords = search.max_keywords
        self._depth = search.path_depth
        self._max_triplets = search.max_triplets
        self._top_k = search.similarity_top_k
        self._ns = namespace
        self._in_context = search.triplets_in_context

    def keywords(self, query: str) -> list[str]:
        return match_entities(query, self._vocab, self._max_keywords)

    def triplets(self, query: str) -> list[tuple[float, str, str, str, list[str]]]:
        """(weight, subject, relation, object, source chunk ids) of the kept triplets, best first."""
        keys = set(self.keywords(query))
        found: dict[tuple[str, str, str], tuple[int, list[str]]] = {}
        seen, frontier = set(keys), sorted(keys)
        for hop in range(1, self._depth + 1):
            if not frontier:
                break
            nxt: set[str] = set()
            for subj, rel, obj in self._graph_store.get_triplets(ids=[self._ns + e for e in frontier]):
                s, o = self._strip(subj.id), self._strip(obj.id)
                found.setdefault((s, rel.label, o), (hop, list(rel.properties.get(SOURCE_CHUNKS) or [])))
                nxt.update(e for e in (s, o) if e not in seen)
            seen |= nxt
            frontier = sorted(nxt)
        ranked = []
        for (s, r, o), (hop, sources) in found.items():
            m = (s in keys) + (o in keys)
            ranked.append(((hop, -m, s, r, o), (1 + m) / hop, sources))
        ranked.sort(key=lambda x: x[0])
        return [(w, k[2], k[3], k[4], src) for k, w, src in ranked[: self._max_triplets]]

    def _strip(self, entity_id: str) -> str:
        return entity_id[len(self._ns) :] if self._ns and entity_id.startswith(self._ns) else entity_id

    def retrieve_from_graph(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        scores: dict[str, float] = {}
        facts: dict[str, list[str]] = {}
        for weight, s, r, o, sources in self.triplets(query_bundle.query_str):
            for cid in sources:
                if cid in self._chunks:
                    scores[cid] = scores.get(cid, 0.0) + weight
                    facts.setdefault(cid, []).append(f"{s} -[{r}]-> {o}")
        best = sorted(scores, key=lambda c: (-scores[c], self._order[c]))[: self._top_k]
        out = []
        for cid in best:
            node = self._chunks[cid].to_node()
            node.metadata[TRIPLETS_KEY] = facts[cid]
            node.excluded_embed_metadata_keys.append(TRIPLETS_KEY)
            if not self._in_context:
                node.excluded_llm_metadata_keys.append(TRIPLETS_KEY)
            out.append(NodeWithScore(node=node, score=scores[cid]))
        return out

    async def aretrieve_from_graph(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.retrieve_from_graph(query_bundle)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # the chunks are the result: no LlamaIndex source-text step
        return self.retrieve_from_graph(query_bundle)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.retrieve_from_graph(query_bundle)
