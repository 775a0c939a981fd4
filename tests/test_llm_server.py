"""ragsweep against a real OpenAI-compatible server: llama.cpp's server (llama-cpp-python) serving
SmolLM2-135M-Instruct on loopback, as started by ``scripts/llm-server.sh`` (``.ci/run`` starts it and requires
these tests; elsewhere they skip when no server answers).

The model is far too small to answer or judge well, and nothing here claims it does: these tests check what a
real server does that a double of our own does not: it computes one request at a time and queues the rest, it
refuses prompts longer than its n_ctx, it cuts replies at max_tokens, and its replies do not follow our formats.
"""

from __future__ import annotations

import json

import pytest
from conftest import MINILM, SENTENCE256, describe

pytestmark = pytest.mark.llm_server

SCORING = {"bootstrap_samples": 200, "bertscore": {"baseline_pairs": 50}}
# questions per run: each call takes seconds on the real server (one at a time), so as few as show the behaviour
QUEUED_LIMIT = 4  # x 2 configurations: enough calls for the capacity learner to hold requests back
CONTEXT_LIMIT = 2  # questions the spec with the server's window answers, each reply cut at max_tokens 4


def _spec(make_spec, name: str, llm_server, llm: dict, **kw):
    base = {
        "embeddings": [MINILM],
        "generator": {"kind": "llm"},
        "llm": llm_server.llm(**llm),
        "prices": {llm_server.model: {"input": 0.0, "output": 0.0}},
        "scoring": SCORING,
    }
    return make_spec(name, **{**base, **kw})


@pytest.fixture(scope="module")
def queued_run(make_spec, shared_cache, run_cli, read_run, llm_server):
    """Two configurations answered by the real server with ``concurrency: 8, timeout: 60`` (the server computes
    one request at a time), then a faithfulness judge on the one stage 1 selects."""
    spec = _spec(
        make_spec,
        "real-queue",
        llm_server,
        {"max_tokens": 24, "concurrency": 8, "timeout": 60},
        splitters=[SENTENCE256],
        retrievers=[{"kind": "bm25"}, {"kind": "vector"}],
        top_k=[1],
        # the test questions only: the judgements are here for their service times, not for a verdict
        stage2={"judges": ["faithfulness"], "top_n": 1, "select_metric": "ndcg", "validation_share": 0},
    )
    before = llm_server.generations()
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", QUEUED_LIMIT, timeout=900)
    assert proc.returncode in (0, 3), describe(proc)
    return {
        "run": read_run(spec.run_dir, proc),
        "proc": proc,
        "generations": llm_server.generations() - before,
        "spec": spec,
    }


def test_a_server_that_queues_gets_what_it_serves_and_nothing_twice(queued_run, llm_server):
    inv = queued_run["run"].invocation
    (endpoint,) = inv["llm_endpoints"]
    cap = endpoint["capacity"]
    assert inv["llm_calls_made"] > 0 and endpoint["timeouts"] == 0
    # it started at one request and held the rest back instead of sending 8 into the server's queue. Where it
    # ends depends on how steady the server's speed was (a busy machine can make a level look like a gain for a
    # window of replies); the learner itself is checked on simulated servers in test_llm_capacity.py
    assert cap["adaptive"] and cap["maximum"] == 8 and cap["lowest"] == 1
    assert cap["waited"] > 0 and endpoint["max_in_flight"] < 8
    if llm_server.generations() >= 0:  # the server's own count: at most 5 % more than the calls made
        assert inv["llm_calls_made"] <= queued_run["generations"] <= 1.05 * inv["llm_calls_made"], (
            queued_run["generations"],
            inv,
        )
    # the line that says so
    assert "request(s) in flight at the end, of llm.concurrency 8" in queued_run["proc"].stdout


def test_latency_is_service_time_apart_from_the_queue(queued_run):
    recs = queued_run["run"].records
    ok = recs[recs["error"].isna()]
    assert len(ok) == 2 * QUEUED_LIMIT
    assert (ok["generation_ms"] <= ok["generation_wall_ms"] + 1e-6).all()
    assert ok["invocation"].nunique() == 1
    # the judge's calls: service time recorded per judgement, none unknown once the server is known to be serial
    journal_llm = [json.loads(p) for (p,) in _judgements(queued_run["run"].run_dir)]
    assert journal_llm and all(j["llm"]["llm_service_ms"] <= j["llm"]["llm_ms"] + 1e-6 for j in journal_llm)


