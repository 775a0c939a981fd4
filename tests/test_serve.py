"""``ragsweep serve``'s API over real HTTP on loopback: concurrent questions get the run's answers and sources,
an OpenAI client gets the answer as a chat completion, bad requests get a 4xx JSON line, and nothing stops the
server."""

from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from conftest import describe
from served_app import mutations, running

import ragsweep

KEYS = ("rank", "doc_id", "start", "end", "score")
USER = {"role": "user", "content": "Who may terminate the lease?"}


@pytest.fixture(scope="module")
def served(base_run, run_cli, tmp_path_factory):
    """An exported vector configuration of the reference sweep, served by uvicorn in a thread of this process."""

    from ragsweep.serve import make_app

    cid = "sentence256-minilm-vector-k5"
    folder = tmp_path_factory.mktemp("served") / cid
    proc = run_cli("export", base_run.run_dir, cid, "--out", folder)
    assert proc.returncode == 0, describe(proc)
    pipeline = ragsweep.load_pipeline(folder)
    try:
        with running(make_app(pipeline)) as url:
            yield url, cid, base_run
    finally:
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
    assert httpx.get(f"{url}/health").json() == {"status": "ok", "config_id": cid, "queued": 0}


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
        ("GET", "/v1/nowhere", None, 404, "this server answers POST /query, POST /v1/chat/completions"),
        ("POST", "/query", {"question": " \t\x00\u200b\n"}, 400, "question: no text, only blanks or control"),
        ("POST", "/query", {"question": "x", "answer": "yes"}, 400, "answer: Input should be a valid boolean"),
        ("POST", "/query", {"question": 5}, 400, "question: Input should be a valid string"),
        ("POST", "/v1/chat/completions", {"messages": [USER], "stream": "yes"}, 400, "stream: Input should be"),
        (
            "POST",
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]},
            400,
            "messages.0.content",
        ),
        (
            "POST",
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
            400,
            "messages.0.content.0: a 'image_url' part; this server reads text parts only",
        ),
        ("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "\x01\x02 "}]}, 400, "no text"),
        ("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "x" * 10_001}]}, 400, "10001 char"),
        (
            "POST",
            "/v1/chat/completions",
            {"messages": [{"role": "assistant", "content": "y" * 9_000}] * 5 + [USER]},
            400,
            "messages: 45028 characters in all, more than 40000",
        ),
        ("POST", "/v1/completions", {"prompt": ["a", "b"]}, 400, "prompt: 2 prompts; send one"),
        ("POST", "/v1/completions", {"model": "x"}, 400, "prompt: Field required"),
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


def test_openai_clients_stream_and_complete_the_runs_answer(served):
    """The ``openai`` client, sync and async, chat and completions, streamed and whole: the run's answer, the
    sources in the last chunk's extra field, a final chunk with finish_reason."""
    import asyncio

    from openai import AsyncOpenAI, OpenAI

    url, cid, run = served
    row = _rows(run, cid).iloc[0]
    doc_ids = [s["doc_id"] for s in row["sources"]]
    messages = [{"role": "user", "content": row["question"]}]
    client = OpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0)
    chunks = list(client.chat.completions.create(model=cid, messages=messages, stream=True))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == row["answer"]
    assert [c.choices[0].finish_reason for c in chunks][-1] == "stop"
    assert [s["doc_id"] for s in chunks[-1].model_extra["sources"]] == doc_ids
    whole = client.completions.create(model=cid, prompt=row["question"])
    assert whole.choices[0].text == row["answer"] and whole.model == cid
    streamed = list(client.completions.create(model=cid, prompt=row["question"], stream=True))
    assert "".join(c.choices[0].text for c in streamed) == row["answer"]
    assert streamed[-1].choices[0].finish_reason == "stop" and streamed[-1].model_extra["sources"]

    async def both() -> tuple[str, str]:
        aclient = AsyncOpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0)
        reply = await aclient.chat.completions.create(model=cid, messages=messages)
        parts = [
            c.choices[0].delta.content or ""
            async for c in await aclient.chat.completions.create(model=cid, messages=messages, stream=True)
        ]
        await aclient.close()
        return reply.choices[0].message.content, "".join(parts)

    assert asyncio.run(both()) == (row["answer"], row["answer"])


