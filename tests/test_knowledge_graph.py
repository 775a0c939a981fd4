"""Knowledge-graph retrieval: query entity matching, graph building and caching, ranking, and
parity between the embedded store and a real Neo4j server."""

from __future__ import annotations

import pytest
from llama_index.core.graph_stores.types import KG_NODES_KEY, KG_RELATIONS_KEY, EntityNode, Relation
from llama_index.core.schema import QueryBundle, TransformComponent

from ragsweep.graphs.build import SOURCE_CHUNKS, attach_sources, build_or_load, entity_ids, graph_key
from ragsweep.retrievers.graph_keywords import EntityVocabulary, match_entities, tokens
from ragsweep.retrievers.knowledge_graph import TRIPLETS_KEY, GraphChunkRetriever, GraphSearch
from ragsweep.splitters.build import Chunk


# ----------------------------------------------------------------------------- entity matching
def test_tokens_fold_plurals_and_keep_section_numbers():
    assert tokens("The Parties' rights under § 5 and Article 17(3)") == (
        "the",
        "party",
        "right",
        "under",
        "§",
        "5",
        "and",
        "article",
        "17(3)",
    )
    assert tokens("process access") == ("process", "access")  # -ss is not a plural


def test_match_entities_longest_first_without_overlap():
    vocab = EntityVocabulary.of(["personal data", "data", "personal data breach", "controller", "§ 5"])
    got = match_entities("Must the controller report a personal data breach under § 5?", vocab, 10)
    assert got == ["personal data breach", "§ 5", "controller"]  # longest first, then position
    assert "personal data" not in got and "data" not in got  # covered by the longer match


def test_match_entities_caps_keywords_and_groups_plural_variants():
    vocab = EntityVocabulary.of(["right", "rights", "tenant", "landlord", "deposit"])
    got = match_entities("What rights does a tenant have against the landlord over the deposit?", vocab, 10)
    assert got[:2] == ["right", "rights"]  # both spellings are entry points
    assert set(got) == {"right", "rights", "tenant", "landlord", "deposit"}
    assert match_entities("What rights does a tenant have against the landlord?", vocab, 2) == ["right", "rights"]


def test_match_entities_no_match():
    vocab = EntityVocabulary.of(["controller"])
    assert match_entities("What is the weather like?", vocab, 5) == []
    assert match_entities("", vocab, 5) == []
    assert match_entities("controller", EntityVocabulary.of([]), 5) == []


# ----------------------------------------------------------------------------- a graph written by hand
class ScriptedExtractor(TransformComponent):
    """Extracts the triplets a test gives per chunk id (so graphs are exactly known)."""

    triplets: dict = {}

    def __call__(self, nodes, **kwargs):
        for node in nodes:
            ents, rels = {}, []
            for s, r, o in self.triplets.get(node.id_, []):
                ents[s] = EntityNode(name=s, label="ENTITY")
                ents[o] = EntityNode(name=o, label="ENTITY")
                rels.append(Relation(label=r, source_id=s, target_id=o))
            node.metadata[KG_NODES_KEY] = list(ents.values())
            node.metadata[KG_RELATIONS_KEY] = rels
        return nodes


CHUNKS = [
    Chunk("c0", "lease", 0, 40, "The tenant shall pay the deposit to the landlord."),
    Chunk("c1", "lease", 40, 80, "The landlord must return the deposit within 14 days."),
    Chunk("c2", "lease", 80, 120, "The deposit is held in an escrow account."),
    Chunk("c3", "policy", 0, 30, "The controller keeps a register."),
]
TRIPLETS = {
    "c0": [("tenant", "SHALL_PAY", "deposit")],
    "c1": [("landlord", "MUST_RETURN", "deposit")],
    "c2": [("deposit", "HELD_IN", "escrow account"), ("tenant", "SHALL_PAY", "deposit")],
    "c3": [("controller", "KEEPS", "register")],
}


