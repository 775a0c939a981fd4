"""Serve an extracted graph from a Neo4j server through LlamaIndex's Neo4jPropertyGraphStore.

Neo4j Community holds one user database, so the graphs of several (corpus, splitter, extractor)
keys live side by side: every node id carries the graph's namespace (``g<key>:``), and a
``RagsweepGraph`` marker node, written last, records that a graph was loaded completely. A graph
is copied from the embedded store it was built in, so both serve the same extracted graph; a
missing or half-loaded graph (a killed run) is deleted and loaded again.
"""

from __future__ import annotations

import os
import time

from ragsweep.errors import RagsweepError
from ragsweep.redact import redact_url

BATCH = 2000  # nodes or relations per write transaction


def namespace(key: str) -> str:
    return f"g{key[:16]}:"


def credentials(spec) -> tuple[str, str]:
    """User and password from the environment variables the spec names (never from the spec)."""
    values = []
    for field, name in (("username_env", spec.username_env), ("password_env", spec.password_env)):
        value = os.environ.get(name)
        if not value:
            raise RagsweepError(
                f'neo4j.{field}: ${name} is not set; export it (for the local server: eval "$(scripts/neo4j.sh env)")'
            )
        values.append(value)
    return values[0], values[1]


def preflight(spec) -> None:
    """Stop at start-up, with one line, when the server is unreachable, refuses the credentials,
    or lacks APOC (LlamaIndex's store needs ``apoc.meta.data`` and ``apoc.merge.relationship``)."""
    import neo4j
    from neo4j.exceptions import AuthError, ClientError, Neo4jError, ServiceUnavailable

    user, password = credentials(spec)
    try:
        with neo4j.GraphDatabase.driver(spec.url, auth=(user, password), connection_timeout=spec.timeout) as driver:
            driver.verify_connectivity()
            try:
                driver.execute_query("RETURN apoc.version() AS v", database_=spec.database)
            except ClientError as exc:
                if "apoc" in str(exc.message or "").lower() or "Unknown function" in str(exc):
                    raise RagsweepError(
                        f"neo4j: the server at {redact_url(spec.url)} has no APOC plugin (apoc.version() is "
                        "unknown); install APOC core into its plugins folder "
                        "(scripts/neo4j.sh does)"
                    ) from None
                raise
    except AuthError:
        raise RagsweepError(
            f"neo4j: the server at {redact_url(spec.url)} refused the credentials in ${spec.username_env} / "
            f"${spec.password_env}; check them"
        ) from None
    except (ServiceUnavailable, OSError) as exc:
        raise RagsweepError(
            f"neo4j.url: cannot reach Neo4j at {redact_url(spec.url)} ({type(exc).__name__}); start it "
            "(scripts/neo4j.sh start) or fix the url"
        ) from None
    except Neo4jError as exc:
        raise RagsweepError(
            f"neo4j: the server at {redact_url(spec.url)} failed the start-up check: {exc.code or type(exc).__name__}"
        ) from None


def open_store(spec):
    """LlamaIndex's Neo4jPropertyGraphStore (call ``preflight`` first for a clear error).

    ``sanitize_query_output=False``: its sanitiser drops every list of 128 or more items, such as
    the source chunks of a triplet stated that often, which the embedded store keeps."""
    from llama_index.graph_stores.neo4j import Neo4jPropertyGraphStore

    user, password = credentials(spec)
    return Neo4jPropertyGraphStore(
        username=user,
        password=password,
        url=spec.url,
        database=spec.database,
        timeout=spec.timeout,
        refresh_schema=False,
        sanitize_query_output=False,
    )


def _marker(store, ns: str) -> dict | None:
    rows = store.structured_query(
        "MATCH (g:RagsweepGraph {id: $ns}) RETURN g.entities AS entities, g.relations AS relations",
        param_map={"ns": ns},
    )
    return rows[0] if rows else None