@pytest.mark.parametrize("chat_model", [False, True])
def test_llamaindex_openai_like_gets_the_answer_in_both_modes(served, chat_model):
    """``OpenAILike`` calls /v1/completions by default (``is_chat_model`` false) and /v1/chat/completions
    otherwise; whole and streamed, it gets the run's answer."""
    from llama_index.core.llms import ChatMessage
    from llama_index.llms.openai_like import OpenAILike

    url, cid, run = served
    row = _rows(run, cid).iloc[1]
    llm = OpenAILike(model=cid, api_base=f"{url}/v1", api_key="not-needed", is_chat_model=chat_model, max_retries=0)
    if chat_model:
        message = [ChatMessage(role="user", content=row["question"])]
        assert llm.chat(message).message.content == row["answer"]
        assert list(llm.stream_chat(message))[-1].message.content == row["answer"]
    else:
        assert llm.complete(row["question"]).text == row["answer"]
        assert list(llm.stream_complete(row["question"]))[-1].text == row["answer"]


class _Double:
    """A pipeline double for the HTTP layer alone: a fixed answer, or (``fail``) an unexpected error as a bug
    would raise."""

    config_id = "double"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def ask(self, question: str, answer: bool = True, stream=None):
        if self.fail:
            raise ValueError("a bug deep inside\nwith a second line")
        source = {"rank": 1, "doc_id": "d", "start": 0, "end": 3, "score": float("nan")}  # a score JSON cannot hold
        return {"answer": f"asked: {question}", "sources": [source]}