def _extractor(triplets=TRIPLETS):
    return lambda: ScriptedExtractor(triplets=triplets)


def _retriever(store, vocab_ids=None, namespace="", **kw):
    params = {"max_keywords": 10, "path_depth": 1, "max_triplets": 30, "similarity_top_k": 10}
    params.update(kw)
    chunks = {c.node_id: c for c in CHUNKS}
    vocab = EntityVocabulary.of(vocab_ids or entity_ids(store))
    return GraphChunkRetriever(store, vocab, chunks, GraphSearch(**params), namespace=namespace)


@pytest.fixture
def built(tmp_path):
    return build_or_load(tmp_path / "g.json", "k", CHUNKS, _extractor())


def test_build_counts_and_reload_from_cache(tmp_path):
    path = tmp_path / "graphs" / "g.json"
    first = build_or_load(path, "k", CHUNKS, _extractor())
    assert first.built and first.entities == 6 and first.relations == 4 and not first.empty
    calls = []
    again = build_or_load(path, "k", CHUNKS, lambda: calls.append(1))
    assert not again.built and calls == []  # the extractor is not even constructed
    assert (again.entities, again.relations) == (6, 4)
    assert sorted(map(str, again.store.graph.triplets)) == sorted(map(str, first.store.graph.triplets))


def test_unreadable_cache_file_is_rebuilt(tmp_path):
    path = tmp_path / "g.json"
    path.write_text("{not json")
    assert build_or_load(path, "k", CHUNKS, _extractor()).built


def test_a_triplet_stated_in_two_chunks_leads_to_both(built):
    rel = next(r for r in built.store.graph.relations.values() if r.label == "SHALL_PAY")
    assert rel.properties[SOURCE_CHUNKS] == ["c0", "c2"]


def test_attach_sources_gives_every_copy_the_same_properties():
    from llama_index.core.schema import TextNode

    nodes = [TextNode(id_=cid, text="x") for cid in ("a", "b")]
    for n in nodes:
        n.metadata[KG_NODES_KEY] = [EntityNode(name="s", properties={"x": n.id_})]
        n.metadata[KG_RELATIONS_KEY] = [Relation(label="R", source_id="s", target_id="o", properties={"x": n.id_})]
    attach_sources(nodes)
    props = [n.metadata[KG_RELATIONS_KEY][0].properties for n in nodes]
    assert props[0] == props[1] == {SOURCE_CHUNKS: ["a", "b"], "triplet_source_id": "a"}
    assert all(n.metadata[KG_NODES_KEY][0].properties == {} for n in nodes)


def test_graph_key_depends_on_chunks_and_extractor():
    a = graph_key("corpus", "digest", {"extractor": "legal_patterns"})
    assert a == graph_key("corpus", "digest", {"extractor": "legal_patterns"})
    assert a != graph_key("corpus", "digest2", {"extractor": "legal_patterns"})
    assert a != graph_key("corpus", "digest", {"extractor": "llm_simple"})


def test_empty_graph_is_flagged(tmp_path):
    got = build_or_load(tmp_path / "g.json", "k", CHUNKS, _extractor({}))
    assert got.empty and got.relations == 0


# ----------------------------------------------------------------------------- retrieval
def test_retrieves_source_chunks_ranked_with_triplets(built):
    r = _retriever(built.store)
    nodes = r.retrieve(QueryBundle("When must the landlord return the deposit?"))
    # hop 1 from {landlord, deposit}: MUST_RETURN touches both (weight 3), SHALL_PAY and HELD_IN one (2 each);
    # c2 holds two of them
    assert [(n.node.node_id, n.score) for n in nodes] == [("c2", 4.0), ("c1", 3.0), ("c0", 2.0)]
    c2 = nodes[0]
    assert sorted(c2.node.metadata[TRIPLETS_KEY]) == [
        "deposit -[HELD_IN]-> escrow account",
        "tenant -[SHALL_PAY]-> deposit",
    ]
    # offsets and document survive for span metrics
    assert (c2.node.metadata["doc_id"], c2.node.start_char_idx, c2.node.end_char_idx) == ("lease", 80, 120)
    # triplets are in the record, not in the text a non-LLM generator reads
    from llama_index.core.schema import MetadataMode

    assert "HELD_IN" not in c2.node.get_content(metadata_mode=MetadataMode.LLM)


