"""Knowledge-graph configurations in a real sweep (CLI): records, caching, bad input, and the same
results from the embedded graph store and from a real Neo4j server."""

from __future__ import annotations

import json

import pytest
from conftest import BASE_LIMIT, PATTERN, describe

KG_RETRIEVERS = [
    {"kind": "bm25"},
    {"kind": "vector"},
    {"kind": "knowledge_graph"},
    {"kind": "knowledge_graph", "path_depth": 2},
    {"kind": "hybrid_kg"},
]


def _sources(records, config_id: str) -> dict[str, list]:
    out = {}
    for _, row in records[records["config_id"] == config_id].iterrows():
        out[row["qid"]] = [
            (s["node_id"], round(s["score"], 9), list(s["triplets"]) if s.get("triplets") is not None else None)
            for s in row["sources"]
        ]
    return out


@pytest.fixture(scope="module")
def kg_run(make_spec, shared_cache, run_cli, read_run):
    spec = make_spec("kgrun", splitters=[PATTERN], retrievers=KG_RETRIEVERS, top_k=[5])
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", BASE_LIMIT)
    assert proc.returncode == 0, describe(proc)
    run = read_run(spec.run_dir, proc)
    run.extra["spec"] = spec
    return run


def test_kg_configurations_answer_with_chunks_and_triplets(kg_run):
    recs = kg_run.records
    kg = recs[recs["config_id"] == "pattern-kg-k5"]
    assert len(kg) == BASE_LIMIT and kg["error"].isna().all()
    with_sources = kg[kg["sources"].map(len) > 0]
    assert len(with_sources) >= BASE_LIMIT - 3  # most demo questions name an entity of the graph
    first = with_sources.iloc[0]["sources"][0]
    assert first["doc_id"] and first["end"] > first["start"] and len(first["triplets"]) >= 1
    assert all(" -[" in t and "]-> " in t for t in first["triplets"])
    # span metrics apply unchanged
    assert kg["hit"].mean() > 0.5 and kg["bertscore_f1"].notna().all()
    hybrid = recs[recs["config_id"] == "pattern-minilm-hybrid-kg-k5"]
    ranks = [s for srcs in hybrid["sources"] for s in srcs]
    assert any(s["rank_graph"] is not None for s in ranks) and any(s["rank_vector"] is not None for s in ranks)
    assert any(s["rank_bm25"] is not None for s in ranks)
    graphs = kg_run.invocation["graphs"]
    assert set(graphs) == {"pattern/legal_patterns"}  # one graph serves kg, kg-d2 and the hybrid
    g = graphs["pattern/legal_patterns"]
    assert g["entities"] > 100 and g["relations"] > 100


def test_kg_summary_and_depth(kg_run):
    s = kg_run.summary.set_index("config_id")
    for cid in ("pattern-kg-k5", "pattern-kg-d2-k5", "pattern-minilm-hybrid-kg-k5"):
        assert cid in s.index and s.loc[cid, "n_errors"] == 0 and s.loc[cid, "n_questions"] == BASE_LIMIT


def test_graph_is_reused_by_a_second_sweep(kg_run, make_spec, shared_cache, run_cli, read_run):
    spec = make_spec("kgrun-again", splitters=[PATTERN], retrievers=KG_RETRIEVERS, top_k=[5])
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", BASE_LIMIT)
    assert proc.returncode == 0, describe(proc)
    again = read_run(spec.run_dir, proc)
    g = again.invocation["graphs"]["pattern/legal_patterns"]
    assert g["built"] is False and g["key"] == kg_run.invocation["graphs"]["pattern/legal_patterns"]["key"]
    for cid in ("pattern-kg-k5", "pattern-minilm-hybrid-kg-k5"):
        assert _sources(again.records, cid) == _sources(kg_run.records, cid)


def test_question_without_a_graph_entity_is_an_empty_retrieval_not_a_failure(kg_run):
    kg = kg_run.records[kg_run.records["config_id"] == "pattern-kg-k5"]
    empty = kg[kg["sources"].map(len) == 0]
    for _, row in empty.iterrows():
        assert row["error"] is None and row["answer"] == "" and row["hit"] == 0


