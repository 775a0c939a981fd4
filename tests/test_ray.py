"""The Ray executor on a real Ray cluster started on this machine (``ray start --head`` plus a worker node).

The same specs run with the local executor and on the cluster must leave the same records; a sweep
killed on the cluster resumes from its journal; stores other hosts cannot reach are refused.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import procwait
import pytest
import ray  # noqa: F401,E402 - a test dependency (pyproject's test extra): missing, the module fails loudly
from conftest import BASE_LIMIT, PATTERN, SENTENCE256, _cli_env, describe, seed_cache

# Ray 2.5x+ turns token authentication on for clusters it starts and writes a token to ~/.ray; the test
# cluster, its nodes and the ragsweep processes all run with it off, consistently.
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
TIMING = ["retrieval_ms", "query_embedding_ms", "rerank_ms", "generation_ms", "generation_wall_ms", "postprocess_ms"]
GRAPH_RETRIEVERS = [
    {"kind": "bm25"},
    {"kind": "vector"},
    {"kind": "fusion"},
    {"kind": "knowledge_graph"},
    {"kind": "hybrid_kg"},
]


def _ray(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    """``ray ARGS``; nodes get the CLI runs' environment (offline hub, ...), which their workers inherit."""
    exe = Path(sys.executable).with_name("ray")
    env = _cli_env(RAY_ENV)
    proc = procwait.run([str(exe), *args], env=env, stall=timeout)
    if check and proc.returncode != 0:
        pytest.fail(f"ray {' '.join(args)} failed: {proc.stderr[-2000:]}")
    return proc


@pytest.fixture(scope="module")
def ray_cluster(get_free_port):
    """A head node and a worker node (1 CPU each) on this machine; yields the head's address."""
    port = get_free_port()
    temp = tempfile.mkdtemp(prefix="rs-ray-", dir="/tmp")  # Ray's socket paths must stay short
    common = ["--num-cpus", "1", "--object-store-memory", str(150 * 2**20), "--disable-usage-stats"]
    try:
        _ray(
            "start",
            "--head",
            "--node-ip-address",
            "127.0.0.1",
            "--port",
            str(port),
            "--include-dashboard=false",
            "--temp-dir",
            temp,
            *common,
        )
        _ray("start", "--address", f"127.0.0.1:{port}", "--node-ip-address", "127.0.0.1", *common)
        yield f"127.0.0.1:{port}"
    finally:
        _kill_cluster(temp, port)
        shutil.rmtree(temp, ignore_errors=True)


def _kill_cluster(temp: str, port: int) -> None:
    """SIGKILL this cluster's processes (both nodes' name ``temp`` or the head's address in their command lines)
    and what they started (agents, workers), and wait until they are gone: ``ray stop --force`` would stop every
    Ray cluster of the machine, a user's own included, and waits seconds between its rounds."""
    import psutil

    def ours(args: list[str]) -> bool:
        return any(temp in a or (a.startswith("--") and a.endswith(f":{port}")) for a in args)

    roots = [p for p in psutil.process_iter(["cmdline"]) if ours(p.info["cmdline"] or [])]
    procs = {p.pid: p for root in roots for p in [root, *_children(root)]}
    for p in procs.values():
        with contextlib.suppress(psutil.Error):
            p.kill()
    _, alive = psutil.wait_procs(list(procs.values()), timeout=30)
    assert not alive, f"Ray processes still alive 30 s after SIGKILL: {alive}"


def _children(proc) -> list:
    import psutil

    try:
        return proc.children(recursive=True)
    except psutil.Error:  # gone already
        return []


def _ray_run(run_cli, spec, cache, address, *extra, env=None, timeout=400):
    return run_cli(
        "run",
        spec.path,
        "--cache",
        cache,
        "--ray-address",
        address,
        *extra,
        env={**RAY_ENV, **(env or {})},
        timeout=timeout,
    )


def _comparable(records):
    timings = [c for c in TIMING if c in records]
    return records.drop(columns=timings).sort_values(["config_id", "qid"]).reset_index(drop=True)


def _as_json(df) -> list[str]:
    return [
        json.dumps(row, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v), sort_keys=True)
        for row in df.to_dict("records")
    ]