def test_scores_order_and_ties_in_corpus_order(built):
    nodes = _retriever(built.store).retrieve(QueryBundle("Who holds the deposit?"))
    # only "deposit" matches: every triplet touching it weighs 2; c2 has two of them
    assert [(n.node.node_id, n.score) for n in nodes] == [("c2", 4.0), ("c0", 2.0), ("c1", 2.0)]


def test_top_k_and_max_triplets(built):
    assert len(_retriever(built.store, similarity_top_k=1).retrieve("Who holds the deposit?")) == 1
    r = _retriever(built.store, max_triplets=1)
    kept = r.triplets("Who holds the deposit?")
    assert len(kept) == 1


def test_path_depth_reaches_further(built):
    q = "What does the tenant pay?"
    one = {n.node.node_id for n in _retriever(built.store, path_depth=1).retrieve(q)}
    two = _retriever(built.store, path_depth=2).retrieve(q)
    assert one == {"c0", "c2"}
    assert {n.node.node_id for n in two} == {"c0", "c1", "c2"}  # tenant -> deposit -> landlord
    assert "c3" not in {n.node.node_id for n in two}  # not connected
    hops = {t[2]: t[0] for t in _retriever(built.store, path_depth=2).triplets(q)}
    assert hops["MUST_RETURN"] < hops["SHALL_PAY"]  # two hops away weighs less


def test_query_without_a_matching_entity_returns_nothing(built):
    assert _retriever(built.store).retrieve(QueryBundle("What is the weather like?")) == []
    # same length: first named
    assert _retriever(built.store, max_keywords=1).keywords("tenant and landlord") == ["tenant"]


def test_include_triplets_in_llm_context_when_asked(built):
    from llama_index.core.schema import MetadataMode

    chunks = {c.node_id: c for c in CHUNKS}
    search = GraphSearch(max_keywords=5, path_depth=1, max_triplets=10, similarity_top_k=3, triplets_in_context=True)
    r = GraphChunkRetriever(built.store, EntityVocabulary.of(entity_ids(built.store)), chunks, search)
    node = r.retrieve("Who holds the deposit?")[0].node
    assert "HELD_IN" in node.get_content(metadata_mode=MetadataMode.LLM)
    assert "HELD_IN" not in node.get_content(metadata_mode=MetadataMode.EMBED)


# ----------------------------------------------------------------------------- Neo4j (a real server)
QUERIES = [
    "When must the landlord return the deposit?",
    "Who holds the deposit?",
    "What does the tenant pay?",
    "What does the controller keep?",
    "What is the weather like?",
    "tenant landlord escrow account register",
]


@pytest.fixture
def neo4j_store(neo4j_server):
    from ragsweep.graphs.neo4j_store import open_store

    store = open_store(neo4j_server)
    yield store
    store.close()


