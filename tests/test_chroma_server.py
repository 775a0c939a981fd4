"""Sweeps against a real Chroma server on loopback (``vector_store: {url: ...}``) and against an unreachable one."""

from __future__ import annotations

import math
import time

import procwait
import pytest
from conftest import BERTSCORE_RAW, RETRIEVAL_METRICS, SENTENCE256, describe

CHROMA_LIMIT = 8
# top_k as in the reference sweep, so these configurations are the reference sweep's (same config hashes)
SERVER_SPEC = {"splitters": [SENTENCE256], "retrievers": [{"kind": "vector"}, {"kind": "fusion"}], "top_k": [3, 5]}


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory, get_free_port):
    """``chroma run`` on 127.0.0.1:<free port> with a temporary persist dir; yields (url, host, port)."""
    from ragsweep.retrievers.chroma_server import ChromaServer

    data = tmp_path_factory.mktemp("chroma-server")
    port = get_free_port()
    with ChromaServer(data / "db", port=port) as url:
        yield url, "127.0.0.1", port


def _by_key(records):
    out = {}
    for row in records.to_dict("records"):
        out[(row["config_id"], row["qid"])] = row
    return out


def test_sweep_on_a_chroma_server_matches_embedded_chroma(
    base_run, chroma_server, make_spec, run_cli, read_run, shared_cache
):
    """Same configurations, same questions: the server run retrieves what the reference sweep's embedded Chroma did."""
    url, host, port = chroma_server
    served = make_spec("chroma-served", **SERVER_SPEC, vector_store={"url": url})
    p = run_cli("run", served.path, "--cache", shared_cache, "--limit", CHROMA_LIMIT)
    assert p.returncode == 0, describe(p)
    b = read_run(served.run_dir, p)

    assert b.manifest["status"] == "complete"
    assert b.manifest["spec"]["vector_store"]["url"] == url
    assert base_run.manifest["spec"]["vector_store"]["url"] is None  # the reference sweep used embedded Chroma
    inv = b.invocation
    # the server had no collection yet: it is built once, from vectors the shared cache already holds
    assert inv["indexes_built"] == 1 and inv["indexes_reused"] == 0
    assert inv["embeddings_computed"] == 0

    hashes = {c["config_hash"] for c in b.manifest["configurations"]}
    assert len(hashes) == 4 and hashes <= {c["config_hash"] for c in base_run.manifest["configurations"]}
    ref = base_run.records
    ref = ref[ref["config_hash"].isin(hashes) & ref["qid"].isin(set(b.records["qid"]))]
    ra, rb = _by_key(ref), _by_key(b.records)
    assert len(rb) == 4 * CHROMA_LIMIT
    assert ra.keys() == rb.keys()
    for key in ra:
        x, y = ra[key], rb[key]
        assert [s["node_id"] for s in x["sources"]] == [s["node_id"] for s in y["sources"]], key
        assert [s["score"] for s in x["sources"]] == pytest.approx([s["score"] for s in y["sources"]], abs=1e-5), key
        assert [(s["rank_vector"], s["rank_bm25"]) for s in x["sources"]] == [
            (s["rank_vector"], s["rank_bm25"]) for s in y["sources"]
        ], key
        assert x["answer"] == y["answer"], key
        for m in RETRIEVAL_METRICS + BERTSCORE_RAW:
            assert (math.isnan(x[m]) and math.isnan(y[m])) or x[m] == pytest.approx(y[m]), (key, m)

    # the collection lives on the server, with every chunk of the splitter
    import chromadb
    from chromadb.config import Settings

    client = chromadb.HttpClient(host=host, port=port, settings=Settings(anonymized_telemetry=False))
    cols = client.list_collections()
    names = [getattr(c, "name", c) for c in cols]
    assert len(names) == 1 and names[0].startswith("rs-"), names
    col = client.get_collection(names[0])
    n_chunks = b.invocation["chunks"]["sentence256"]
    assert col.count() == n_chunks > 0
    assert col.metadata["ragsweep_n"] == n_chunks

    # a fresh run reopens the server's collection instead of rebuilding it, with the same results
    p3 = run_cli("run", served.path, "--cache", shared_cache, "--limit", CHROMA_LIMIT, "--fresh")
    assert p3.returncode == 0, describe(p3)
    c = read_run(served.run_dir, p3)
    assert c.invocation["indexes_built"] == 0 and c.invocation["indexes_reused"] == 1
    assert c.invocation["answered"] == 4 * CHROMA_LIMIT and c.invocation["embeddings_computed"] == 0
    rc = _by_key(c.records)
    for key in rb:
        assert [s["node_id"] for s in rc[key]["sources"]] == [s["node_id"] for s in rb[key]["sources"]], key
    assert len(client.list_collections()) == 1


def test_unreachable_chroma_server_is_a_clear_error(make_spec, run_cli, shared_cache, get_free_port):
    url = f"http://127.0.0.1:{get_free_port()}"
    spec = make_spec(
        "chroma-down", splitters=[SENTENCE256], retrievers=[{"kind": "vector"}], top_k=[3], vector_store={"url": url}
    )
    t0 = time.monotonic()
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", 2, timeout=120)
    assert proc.returncode == 2, describe(proc)
    assert time.monotonic() - t0 < procwait.scaled(60)
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ") and "vector_store.url" in lines[0] and url in lines[0]


def test_unreachable_chroma_server_stops_the_run_before_any_work(make_spec, run_cli, shared_cache, get_free_port):
    url = f"http://127.0.0.1:{get_free_port()}"
    spec = make_spec(
        "chroma-down-bm25",
        splitters=[SENTENCE256],
        retrievers=[{"kind": "bm25"}, {"kind": "vector"}],
        top_k=[3],
        vector_store={"url": url},
    )
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", 2, timeout=120)
    assert proc.returncode == 2, describe(proc)
    assert "vector_store.url" in proc.stderr
    import sqlite3

    journal = spec.run_dir / "journal.sqlite"
    answered = 0
    if journal.exists():
        db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
        try:
            answered = db.execute("SELECT COUNT(*) FROM answer").fetchone()[0]
        finally:
            db.close()
    assert answered == 0, f"{answered} answers were computed before the unreachable server was noticed"
