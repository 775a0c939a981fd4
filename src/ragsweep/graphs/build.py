"""Build a LlamaIndex PropertyGraphIndex over a splitter's chunks, once per corpus, splitter and extractor.

Extraction (the slow part: an LLM call per chunk, or the offline legal patterns) runs first over
every chunk; then each relation is given the list of all chunks it was extracted from
(``source_chunks``), so a triplet stated in three chunks leads back to all three. LlamaIndex keeps
one ``triplet_source_id`` per relation and the stores disagree on which one (the embedded store
keeps the first, Neo4j the last); giving every duplicate the same properties makes both hold the
same graph. The PropertyGraphIndex then inserts the nodes into a SimplePropertyGraphStore, which
is persisted in the cache directory (``graphs/<key>.json``) and reopened by later runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from llama_index.core.schema import TransformComponent

SOURCE_CHUNKS = "source_chunks"
BATCH = 64  # chunks per extraction batch (the progress bar's step)


@dataclass
class BuiltGraph:
    """A persisted graph: its store, its size, and whether this run built it."""

    key: str
    store: object  # SimplePropertyGraphStore
    entities: int
    relations: int
    built: bool
    seconds: float

    @property
    def empty(self) -> bool:
        return self.relations == 0


def graph_key(corpus_fingerprint: str, chunk_digest: str, extractor_identity: dict) -> str:
    """What determines the extracted graph; LlamaIndex's version too (its extractor prompts, parser and
    insertion make the graph)."""
    from importlib.metadata import version

    from ragsweep import __version__

    raw = json.dumps(
        [corpus_fingerprint, chunk_digest, extractor_identity, __version__, version("llama-index-core")], sort_keys=True
    )
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


class AlreadyExtracted(TransformComponent):
    """Stands in the PropertyGraphIndex's extractor slot: the nodes already carry their triplets.
    (An empty extractor list would make LlamaIndex fall back to its default LLM extractor.)"""

    def __call__(self, nodes, **kwargs):
        return nodes

    async def acall(self, nodes, **kwargs):
        return nodes


def attach_sources(nodes) -> None:
    """Give every copy of a relation the chunks it came from (in chunk order) and the first as
    LlamaIndex's ``triplet_source_id``; entity properties are dropped for the same reason."""
    from llama_index.core.graph_stores.types import KG_NODES_KEY, KG_RELATIONS_KEY, TRIPLET_SOURCE_KEY

    sources: dict[tuple[str, str, str], list[str]] = {}
    for node in nodes:
        for rel in node.metadata.get(KG_RELATIONS_KEY, []):
            ids = sources.setdefault((rel.source_id, rel.label, rel.target_id), [])
            if not ids or ids[-1] != node.id_:
                ids.append(node.id_)
    for node in nodes:
        for rel in node.metadata.get(KG_RELATIONS_KEY, []):
            ids = sources[(rel.source_id, rel.label, rel.target_id)]
            rel.properties = {SOURCE_CHUNKS: list(ids), TRIPLET_SOURCE_KEY: ids[0]}
        for ent in node.metadata.get(KG_NODES_KEY, []):
            ent.properties = {}


def extract(chunks, extractor, progress=None) -> list:
    """TextNodes of ``chunks`` carrying their extracted entities and relations."""
    from llama_index.core.ingestion import run_transformations

    nodes = [c.to_node() for c in chunks]
    out: list = []
    for i in range(0, len(nodes), BATCH):
        out.extend(run_transformations(nodes[i : i + BATCH], [extractor]))
        if progress is not None:
            progress(len(nodes[i : i + BATCH]))
    return out


def build_or_load(path: Path, key: str, chunks, make_extractor, progress=None) -> BuiltGraph:
    """Reopen the graph persisted at ``path``, or extract and build it there (written atomically)."""
    from llama_index.core.graph_stores import SimplePropertyGraphStore

    t0 = time.perf_counter()
    if path.is_file():
        try:
            store = SimplePropertyGraphStore.from_persist_path(str(path))
            return _built(key, store, False, time.perf_counter() - t0)
        except (OSError, ValueError, KeyError):
            pass  # unreadable: rebuild
    from llama_index.core import PropertyGraphIndex

    nodes = extract(chunks, make_extractor(), progress)
    attach_sources(nodes)
    store = SimplePropertyGraphStore()
    PropertyGraphIndex(
        nodes=nodes,
        kg_extractors=[AlreadyExtracted()],
        property_graph_store=store,
        embed_kg_nodes=False,
        use_async=False,
        show_progress=False,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    store.persist(str(tmp))
    os.replace(tmp, path)
    return _built(key, store, True, time.perf_counter() - t0)


def _built(key: str, store, built: bool, seconds: float) -> BuiltGraph:
    from llama_index.core.graph_stores.types import EntityNode

    entities = sum(1 for n in store.graph.nodes.values() if isinstance(n, EntityNode))
    return BuiltGraph(key, store, entities, len(store.graph.triplets), built, seconds)


def entity_ids(store) -> list[str]:
    """Every entity id of an embedded graph, sorted (the vocabulary queries are matched against)."""
    from llama_index.core.graph_stores.types import EntityNode

    return sorted(n.id for n in store.graph.nodes.values() if isinstance(n, EntityNode))