@pytest.mark.neo4j
def test_neo4j_serves_the_same_graph_and_the_same_results(neo4j_store, built):
    from ragsweep.graphs import neo4j_store as n4

    ns = n4.namespace("test-parity-" + built.key)
    n4.delete(neo4j_store, ns)
    loaded, _ = n4.load(neo4j_store, ns, built.store, built.entities, built.relations)
    assert loaded
    assert n4.entity_ids(neo4j_store, ns) == entity_ids(built.store)
    for depth in (1, 2, 3):
        for q in QUERIES:
            simple = _retriever(built.store, path_depth=depth).retrieve(q)
            neo = _retriever(neo4j_store, n4.entity_ids(neo4j_store, ns), path_depth=depth, namespace=ns).retrieve(q)
            assert [(n.node.node_id, n.score, n.node.metadata[TRIPLETS_KEY]) for n in neo] == [
                (n.node.node_id, n.score, n.node.metadata[TRIPLETS_KEY]) for n in simple
            ], (depth, q)
    # loading again is a no-op (the marker says it is complete); a half-loaded graph is reloaded
    assert n4.load(neo4j_store, ns, built.store, built.entities, built.relations)[0] is False
    neo4j_store.structured_query("MATCH (g:RagsweepGraph {id: $ns}) DELETE g", param_map={"ns": ns})
    assert n4.load(neo4j_store, ns, built.store, built.entities, built.relations)[0] is True
    n4.delete(neo4j_store, ns)
    assert n4.entity_ids(neo4j_store, ns) == []


@pytest.mark.neo4j
def test_neo4j_graphs_live_side_by_side(neo4j_store, built, tmp_path):
    """Two graphs with the same entity names in one database do not mix."""
    from ragsweep.graphs import neo4j_store as n4

    other = build_or_load(tmp_path / "other.json", "k2", CHUNKS, _extractor({"c3": [("tenant", "OWES", "rent")]}))
    a, b = n4.namespace("side-a"), n4.namespace("side-b")
    for ns, g in ((a, built), (b, other)):
        n4.delete(neo4j_store, ns)
        n4.load(neo4j_store, ns, g.store, g.entities, g.relations)
    try:
        got_a = _retriever(neo4j_store, n4.entity_ids(neo4j_store, a), namespace=a).retrieve("the tenant")
        got_b = _retriever(neo4j_store, n4.entity_ids(neo4j_store, b), namespace=b).retrieve("the tenant")
        assert [n.node.node_id for n in got_a] == ["c0", "c2"]
        assert [(n.node.node_id, n.node.metadata[TRIPLETS_KEY]) for n in got_b] == [("c3", ["tenant -[OWES]-> rent"])]
    finally:
        n4.delete(neo4j_store, a)
        n4.delete(neo4j_store, b)


def test_unreachable_neo4j_is_one_clear_line(monkeypatch, get_free_port):
    from ragsweep.config import Neo4jSpec
    from ragsweep.errors import RagsweepError
    from ragsweep.graphs.neo4j_store import preflight

    monkeypatch.setenv("RS_TEST_NEO4J_USER", "neo4j")
    monkeypatch.setenv("RS_TEST_NEO4J_PASSWORD", "pw-not-shown")
    spec = Neo4jSpec(
        url=f"bolt://127.0.0.1:{get_free_port()}",
        username_env="RS_TEST_NEO4J_USER",
        password_env="RS_TEST_NEO4J_PASSWORD",
        timeout=3,
    )
    with pytest.raises(RagsweepError) as err:
        preflight(spec)
    msg = str(err.value)
    assert msg.startswith("neo4j.url: cannot reach Neo4j at bolt://127.0.0.1:") and "scripts/neo4j.sh start" in msg
    assert "\n" not in msg and "pw-not-shown" not in msg


def test_missing_neo4j_password_variable_is_named(monkeypatch):
    from ragsweep.config import Neo4jSpec
    from ragsweep.errors import RagsweepError
    from ragsweep.graphs.neo4j_store import preflight

    monkeypatch.delenv("RS_TEST_UNSET_PW", raising=False)
    monkeypatch.setenv("RS_TEST_NEO4J_USER", "neo4j")
    spec = Neo4jSpec(username_env="RS_TEST_NEO4J_USER", password_env="RS_TEST_UNSET_PW")
    with pytest.raises(RagsweepError, match=r"^neo4j.password_env: \$RS_TEST_UNSET_PW is not set"):
        preflight(spec)