def _reply_of(raw: socket.socket) -> str:
    """One whole HTTP reply read from ``raw``: its head, then as many bytes as its Content-Length says (a server
    may write the head and the body apart)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = raw.recv(65536)
        assert chunk, f"closed early: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")))
    while len(body) < length:
        chunk = raw.recv(65536)
        assert chunk, f"closed early: {data!r}"
        body += chunk
    return (head + b"\r\n\r\n" + body).decode("latin-1")


class _Gated(_Double):
    """Answers once ``open`` is set, saying when a question has reached it."""

    def __init__(self) -> None:
        super().__init__()
        self.open, self.entered = threading.Event(), threading.Event()

    def ask(self, question: str, answer: bool = True, stream=None):
        self.entered.set()
        assert self.open.wait(60)
        return super().ask(question, answer)


def test_a_full_queue_answers_503_with_retry_after_and_the_queued_are_answered():
    from ragsweep.serve import make_app

    pipeline = _Gated()
    with running(make_app(pipeline, max_queue=2)) as url, ThreadPoolExecutor(max_workers=2) as pool:
        first = pool.submit(httpx.post, f"{url}/query", json={"question": "one"}, timeout=60)
        assert pipeline.entered.wait(30)
        second = pool.submit(httpx.post, f"{url}/query", json={"question": "two"}, timeout=60)
        deadline = time.monotonic() + 30
        while httpx.get(f"{url}/health").json()["queued"] < 2:  # the second is waiting behind the first
            assert time.monotonic() < deadline
            time.sleep(0.02)
        refused = httpx.post(f"{url}/v1/chat/completions", json={"messages": [USER]}, timeout=10)
        assert refused.status_code == 503 and int(refused.headers["retry-after"]) >= 1
        assert "the most this server queues" in refused.json()["error"]["message"]
        pipeline.open.set()
        assert [f.result().json()["answer"] for f in (first, second)] == ["asked: one", "asked: two"]
        assert httpx.get(f"{url}/health").json()["queued"] == 0
        assert httpx.post(f"{url}/query", json={"question": "three"}).status_code == 200


def test_an_unexpected_failure_is_one_500_line_without_a_traceback(capfd):
    from ragsweep.serve import make_app

    with running(make_app(_Double(fail=True))) as url, httpx.Client(base_url=url, timeout=30) as client:
        for _ in range(2):  # the same keep-alive connection, twice: nothing was reset
            reply = client.post("/query", json={"question": "Who may terminate the lease?"})
            assert reply.status_code == 500
            assert reply.json()["error"]["message"] == "answering failed: ValueError: a bug deep inside"
        assert client.get("/health").status_code == 200
    assert "Traceback" not in capfd.readouterr().err


def test_oversized_bodies_are_refused_before_they_are_read():
    """A declared length over the cap is a 413 from the header alone; a chunked body without a length, as soon as
    it passes the cap: both answered while the body is still unfinished."""
    from ragsweep.serve import make_app

    cap = 64_000
    with running(make_app(_Double(), max_body=cap)) as url, httpx.Client(base_url=url, timeout=60) as client:
        big = {"messages": [{"role": "user", "content": "x" * 9_000}] * 8}  # 72 KB of JSON, under the chat caps
        reply = client.post("/v1/chat/completions", json=big)
        assert reply.status_code == 413 and "more than 64000" in reply.json()["error"]["message"]
        host, port = url.removeprefix("http://").split(":")
        head = "POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        declared = (head + "Content-Length: 30000000\r\n\r\n").encode() + b'{"question": "'
        chunked = (head + "Transfer-Encoding: chunked\r\n\r\n").encode() + b"3e8\r\n" + b"x" * 1000 + b"\r\n"
        for request, repeat in ((declared, 1), (chunked, 70)):
            # the body never ends: a server that read it whole before refusing would not answer at all
            with socket.create_connection((host, int(port)), timeout=30) as raw:
                raw.sendall(request if repeat == 1 else request + request[request.index(b"3e8") :] * (repeat - 1))
                reply = _reply_of(raw)
            assert reply.startswith("HTTP/1.1 413") and "more than 64000" in reply, reply[:300]
        assert client.post("/query", json={"question": "still there?"}).json()["answer"] == "asked: still there?"


def test_an_api_key_is_required_where_one_is_set_and_never_echoed():
    from openai import AuthenticationError, OpenAI

    from ragsweep.serve import make_app

    key = "s3cret-key-for-the-test"
    with running(make_app(_Double(), api_key=key)) as url:
        good = OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0)
        reply = good.chat.completions.create(model="double", messages=[USER])
        assert reply.choices[0].message.content == f"asked: {USER['content']}"
        assert reply.model_extra["sources"][0]["score"] is None  # NaN as null, not a 500
        lower = httpx.post(f"{url}/query", json={"question": "x"}, headers={"authorization": f"bearer {key}"})
        assert lower.status_code == 200  # the scheme's name has no case (RFC 7235)
        with pytest.raises(AuthenticationError) as err:
            OpenAI(base_url=f"{url}/v1", api_key="wrong", max_retries=0).models.list()
        assert "missing or wrong API key" in str(err.value) and key not in str(err.value)
        bare = httpx.post(f"{url}/query", json={"question": "x"})
        assert bare.status_code == 401 and bare.headers["www-authenticate"] == "Bearer"
        assert httpx.get(f"{url}/health").status_code == 200  # a probe needs no key
        assert httpx.get(f"{url}/docs", headers={"authorization": f"Bearer {key}"}).status_code == 404


def test_serve_beyond_loopback_needs_an_api_key(run_cli, tmp_path):
    proc = run_cli("serve", tmp_path / "nothing-here", "--host", "0.0.0.0", "--port", "0")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "--api-key-env NAME" in lines[0], describe(proc)
    proc = run_cli("serve", tmp_path / "nothing-here", "--api-key-env", "RAGSWEEP_TEST_UNSET_KEY", "--port", "0")
    assert proc.returncode == 2 and "RAGSWEEP_TEST_UNSET_KEY: the variable is unset or empty" in proc.stderr


def test_two_hundred_malformed_requests_each_get_a_4xx_line_and_the_server_goes_on(served, capfd):
    url, cid, run = served
    replies = []
    with httpx.Client(base_url=url, timeout=60, headers={"content-type": "application/json"}) as client:
        for path, content in mutations(cid, 200):
            reply = client.post(path, content=content)
            replies.append((path, content, reply.status_code))
            assert 400 <= reply.status_code < 500, (path, content, reply.text)
            message = reply.json()["error"]["message"]
            assert message and "\n" not in message
        assert len({c for _, c, _ in replies}) > 50  # varied: 73 distinct bodies
        row = _rows(run, cid).iloc[0]
        after = client.post("/query", json={"question": row["question"]})
        assert after.status_code == 200 and after.json()["answer"] == row["answer"]
    assert "Traceback" not in capfd.readouterr().err