def assert_same_records(local, remote) -> None:
    """Every field equal, timings aside, BERTScore and vector scores included, to the last bit: a vector
    and a BERTScore depend on their own text (pair) only, not on the batch a task computed it in
    (``embeddings.batching``, ``evaluation.bertscore_tokens``)."""
    a, b = _comparable(local), _comparable(remote)
    assert list(a.columns) == list(b.columns)
    ja, jb = _as_json(a), _as_json(b)
    diff = [i for i in range(len(ja)) if ja[i] != jb[i]]
    fields = sorted(
        {k for i in diff for k, v in json.loads(ja[i]).items() if json.dumps(json.loads(jb[i]).get(k)) != json.dumps(v)}
    )
    assert len(ja) == len(jb) and not diff, (
        f"{len(diff)} records differ in {fields}, e.g.\n{ja[diff[0]][:800]}\n{jb[diff[0]][:800]}"
    )


def assert_same_summary(local, remote) -> None:
    """Means and bootstrap CIs per configuration are equal (latencies aside)."""
    import pandas as pd

    def prep(df):
        df = df.drop(
            columns=[
                c
                for c in df.columns
                if c.startswith(("retrieval_ms", "generation_ms", "query_embedding_ms", "rerank_ms"))
            ]
        )
        return df.sort_values("config_id").reset_index(drop=True)

    pd.testing.assert_frame_equal(prep(local), prep(remote), check_exact=True)


def _vectors(cache: Path) -> int:
    import sqlite3

    with sqlite3.connect(cache / "embeddings.sqlite") as db:
        n = db.execute("SELECT count(*) FROM embedding").fetchone()[0]
    db.close()
    return n


def test_killed_ray_sweep_resumes_and_leaves_the_records_of_a_local_sweep(
    ray_cluster, base_run, make_spec, popen_cli, run_cli, read_run, shared_cache, tmp_path, kill_midway, onnx_exports
):
    """Demo data, 2 splitters x {bm25, vector, fusion, knowledge graph, hybrid_kg}, top_k 3 (and two reference
    baselines, answered on the driver), on a two-node
    cluster with a cache that holds no chunk, index, graph or vector of its embedding (MiniLM on ONNX Runtime,
    BERTScore too: the workers never import PyTorch, which would cost each worker seconds in both runs; the
    torch backend on Ray is the slow tests'), so the workers chunk, embed, index, build graphs and score. The
    driver is SIGKILLed after the first answers; the rerun answers only what the journal lacks, keeps what it
    has, and the records equal a local run's, which computes its own vectors and scores."""
    from test_sweep import journal_payloads, journal_rows

    onnx = {"kind": "sentence_transformers", "model": "minilm", "backend": "onnx"}
    scoring = {"bootstrap_samples": 200, "bertscore": {"baseline_pairs": 50, "backend": "onnx"}}
    data = {"splitters": [SENTENCE256, PATTERN], "retrievers": GRAPH_RETRIEVERS, "top_k": [3]}
    data |= {"embeddings": [onnx], "scoring": scoring, "baselines": ["oracle", "no_retrieval"]}  # on the driver
    spec = make_spec("ray-remote", **data, ray={"questions_per_task": 2})
    total = 12 * BASE_LIMIT
    caches = {}
    for name in ("ray", "local"):  # MiniLM's ONNX exports (the session's) and nothing else of this embedding
        caches[name] = seed_cache(tmp_path / f"cache-{name}", shared_cache, chunks=name == "local")
        shutil.copytree(onnx_exports / "onnx", caches[name] / "onnx")
    cache = caches["ray"]
    journal = spec.run_dir / "journal.sqlite"
    vectors_at_start = _vectors(cache)
    proc = popen_cli(
        "run",
        spec.path,
        "--cache",
        cache,
        "--ray-address",
        ray_cluster,
        "--limit",
        BASE_LIMIT,
        log_dir=tmp_path,
        env=RAY_ENV,
    )
    kill_midway(
        proc,
        lambda: journal_rows(journal)[0],
        1,
        timeout=240,
        what="answers journaled",
        stderr_path=tmp_path / "stderr.txt",
    )
    rows, ok_rows = journal_rows(journal)
    assert 0 < rows < total and ok_rows == rows
    before = journal_payloads(journal)
    # the Chroma server the killed driver started for its embedded directory goes with it (the kernel signals it
    # when its parent dies)
    deadline = time.monotonic() + 30
    while subprocess.run(["pgrep", "-f", f"chroma run --path {cache / 'chroma'}"]).returncode == 0:
        assert time.monotonic() < deadline, "the killed driver's Chroma server outlived it by 30 s"
        time.sleep(0.1)
    # the workers handed the driver what they computed: chunks, graphs (and vectors) are in the cache, at least
    # those of the splitter that answered (the other one's may still have been on its way at the kill)
    graphs_at_kill = len(list((cache / "graphs").glob("*.json")))
    assert len(list((cache / "chunks").glob("*.json"))) >= 1 and graphs_at_kill >= 1

    done = _ray_run(run_cli, spec, cache, ray_cluster, "--limit", BASE_LIMIT)
    assert done.returncode == 0, describe(done)
    rrun = read_run(spec.run_dir, done)
    inv = rrun.invocation
    assert rrun.manifest["status"] == "complete" and len(rrun.records) == total
    assert inv["skipped_already_done"] == rows and inv["answered"] == total - rows and inv["failed"] == 0
    assert all(journal_payloads(journal)[k] == v for k, v in before.items())
    assert inv["executor"]["kind"] == "ray" and inv["executor"]["nodes"] == 2
    assert inv["executor"]["address"] == ray_cluster and len(inv["executor"]["hosts"]) == 1
    assert inv["indexes_built"] + inv["indexes_reused"] == 2, inv  # an index the killed run finished is reused
    # the graphs the killed run's workers built are reused, not built again
    assert sum(g["built"] for g in inv["graphs"].values()) == 2 - graphs_at_kill, inv["graphs"]
    # the workers embedded and the driver stored what they computed (how much depends on the kill's moment: an
    # index the killed run finished is reused without its chunks' vectors, which that run may not have stored)
    assert _vectors(cache) > vectors_at_start and sum(inv["unique_chunk_texts"].values()) > 0

    local_spec = make_spec("ray-local", **data)
    local = run_cli("run", local_spec.path, "--cache", caches["local"], "--limit", BASE_LIMIT)
    assert local.returncode == 0, describe(local)
    lrun = read_run(local_spec.run_dir)
    assert lrun.invocation["executor"] == {"kind": "local"}
    assert_same_records(lrun.records, rrun.records)
    assert_same_summary(lrun.summary, rrun.summary)