def test_a_served_answer_streams_token_by_token_from_the_real_server(queued_run, run_cli, tmp_path, llm_server):
    """The queued run's BM25 configuration exported and served: a question streams the server's tokens as they
    come (several pieces); asked again whole, the same text comes from the cache, with no generation."""
    import openai
    from served_app import running

    import ragsweep
    from ragsweep.serve import make_app

    run = queued_run["run"]
    recs = run.records[run.records["error"].isna()]
    cid = next(c for c in recs["config_id"].unique() if "bm25" in c)
    proc = run_cli("export", run.run_dir, cid, "--out", tmp_path / "pick")
    assert proc.returncode == 0, describe(proc)
    row = recs[recs["config_id"] == cid].iloc[0]
    pipeline = ragsweep.load_pipeline(tmp_path / "pick")
    try:
        with running(make_app(pipeline)) as url:
            client = openai.OpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0, timeout=300)

            def chat(question: str, stream: bool):
                messages = [{"role": "user", "content": question}]
                return client.chat.completions.create(model=cid, messages=messages, stream=stream)

            before = llm_server.generations()  # an export carries no LLM replies: each question is generated
            known = [c.choices[0].delta.content or "" for c in chat(row["question"], True)]
            assert sum(bool(t) for t in known) > 1, known  # the tokens as they came, not one piece
            # the same text asked whole: the streamed reply was cached (llama.cpp need not write the sweep's answer
            # again token for token: its prompt cache changes how it batches; the run's own answers are replayed in
            # test_serve_stream.py)
            assert chat(row["question"], False).choices[0].message.content == "".join(known)
            assert llm_server.generations() in (before + 1, -1)
    finally:
        pipeline.close()


def _judgements(run_dir):
    import sqlite3

    db = sqlite3.connect(str(run_dir / "journal.sqlite"))
    try:
        return db.execute("SELECT payload FROM judgement").fetchall()
    finally:
        db.close()


def test_judge_replies_are_shown_whatever_they_are(queued_run, run_cli):
    proc = run_cli("show", queued_run["run"].run_dir)
    assert proc.returncode == 0, describe(proc)
    # per judge: how many were unmeasured, of how many, with an example reason when any were
    assert "faithfulness: " in proc.stdout and "judgements unmeasured" in proc.stdout


def test_a_context_window_larger_than_the_servers_is_refused_at_start_up(
    make_spec, shared_cache, run_cli, read_run, llm_server
):
    """llama-cpp-python states no window (no /props, no n_ctx in /v1/models), but refuses a prompt of its window or
    more before computing it: a probe of the spec's 8192 tokens learns its 2048, and the run stops at start-up in
    one line, before any answer (it used to run to the end, every long prompt refused one by one). With the
    server's window the same spec answers, its replies cut at max_tokens 4 and said to be."""
    kw = {"splitters": [SENTENCE256], "retrievers": [{"kind": "bm25"}], "top_k": [1]}
    spec = _spec(make_spec, "real-context", llm_server, {"max_tokens": 4, "context_window": 8192}, **kw)
    before = llm_server.generations()
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", CONTEXT_LIMIT, timeout=900)
    assert proc.returncode == 2, describe(proc)
    (line,) = proc.stderr.strip().splitlines()
    assert f"llm.context_window: 8192 tokens, but the server at {llm_server.base_url} holds 2048" in line
    assert "llama-cpp-python: a longer prompt refused (probe)" in line and "set llm.context_window: 2048" in line
    assert llm_server.generations() == before  # the probe was refused before any generation
    fits = _spec(make_spec, "real-context-fits", llm_server, {"max_tokens": 4}, **kw)
    proc = run_cli("run", fits.path, "--cache", shared_cache, "--limit", CONTEXT_LIMIT, timeout=900)
    assert proc.returncode == 0, describe(proc)
    recs = read_run(fits.run_dir, proc).records
    assert recs["error"].isna().all() and recs["truncated"].all() and len(recs) == CONTEXT_LIMIT
    assert "were cut at llm.max_tokens" in proc.stdout


@pytest.mark.slow  # 11 s of generation; by default generate's checks run against scripted replies over HTTP
# (test_generate.py) and the real server answers and judges in the queued run above
def test_generate_on_a_real_model_keeps_only_real_questions(tmp_path, run_cli, llm_server, seeded_cache):
    """Whatever the small model writes, what is kept is verified, and the exit code says how many."""
    import yaml

    spec = tmp_path / "gen.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "gen",
                "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
                "splitters": [SENTENCE256],
                "embeddings": [MINILM],
                "retrievers": [{"kind": "bm25"}],
                "llm": llm_server.llm(max_tokens=200),
                "prices": {llm_server.model: {"input": 0.0, "output": 0.0}},
                "generate": {"generator": "llm", "questions": 2, "rounds": 1, "mix": {"simple": 1}},
            }
        )
    )
    out = tmp_path / "q.jsonl"
    proc = run_cli("generate", spec, "--out", out, "--cache", seeded_cache, timeout=900)
    written = [json.loads(line) for line in out.read_text().splitlines()] if out.is_file() else []
    assert proc.returncode == (0 if len(written) == 2 else 3 if written else 2), describe(proc)
    assert f"{len(written)} of 2 questions written" in proc.stdout, describe(proc)
    if not written:
        assert len(proc.stderr.strip().splitlines()) == 1
    for q in written:
        assert "<" not in q["question"] and q.get("evidence")