def test_graph_without_triplets_fails_only_its_configurations(make_spec, shared_cache, run_cli, read_run, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("the weather was nice today.\nwe went for a walk by the river.\n")
    (corpus / "b.txt").write_text("it rained later on.\nthen we went home again.\n")
    qs = tmp_path / "q.jsonl"
    qs.write_text(
        json.dumps(
            {
                "id": "q1",
                "question": "how was the weather?",
                "answer": "nice",
                "evidence": [{"doc_id": "a.txt", "text": "the weather was nice today."}],
            }
        )
        + "\n"
    )
    spec = make_spec(
        "kg-empty",
        dataset={
            "corpus": {"format": "folder", "path": str(corpus)},
            "questions": {"format": "jsonl", "path": str(qs)},
        },
        splitters=[PATTERN],
        retrievers=[{"kind": "bm25"}, {"kind": "knowledge_graph"}],
        top_k=[3],
        embeddings=[],
    )
    proc = run_cli("run", spec.path, "--cache", shared_cache)
    assert proc.returncode == 3, describe(proc)  # finished with failures
    run = read_run(spec.run_dir, proc)
    recs = run.records.set_index("config_id")
    assert recs.loc["pattern-bm25-k3", "error"] is None
    err = recs.loc["pattern-kg-k3", "error"]
    assert "has no triplets" in err and "extractor" in err


def test_unreachable_neo4j_stops_the_run_at_start_up(make_spec, shared_cache, run_cli, get_free_port):
    port = get_free_port()
    spec = make_spec(
        "kg-neo4j-down",
        splitters=[PATTERN],
        retrievers=[{"kind": "knowledge_graph", "store": "neo4j"}],
        top_k=[3],
        neo4j={"url": f"bolt://127.0.0.1:{port}", "password_env": "RS_TEST_PW"},
    )
    proc = run_cli(
        "run", spec.path, "--cache", shared_cache, env={"RS_TEST_PW": "secret-pw-123", "NEO4J_USER": "neo4j"}
    )
    assert proc.returncode == 2, describe(proc)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"cannot reach Neo4j at bolt://127.0.0.1:{port}" in lines[0]
    assert "secret-pw-123" not in proc.stderr + proc.stdout
    assert not (spec.run_dir / "records.parquet").exists()


def test_spec_naming_neo4j_without_a_neo4j_section_is_refused(make_spec, run_cli):
    spec = make_spec("kg-no-section", retrievers=[{"kind": "knowledge_graph", "store": "neo4j"}])
    proc = run_cli("validate", spec.path)
    assert proc.returncode == 2
    assert "store neo4j needs a 'neo4j' section" in proc.stderr and "scripts/neo4j.sh" in proc.stderr


@pytest.mark.neo4j
def test_neo4j_sweep_gives_the_same_results_as_the_embedded_store(
    kg_run, neo4j_server, make_spec, shared_cache, run_cli, read_run
):
    retrievers = [
        {"kind": "knowledge_graph", "store": "neo4j"},
        {"kind": "knowledge_graph", "store": "neo4j", "path_depth": 2},
        {"kind": "hybrid_kg", "store": "neo4j"},
    ]
    spec = make_spec("kg-neo4j", splitters=[PATTERN], retrievers=retrievers, top_k=[5], neo4j={"url": neo4j_server.url})
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", BASE_LIMIT)
    assert proc.returncode == 0, describe(proc)
    neo = read_run(spec.run_dir, proc)
    for simple_id, neo_id in (
        ("pattern-kg-k5", "pattern-kg-neo4j-k5"),
        ("pattern-kg-d2-k5", "pattern-kg-neo4j-d2-k5"),
        ("pattern-minilm-hybrid-kg-k5", "pattern-minilm-hybrid-kg-neo4j-k5"),
    ):
        assert _sources(neo.records, neo_id) == _sources(kg_run.records, simple_id), neo_id
        a = neo.records[neo.records["config_id"] == neo_id].set_index("qid")
        b = kg_run.records[kg_run.records["config_id"] == simple_id].set_index("qid")
        assert (a["answer"] == b["answer"]).all() and (a["ndcg"] == b["ndcg"]).all()
    g = neo.invocation["graphs"]["pattern/legal_patterns"]
    assert g["built"] is False  # the graph extracted for the embedded store, served from Neo4j
    assert "neo4j_loaded" in g


def test_llm_path_extractor_builds_the_graph_through_the_llm_client(make_spec, shared_cache, run_cli, read_run):
    """SimpleLLMPathExtractor on the spec's llm (the scripted OpenAI-compatible server): one call per distinct
    chunk text (the demo repeats some passages verbatim), accounted under graph_extraction, estimated by
    --dry-run, cached for the next run."""
    from fake_openai import FakeOpenAI

    with FakeOpenAI(api_key="sk-kg-test").start() as fake:
        llm = {"model": "kg-extractor-model", "base_url": fake.base_url, "api_key_env": "FAKE_KEY", "concurrency": 4}
        spec = make_spec(
            "kg-llm",
            splitters=[PATTERN],
            retrievers=[{"kind": "knowledge_graph", "extractor": "llm_simple", "max_triplets_per_chunk": 5}],
            top_k=[3],
            llm=llm,
            prices={"kg-extractor-model": {"input": 1.0, "output": 2.0}},
        )
        env = {"FAKE_KEY": "sk-kg-test"}
        dry = run_cli("run", spec.path, "--cache", shared_cache, "--limit", 6, "--dry-run", env=env)
        assert dry.returncode == 0, describe(dry)
        assert fake.stats()["calls"] == 0  # a dry run calls nothing
        proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", 6, env=env)
        assert proc.returncode == 0, describe(proc)
        run = read_run(spec.run_dir, proc)
        n_chunks = run.invocation["unique_chunk_texts"]["pattern"]
        assert n_chunks < run.invocation["chunks"]["pattern"]  # identical chunk texts, one call each
        extract_calls = [c for c in fake.calls() if c.get("kind") == "kg_extract"]
        assert len(extract_calls) == n_chunks  # one call per distinct chunk text, nothing else asked the LLM
        assert [c for c in fake.calls() if c.get("kind") not in ("kg_extract",)] == []
        row = next(ln for ln in dry.stdout.splitlines() if "graph_extraction" in ln)
        assert row.split("│")[3].strip() == str(n_chunks)  # the dry run predicted exactly these calls
        g = run.invocation["graphs"]["pattern/llm_simple-t5"]  # extraction limit not the default
        assert g["built"] and g["relations"] > 0
        usage = run.manifest["usage"]
        assert usage["by_stage"]["graph_extraction"]["calls"] == n_chunks
        kg = run.records[run.records["config_id"] == "pattern-kg-llm-k3"]
        assert len(kg) == 6 and kg["error"].isna().all()
        # a budget too small for the extraction stops the run cleanly (exit 4), before the graph is built
        poor = make_spec(
            "kg-llm-poor",
            **{
                **{k: v for k, v in spec.data.items() if k not in ("name", "output_dir")},
                "llm": {**llm, "model": "kg-extractor-poor"},
                "prices": {"kg-extractor-poor": {"input": 1.0, "output": 2.0}},
            },
        )
        stopped = run_cli("run", poor.path, "--cache", shared_cache, "--limit", 6, "--budget", "0.002", env=env)
        assert stopped.returncode == 4, describe(stopped)
        assert json.loads((poor.run_dir / "manifest.json").read_text())["status"] == "stopped_budget"
        # a second sweep reuses the graph: no call at all
        before = len(fake.calls())
        again = make_spec("kg-llm-2", **{k: v for k, v in spec.data.items() if k not in ("name", "output_dir")})
        proc2 = run_cli("run", again.path, "--cache", shared_cache, "--limit", 6, env=env)
        assert proc2.returncode == 0, describe(proc2)
        assert len(fake.calls()) == before