@pytest.mark.slow
def test_llm_answers_and_rewrites_on_ray_match_local(ray_cluster, make_spec, run_cli, read_run, tmp_path):
    """LLM answers (generated by the driver from what the workers retrieved), fusion with LLM query
    rewrites (run on the driver, with the run's one rate limiter and budget) and chunk contexts an LLM writes
    (on the driver, then indexed by the workers) equal a local run's."""
    from fake_openai import FakeOpenAI

    key = "sk-ray-SECRET-0b7e"
    fake = FakeOpenAI(api_key=key).start()
    try:
        data = {
            "splitters": [SENTENCE256, {**SENTENCE256, "context": {"kind": "llm", "document_tokens": 400}}],
            "generator": {"kind": "llm"},
            "retrievers": [{"kind": "bm25"}, {"kind": "vector"}, {"kind": "fusion", "num_queries": 2}],
            "llm": {"model": "ray-model", "base_url": fake.base_url, "api_key_env": "RAY_KEY"},
            "prices": {"ray-model": {"input": 1.0, "output": 2.0}},
            "baselines": ["no_retrieval"],  # answered by the driver's LLM with the closed-book prompt
        }
        local_spec, ray_spec = make_spec("ray-llm-local", **data), make_spec("ray-llm-remote", **data)
        env = {"RAY_KEY": key}
        local = run_cli("run", local_spec.path, "--cache", tmp_path / "c1", "--limit", 6, env=env)
        assert local.returncode == 0, describe(local)
        remote = _ray_run(run_cli, ray_spec, tmp_path / "c2", ray_cluster, "--limit", 6, env=env)
        assert remote.returncode == 0, describe(remote)
    finally:
        fake.stop()
    lrec, rrec = read_run(local_spec.run_dir).records, read_run(ray_spec.run_dir).records
    drop = ["llm", "rewrite_llm"]  # call traces: latencies and token counts of the same calls
    assert_same_records(
        lrec.drop(columns=[c for c in drop if c in lrec]), rrec.drop(columns=[c for c in drop if c in rrec])
    )
    assert (rrec["generator"] == "llm:ray-model").all() and rrec["answer"].str.len().gt(0).all()
    assert set(rrec["splitter"].dropna()) == {"sentence256", "sentence256-cllm"} and rrec["error"].isna().all()
    assert rrec["config_id"].eq("baseline-no_retrieval").sum() == 6
    assert key not in (ray_spec.run_dir / "manifest.json").read_text()


