"""``ragsweep serve``'s API over real HTTP on loopback: concurrent questions get the run's answers and sources,
an OpenAI client gets the answer as a chat completion, bad requests get a 4xx JSON line, and nothing stops the
server."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from conftest import describe, free_port

import ragsweep

KEYS = ("rank", "doc_id", "start", "end", "score")
USER = {"role": "user", "content": "Who may terminate the lease?"}


@pytest.fixture(scope="module")
def served(base_run, run_cli, tmp_path_factory):
    """An exported vector configuration of the reference sweep, served by uvicorn in a thread of this process."""
    import uvicorn

    from ragsweep.serve import make_app

    cid = "sentence256-minilm-vector-k5"
    folder = tmp_path_factory.mktemp("served") / cid
    proc = run_cli("export", base_run.run_dir, cid, "--out", folder)
    assert proc.returncode == 0, describe(proc)
    pipeline = ragsweep.load_pipeline(folder)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(make_app(pipeline), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", cid, base_run
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        pipeline.close()


def _rows(run, cid):
    return run.records[run.records["config_id"] == cid]


def test_concurrent_queries_get_the_runs_answers_and_sources(served):
    url, cid, run = served
    rows = _rows(run, cid)

    def ask(question: str) -> httpx.Response:
        return httpx.post(f"{url}/query", json={"question": question}, timeout=120)

    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(pool.map(ask, rows["question"]))
    assert [r.status_code for r in replies] == [200] * len(rows)
    for row, reply in zip(rows.itertuples(), replies):
        body = reply.json()
        assert body["config_id"] == cid and body["answer"] == row.answer
        assert [tuple(s[k] for k in KEYS) for s in body["sources"]] == [tuple(s[k] for k in KEYS) for s in row.sources]
        assert all(s["text"] for s in body["sources"])
    assert httpx.get(f"{url}/health").json() == {"status": "ok", "config_id": cid}


def test_an_openai_client_gets_the_answer_as_a_chat_completion(served):
    from openai import OpenAI

    url, cid, run = served
    row = _rows(run, cid).iloc[0]
    client = OpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0)
    assert [m.id for m in client.models.list()] == [cid]
    reply = client.chat.completions.create(
        model=cid,
        messages=[{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": row["question"]}],
    )
    assert reply.choices[0].message.content == row["answer"] and reply.model == cid
    assert [s["doc_id"] for s in reply.model_extra["sources"]] == [s["doc_id"] for s in row["sources"]]


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "says"),
    [
        ("POST", "/query", b"{not json", 400, "not valid JSON"),
        ("POST", "/query", {"question": ""}, 400, "question: String should have at least 1 character"),
        ("POST", "/query", {"q": "x"}, 400, "question: Field required"),
        ("POST", "/query", {"question": "x", "top_k": 3}, 400, "top_k: Extra inputs are not permitted"),
        ("POST", "/query", [1, 2], 400, "the body must be a JSON object"),
        ("GET", "/query", None, 405, "Method Not Allowed"),
        ("GET", "/nowhere", None, 404, "Not Found"),
        ("POST", "/v1/chat/completions", {"messages": [USER], "stream": True}, 400, "stream"),
        ("POST", "/v1/chat/completions", {"messages": [{"role": "system", "content": "x"}]}, 400, "role user"),
        ("POST", "/v1/chat/completions", {"messages": []}, 400, "messages: List should have at least 1 item"),
    ],
)
def test_bad_requests_get_one_json_line_and_the_server_goes_on(served, method, path, body, status, says):
    url, cid, run = served
    content = body if isinstance(body, bytes) else None
    payload = None if isinstance(body, bytes) or body is None else body
    headers = {"content-type": "application/json"} if content is not None else None
    reply = httpx.request(method, f"{url}{path}", content=content, json=payload, headers=headers, timeout=60)
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert says in error["message"] and "\n" not in error["message"], error
    after = httpx.post(f"{url}/query", json={"question": "Who may terminate the lease?", "answer": False}, timeout=60)
    assert after.status_code == 200 and after.json()["answer"] is not None


def test_serve_refuses_what_it_cannot_load_in_one_line(run_cli, tmp_path):
    proc = run_cli("serve", tmp_path / "nothing-here", "--port", "0")
    assert proc.returncode == 2 and "neither an exported pipeline" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_serve_as_a_process_prints_its_port_refuses_a_taken_one_and_stops_on_sigterm(base_run, run_cli, tmp_path):
    """``ragsweep serve FOLDER --port 0`` in a process of its own: it names the free port it took and answers
    there; a second server on that port is refused in one line before loading anything; SIGTERM stops the first
    cleanly (exit 0) and frees the port."""
    import re
    import signal
    import subprocess
    import sys

    import procwait
    from conftest import _cli_env

    cid = "sentence256-bm25-k3"  # BM25: no model to load
    proc = run_cli("export", base_run.run_dir, cid, "--out", tmp_path / "folder")
    assert proc.returncode == 0, describe(proc)
    cmd = [sys.executable, "-m", "ragsweep.cli", "serve", str(tmp_path / "folder"), "--port", "0"]
    server = subprocess.Popen(cmd, env=_cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()  # the first line names the port (or the process ended: "")
        match = re.search(r"at http://127\.0\.0\.1:(\d+) ", line)
        assert match, (line, server.poll(), server.stderr.read() if server.poll() is not None else "")
        url = f"http://127.0.0.1:{match.group(1)}"
        deadline = time.monotonic() + procwait.scaled(60)
        while True:  # uvicorn starts serving just after the line
            try:
                if httpx.get(f"{url}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                assert server.poll() is None and time.monotonic() < deadline, "the server did not come up"
                time.sleep(0.05)
        row = base_run.records[base_run.records["config_id"] == cid].iloc[0]
        got = httpx.post(f"{url}/query", json={"question": row["question"]}, timeout=60).json()
        assert [s["doc_id"] for s in got["sources"]] == [s["doc_id"] for s in row["sources"]]
        taken = run_cli("serve", tmp_path / "folder", "--port", match.group(1))
        lines = taken.stderr.strip().splitlines()
        assert taken.returncode == 2 and len(lines) == 1 and f"--port {match.group(1)}" in lines[0], describe(taken)
        assert "choose another port" in lines[0]
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=procwait.scaled(60)) == 0, server.stderr.read()
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{url}/health", timeout=5)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