def load(store, ns: str, simple_store, entities: int, relations: int, progress=None) -> tuple[bool, float]:
    """Make the Neo4j store hold ``simple_store``'s graph under ``ns``; returns (loaded now, seconds)."""
    from llama_index.core.graph_stores.types import TRIPLET_SOURCE_KEY, ChunkNode, EntityNode, Relation

    t0 = time.perf_counter()
    if _marker(store, ns) == {"entities": entities, "relations": relations}:
        return False, time.perf_counter() - t0
    delete(store, ns)
    graph = simple_store.graph
    chunks, ents = [], []
    for node in graph.nodes.values():
        if isinstance(node, EntityNode):
            props = dict(node.properties)
            if TRIPLET_SOURCE_KEY in props:
                props[TRIPLET_SOURCE_KEY] = ns + props[TRIPLET_SOURCE_KEY]
            ents.append(EntityNode(name=ns + node.id, label=node.label, properties=props))
        elif isinstance(node, ChunkNode):
            chunks.append(
                ChunkNode(
                    text=node.text,
                    id_=ns + node.id,
                    label=node.label,
                    properties={k: v for k, v in node.properties.items() if k != "_node_content"},
                )
            )
    rels = [
        Relation(label=r.label, source_id=ns + r.source_id, target_id=ns + r.target_id, properties=dict(r.properties))
        for r in graph.relations.values()
    ]
    for items, upsert in ((chunks, store.upsert_nodes), (ents, store.upsert_nodes), (rels, store.upsert_relations)):
        for i in range(0, len(items), BATCH):
            upsert(items[i : i + BATCH])
            if progress is not None:
                progress(len(items[i : i + BATCH]))
    got = _counts(store, ns)
    if got != {"entities": entities, "relations": relations}:  # e.g. another process deleted it meanwhile
        raise RuntimeError(
            f"Neo4j holds {got} for graph {ns} after loading, expected {entities} entities and "
            f"{relations} relations; run again (was another sweep loading it at the same time?)"
        )
    store.structured_query(
        "MERGE (g:RagsweepGraph {id: $ns}) SET g.entities = $e, g.relations = $r",
        param_map={"ns": ns, "e": entities, "r": relations},
    )
    return True, time.perf_counter() - t0


def _counts(store, ns: str) -> dict:
    rows = store.structured_query(
        "MATCH (e:__Entity__) WHERE e.id STARTS WITH $ns WITH count(e) AS entities "
        "OPTIONAL MATCH (s:__Entity__)-[r]->(t:__Entity__) WHERE s.id STARTS WITH $ns AND t.id STARTS WITH $ns "
        "RETURN entities, count(r) AS relations",
        param_map={"ns": ns},
    )
    return {"entities": rows[0]["entities"], "relations": rows[0]["relations"]}


def delete(store, ns: str) -> None:
    """Remove one graph (its marker first, so a half-deleted graph is never taken as complete)."""
    store.structured_query("MATCH (g:RagsweepGraph {id: $ns}) DELETE g", param_map={"ns": ns})
    while True:
        rows = store.structured_query(
            "MATCH (n:__Node__) WHERE n.id STARTS WITH $ns WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS n",
            param_map={"ns": ns},
        )
        if not rows or rows[0]["n"] == 0:
            return


def entity_ids(store, ns: str) -> list[str]:
    """The graph's entity ids as stored in Neo4j, without the namespace."""
    rows = store.structured_query(
        "MATCH (e:__Entity__) WHERE e.id STARTS WITH $ns RETURN e.id AS id", param_map={"ns": ns}
    )
    return sorted(r["id"][len(ns) :] for r in rows)


class Neo4jConnection:
    """One Neo4jPropertyGraphStore per run, opened (after the start-up check) on first use."""

    def __init__(self, spec) -> None:
        self.spec = spec
        self._store = None

    def store(self):
        if self._store is None:
            preflight(self.spec)
            self._store = open_store(self.spec)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            import asyncio

            self._store.close()
            asyncio.run(self._store._async_driver.close())  # the store's close() leaves its async driver open
            self._store = None