def test_a_stage_added_to_the_plan_runs_in_its_place_on_ray(
    monkeypatch, ray_cluster, make_spec, run_cli, read_run, tmp_path
):
    """The run stages of test_plan_run.py's plan, with the two added, on the cluster: the added stages run on the
    driver in their places; the score unit's blocks go to the workers (Ray's own way: unlogged)."""
    from added_stages import add_stages, check_order
    from fake_openai import FakeOpenAI
    from test_plan_run import KEY, added_stage_spec

    log = add_stages(monkeypatch)
    fake = FakeOpenAI(api_key=KEY).start()
    try:
        spec = added_stage_spec(make_spec, "plan-added-ray", fake)
        out = _ray_run(run_cli, spec, tmp_path / "cache", ray_cluster, "--limit", 6, env={"PLAN_KEY": KEY})
        assert out.returncode == 0, describe(out)
    finally:
        fake.stop()
    check_order(log, answers=12, scored_here=False)
    assert read_run(spec.run_dir).records["bertscore_f1"].notna().all()


def test_a_tfidf_part_on_ray_matches_local(ray_cluster, make_spec, run_cli, read_run, tmp_path):
    """A part built in memory that no executor names (TF-IDF: its kind's declaration alone) is built by the
    workers' answering tasks and gives a local run's records."""
    data = {"splitters": [SENTENCE256], "top_k": [3], "retrievers": [{"kind": "tfidf"}]}
    local_spec, ray_spec = make_spec("ray-tfidf-local", **data), make_spec("ray-tfidf-remote", **data)
    local = run_cli("run", local_spec.path, "--cache", tmp_path / "c1", "--limit", 6)
    remote = _ray_run(run_cli, ray_spec, tmp_path / "c2", ray_cluster, "--limit", 6)
    assert local.returncode == 0 and remote.returncode == 0, describe(remote)
    lrun, rrun = read_run(local_spec.run_dir), read_run(ray_spec.run_dir)
    assert len(rrun.records) == 6 and rrun.records["error"].isna().all()
    assert rrun.manifest["invocations"][-1]["executor"]["kind"] == "ray"
    assert_same_records(lrun.records, rrun.records)


def test_follow_ups_with_their_history_on_ray_match_local(ray_cluster, make_spec, run_cli, read_run, tmp_path):
    """A Giskard file's follow-ups swept with history none, concat (offline: on the workers, with the vectors of the
    concatenated queries the driver sends) and condense (the LLM's rewrite: on the driver) give a local run's
    records. (Before the tests that add a node on another host, which refuse an embedded Chroma.)"""
    from fake_openai import FakeOpenAI
    from history_data import giskard_file

    key = "sk-ray-history-7d1e"
    questions = giskard_file(tmp_path / "raget.jsonl")
    fake = FakeOpenAI(api_key=key).start()
    try:
        data = {
            "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "giskard", "path": str(questions)}},
            "splitters": [SENTENCE256],
            "top_k": [3],
            "retrievers": [{"kind": "bm25"}, {"kind": "vector"}],
            "history": [{"kind": "none"}, {"kind": "concat"}, {"kind": "condense"}],
            "llm": {"model": "ray-model", "base_url": fake.base_url, "api_key_env": "RAY_KEY"},
        }
        local_spec, ray_spec = make_spec("ray-hist-local", **data), make_spec("ray-hist-remote", **data)
        env = {"RAY_KEY": key}
        local = run_cli("run", local_spec.path, "--cache", tmp_path / "c1", env=env)
        assert local.returncode == 0, describe(local)
        remote = _ray_run(run_cli, ray_spec, tmp_path / "c2", ray_cluster, env=env)
        assert remote.returncode == 0, describe(remote)
    finally:
        fake.stop()
    lrun, rrun = read_run(local_spec.run_dir), read_run(ray_spec.run_dir)
    assert rrun.manifest["invocations"][-1]["executor"]["kind"] == "ray" and rrun.records["error"].isna().all()
    assert set(rrun.records["history"].dropna()) == {"concat", "condense"}
    assert rrun.records["standalone_question"].notna().sum() == 2 * 2 * 6  # 2 modes x 2 retrievers x 6 follow-ups
    assert_same_records(lrun.records, rrun.records)