@pytest.mark.neo4j
def test_wrong_neo4j_password_is_one_clear_line(neo4j_server, monkeypatch):
    from ragsweep.errors import RagsweepError
    from ragsweep.graphs.neo4j_store import preflight

    monkeypatch.setenv("RS_TEST_WRONG_PW", "definitely-wrong-pw")
    spec = neo4j_server.model_copy(update={"password_env": "RS_TEST_WRONG_PW"})
    with pytest.raises(RagsweepError) as err:
        preflight(spec)
    assert "refused the credentials in $NEO4J_USER / $RS_TEST_WRONG_PW" in str(err.value)
    assert "definitely-wrong-pw" not in str(err.value)


@pytest.mark.slow  # 24 s: a second Neo4j server for one error line; the served-graph tests run by default
@pytest.mark.neo4j
def test_neo4j_without_apoc_is_one_clear_line(neo4j_server, tmp_path, get_free_port, monkeypatch):
    """A second, real server started without the APOC plugin (same jars, its own data directory)."""
    import os
    import subprocess
    from pathlib import Path

    from ragsweep.errors import RagsweepError
    from ragsweep.graphs.neo4j_store import preflight

    root = Path(__file__).resolve().parents[1]
    jars = Path(os.environ.get("NEO4J_HOME_DIR", root / ".neo4j")) / "lib"
    if not jars.is_dir():
        pytest.skip(f"{jars}: the Neo4j jars of scripts/neo4j.sh are not here")
    home = tmp_path / "neo4j-no-apoc"
    home.mkdir()
    (home / "lib").symlink_to(jars)
    port = get_free_port()
    env = dict(
        os.environ, NEO4J_HOME_DIR=str(home), NEO4J_BOLT_PORT=str(port), NEO4J_APOC="0", NEO4J_PASSWORD="no-apoc-pw"
    )
    script = str(root / "scripts" / "neo4j.sh")
    started = subprocess.run([script, "start"], env=env, capture_output=True, text=True, timeout=180)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        monkeypatch.setenv("RS_TEST_NOAPOC_PW", "no-apoc-pw")
        spec = neo4j_server.model_copy(update={"url": f"bolt://127.0.0.1:{port}", "password_env": "RS_TEST_NOAPOC_PW"})
        with pytest.raises(RagsweepError) as err:
            preflight(spec)
        msg = str(err.value)
        assert msg.startswith(f"neo4j: the server at bolt://127.0.0.1:{port} has no APOC plugin") and "\n" not in msg
        assert "scripts/neo4j.sh" in msg
    finally:
        subprocess.run([script, "stop"], env=env, capture_output=True, timeout=120)


@pytest.mark.neo4j
def test_neo4j_keeps_long_source_lists(neo4j_store, tmp_path):
    """A triplet stated in 130 chunks leads back to all of them from Neo4j too (LlamaIndex's default output
    sanitiser drops lists of 128 or more items)."""
    from ragsweep.graphs import neo4j_store as n4

    chunks = [Chunk(f"m{i}", "long", i * 10, i * 10 + 9, f"clause {i}") for i in range(130)]
    triplets = {c.node_id: [("landlord", "MUST_REPAIR", "roof")] for c in chunks}
    g = build_or_load(tmp_path / "long.json", "long", chunks, _extractor(triplets))
    ns = n4.namespace("test-long-sources")
    n4.delete(neo4j_store, ns)
    n4.load(neo4j_store, ns, g.store, g.entities, g.relations)
    try:
        by_id = {c.node_id: c for c in chunks}
        search = GraphSearch(max_keywords=5, path_depth=1, max_triplets=10, similarity_top_k=200)
        simple = GraphChunkRetriever(g.store, EntityVocabulary.of(entity_ids(g.store)), by_id, search).retrieve("roof")
        neo = GraphChunkRetriever(
            neo4j_store, EntityVocabulary.of(n4.entity_ids(neo4j_store, ns)), by_id, search, namespace=ns
        ).retrieve("roof")
        assert len(simple) == 130
        assert [n.node.node_id for n in neo] == [n.node.node_id for n in simple]
    finally:
        n4.delete(neo4j_store, ns)