def test_a_traced_ray_sweep_sends_the_spans_of_what_its_workers_answer(
    ray_cluster, phoenix_url, make_spec, run_cli, read_run, tmp_path
):
    """Extractive answers are made in the Ray workers, which have none of the driver's environment: their spans go
    where the driver's go (here named by OTEL_EXPORTER_OTLP_ENDPOINT on the driver alone), one chain per record
    with its retrieval, in the run's session."""
    import uuid

    from phoenix_spans import documents, spans_of

    project = f"ragsweep-ray-{uuid.uuid4().hex[:8]}"
    spec = make_spec(
        "ray-traced", splitters=[SENTENCE256], retrievers=[{"kind": "bm25"}], top_k=[3], tracing={"project": project}
    )
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": phoenix_url}
    proc = _ray_run(run_cli, spec, tmp_path / "cache", ray_cluster, "--limit", 4, env=env)
    assert proc.returncode == 0 and "tracing is off" not in proc.stderr, describe(proc)
    records = read_run(spec.run_dir, proc).records
    spans = spans_of(phoenix_url, project, lambda got: sum(x["name"] == "rag_query" for x in got) >= len(records))
    chains = {
        (s["attributes"]["ragsweep.config_id"], s["attributes"]["ragsweep.qid"]): s
        for s in spans
        if s["name"] == "rag_query"
    }
    assert len(chains) == len(records) == 4
    retrievals = {s["parent_id"]: s for s in spans if s["span_kind"] == "RETRIEVER"}
    for row in records.itertuples():
        chain = chains[(row.config_id, row.qid)]
        assert chain["attributes"]["session.id"] == spec.run_dir.name
        got = documents(retrievals[chain["context"]["span_id"]])
        assert [d["id"] for d in got] == [s["node_id"] for s in row.sources]


@pytest.mark.slow  # 46 s; the local-vs-Ray parity of plain configurations runs by default
def test_reranked_expanded_and_tuned_configurations_on_ray_match_local(
    ray_cluster, make_spec, run_cli, read_run, tmp_path
):
    """Late-interaction scores computed in Ray workers, RM3 expansions and weights tuned on the driver give
    the records of a local run to the last bit (timings aside)."""
    data = {
        "splitters": [SENTENCE256],
        "top_k": [3],
        "retrievers": [{"kind": "bm25"}, {"kind": "fusion"}, {"kind": "fusion", "weights": "tune"}],
        "query_transforms": [{"kind": "none"}, {"kind": "rm3", "apply_to": ["bm25"]}],
        "rerankers": [{"kind": "none"}, {"kind": "late_interaction", "candidates": 8, "apply_to": ["bm25"]}],
    }
    local_spec, ray_spec = make_spec("ray-rr-local", **data), make_spec("ray-rr-remote", **data)
    local = run_cli("run", local_spec.path, "--cache", tmp_path / "c1", "--limit", 6)
    remote = _ray_run(run_cli, ray_spec, tmp_path / "c2", ray_cluster, "--limit", 6)
    assert local.returncode == 0 and remote.returncode == 0, describe(remote)
    lrun, rrun = read_run(local_spec.run_dir), read_run(ray_spec.run_dir)
    assert len(rrun.records) == 6 * 6  # bm25 x {none, rm3} x {none, maxsim} + fusion + tuned fusion
    assert_same_records(lrun.records, rrun.records)
    drop = ("tuning_ms",)  # the tuning's own time
    assert {c: {k: v for k, v in t.items() if k not in drop} for c, t in lrun.manifest["tuned_weights"].items()} == {
        c: {k: v for k, v in t.items() if k not in drop} for c, t in rrun.manifest["tuned_weights"].items()
    }


@pytest.mark.slow  # 34 s; a Ray sweep (killed and resumed) equal to a local one runs by default
def test_failures_on_ray_are_recorded_as_locally(ray_cluster, make_spec, run_cli, read_run, tmp_path):
    """An embedding whose model cannot load fails its configurations on the workers with the local executor's
    reason, counted once each; the other configurations are answered."""
    data = {
        "splitters": [SENTENCE256],
        "retrievers": [{"kind": "bm25"}, {"kind": "vector"}],
        "top_k": [3],
        "embeddings": [{"model": "minilm"}, {"model": str(tmp_path / "no-such-model"), "name": "broken"}],
    }
    local_spec, ray_spec = make_spec("ray-fail-local", **data), make_spec("ray-fail-remote", **data)
    local = run_cli("run", local_spec.path, "--cache", tmp_path / "c1", "--limit", 4)
    remote = _ray_run(run_cli, ray_spec, tmp_path / "c2", ray_cluster, "--limit", 4)
    assert local.returncode == 3 and remote.returncode == 3, describe(remote)
    lrun, rrun = read_run(local_spec.run_dir), read_run(ray_spec.run_dir)
    errors = rrun.records["error"].dropna()
    assert len(errors) == 4 and (rrun.records.loc[errors.index, "config_id"] == "sentence256-broken-vector-k3").all()
    assert errors.str.startswith("indexing failed: ").all()
    assert rrun.invocation["failed"] == 4 and rrun.invocation["answered"] == 8
    assert_same_records(lrun.records, rrun.records)


def test_stores_other_hosts_cannot_reach_are_refused(ray_cluster, make_spec, run_cli, tmp_path):
    """A node joins from another address (127.0.0.2: to Ray, another host): an embedded Chroma directory and
    loopback server URLs are refused at start-up with the setting and the fix, before anything runs."""
    _ray(
        "start",
        "--address",
        ray_cluster,
        "--node-ip-address",
        "127.0.0.2",
        "--num-cpus",
        "1",
        "--object-store-memory",
        str(100 * 2**20),
        "--disable-usage-stats",
    )
    spec = make_spec("ray-refused")
    p = _ray_run(run_cli, spec, tmp_path / "cache", ray_cluster, "--limit", 2)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, describe(p)
    assert "vector_store: the Ray cluster" in p.stderr and "127.0.0.2" in p.stderr and "vector_store.url" in p.stderr
    assert not spec.run_dir.exists() or not (spec.run_dir / "manifest.json").exists()
    from ragsweep.retrievers.chroma_server import ChromaServer

    with ChromaServer(tmp_path / "chroma") as url:  # it answers here, so only the cluster check can refuse it
        served = make_spec("ray-refused-url", vector_store={"url": url})
        p = _ray_run(run_cli, served, tmp_path / "cache", ray_cluster, "--limit", 2)
    assert p.returncode == 2 and f"vector_store.url: {url} is a loopback address" in p.stderr, describe(p)


def test_loopback_neo4j_is_refused_on_other_hosts(ray_cluster, neo4j_server, make_spec, run_cli, tmp_path):
    """(after the 127.0.0.2 node joined) the Neo4j server answers here, but not at loopback from other hosts."""
    graph = make_spec(
        "ray-refused-neo4j",
        retrievers=[{"kind": "knowledge_graph", "store": "neo4j"}],
        neo4j=neo4j_server.model_dump(mode="json"),
    )
    p = _ray_run(run_cli, graph, tmp_path / "cache", ray_cluster, "--limit", 2)
    assert p.returncode == 2 and f"neo4j.url: {neo4j_server.url} is a loopback address" in p.stderr, describe(p)


def test_executor_options_are_checked(make_spec, run_cli, get_free_port):
    spec = make_spec("ray-options")
    closed = f"127.0.0.1:{get_free_port()}"
    t0 = time.monotonic()
    p = run_cli("run", spec.path, "--ray-address", closed, env=RAY_ENV)
    assert p.returncode == 2 and p.stderr.startswith(f"error: ray.address: no Ray cluster answers at {closed}"), (
        describe(p)
    )
    assert time.monotonic() - t0 < procwait.scaled(30)
    p = run_cli("run", spec.path, "--executor", "dask")
    assert p.returncode == 2 and "--executor: 'dask' is not one of local, ray" in p.stderr, describe(p)
    p = run_cli("run", spec.path, "--executor", "local", "--ray-address", closed)
    assert p.returncode == 2 and "--ray-address" in p.stderr, describe(p)
    bad = make_spec("ray-bad", executor="spark")
    p = run_cli("validate", bad.path)
    assert p.returncode == 2 and "executor" in p.stderr, describe(p)


def test_shared_state_rules(tmp_path):
    """The start-up checks on their own: one host needs nothing; other hosts need reachable servers and models
    every node can load; device cuda needs GPUs."""
    from ragsweep.config import SweepSpec
    from ragsweep.errors import RagsweepError
    from ragsweep.executors.cluster import ClusterInfo, check_shared_state

    one_host = ClusterInfo("h:1", "10.0.0.1", ("10.0.0.1", "10.0.0.1"), 4)
    two_hosts = ClusterInfo("h:1", "10.0.0.1", ("10.0.0.1", "10.0.0.2"), 4)
    base = {"splitters": [SENTENCE256], "retrievers": [{"kind": "vector"}]}
    check_shared_state(SweepSpec(**base), True, False, one_host)
    check_shared_state(SweepSpec(**base, vector_store={"url": "http://10.0.0.1:8000"}), True, False, two_hosts)
    check_shared_state(SweepSpec(**base), False, False, two_hosts)  # no vectors: no store to share
    model_dir = tmp_path / "my-model"
    model_dir.mkdir()
    cases = [
        (SweepSpec(**base), two_hosts, "vector_store: the Ray cluster at h:1 has nodes on other hosts (10.0.0.2)"),
        (
            SweepSpec(**base, vector_store={"url": "http://localhost:8000"}),
            two_hosts,
            "vector_store.url: http://localhost:8000 is a loopback address",
        ),
        (
            SweepSpec(**{**base, "embeddings": [{"model": str(model_dir)}]}, vector_store={"url": "http://10.0.0.1:1"}),
            two_hosts,
            f"embeddings[mymodel].model: {model_dir} is a directory on this machine",
        ),
        (
            SweepSpec(**{**base, "embeddings": [{"model": "minilm", "device": "cuda"}]}),
            one_host,
            "embeddings[minilm].device: cuda, but the Ray cluster at h:1 has no GPU",
        ),
    ]
    for spec, cluster, message in cases:
        with pytest.raises(RagsweepError) as err:
            check_shared_state(spec, True, False, cluster)
        assert str(err.value).startswith(message) and "\n" not in str(err.value), str(err.value)


@pytest.mark.slow  # about 40 s; the search's own kill -9 test runs by default (locally)
def test_a_search_on_ray_evaluates_the_trials_of_a_local_search(ray_cluster, make_spec, run_cli, read_run, tmp_path):
    """Trials are units of the plan like any other: a seeded random search on Ray picks, answers and reports
    what the same search does locally, to the last bit."""
    data = {
        "search": {"strategy": "random", "budget": {"trials": 4}, "finalists": 2},
        "scoring": {"metric": "mrr", "bootstrap_samples": 200, "bertscore": {"baseline_pairs": 50}},
    }
    local_spec, ray_spec = make_spec("ray-search-local", **data), make_spec("ray-search-remote", **data)
    local = run_cli("run", local_spec.path, "--cache", tmp_path / "c1", "--limit", 20)
    remote = _ray_run(run_cli, ray_spec, tmp_path / "c2", ray_cluster, "--limit", 20)
    assert local.returncode == 0 and remote.returncode == 0, describe(remote)
    lrun, rrun = read_run(local_spec.run_dir), read_run(ray_spec.run_dir)
    assert rrun.manifest["invocations"][-1]["executor"]["kind"] == "ray"
    strip = ("seconds", "best_so_far")
    lsearch, rsearch = lrun.manifest["search"], rrun.manifest["search"]
    assert [{k: v for k, v in t.items() if k != "seconds"} for t in lsearch["trials"]] == [
        {k: v for k, v in t.items() if k != "seconds"} for t in rsearch["trials"]
    ]
    assert {k: v for k, v in lsearch.items() if k not in strip + ("trials", "used")} == {
        k: v for k, v in rsearch.items() if k not in strip + ("trials", "used")
    }
    assert_same_records(lrun.records, rrun.records)
