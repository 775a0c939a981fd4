"""Tests for tests/fake_openai.py, driven through the official openai client (and LlamaIndex) like the product is.

Why: later integration tests and benchmarks trust this fake to behave like an OpenAI-compatible server (status
codes, headers, usage, embeddings encodings, judge prompts), so its contract is pinned here.
"""

from __future__ import annotations

import base64
import http.client
import json
import math
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import openai
import procwait
import pytest
from fake_openai import FakeOpenAI, classify, count_words, fake_embedding, request_key
from llama_index.core.evaluation import correctness, faithfulness, relevancy
from llama_index.core.prompts.chat_prompts import CHAT_TEXT_QA_PROMPT
from llama_index.core.prompts.default_prompts import DEFAULT_TEXT_QA_PROMPT
from llama_index.core.retrievers.fusion_retriever import QUERY_GEN_PROMPT

HERE = Path(__file__).resolve().parent
MODEL = "gpt-4o-mini"
CONTEXT = "Paris is the capital of France. It lies on the Seine."


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI().start() as server:
        yield server


def client_for(server: FakeOpenAI | str, api_key: str = "sk-test", **kw: Any) -> openai.OpenAI:
    base = server if isinstance(server, str) else server.base_url
    return openai.OpenAI(base_url=base, api_key=api_key, max_retries=0, **kw)


def as_messages(msgs: list[Any]) -> list[dict[str, str]]:
    """LlamaIndex ChatMessages -> OpenAI message dicts."""
    return [{"role": m.role.value, "content": m.content} for m in msgs]


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def chat(client: openai.OpenAI, messages: list[dict[str, str]], **kw: Any) -> Any:
    return client.chat.completions.create(model=kw.pop("model", MODEL), messages=messages, **kw)


def judge_prompts() -> dict[str, list[dict[str, str]]]:
    """One prompt per kind, built from LlamaIndex's own default templates."""
    return {
        "correctness": as_messages(
            correctness.DEFAULT_EVAL_TEMPLATE.format_messages(
                query="What is the capital of France?", reference_answer="Paris", generated_answer="Paris."
            )
        ),
        "faithfulness": user(faithfulness.DEFAULT_EVAL_TEMPLATE.format(query_str="Paris.", context_str=CONTEXT)),
        "faithfulness_refine": user(
            faithfulness.DEFAULT_REFINE_TEMPLATE.format(query_str="Paris.", existing_answer="YES", context_msg=CONTEXT)
        ),
        "relevancy": user(
            relevancy.DEFAULT_EVAL_TEMPLATE.format(
                query_str="Question: capital?\nResponse: Paris.", context_str=CONTEXT
            )
        ),
        "relevancy_refine": user(
            relevancy.DEFAULT_REFINE_TEMPLATE.format(
                query_str="Question: capital?\nResponse: Paris.", existing_answer="YES", context_msg=CONTEXT
            )
        ),
        "query_gen": user(QUERY_GEN_PROMPT.format(num_queries=3, query="capital of France")),
        "generation": as_messages(CHAT_TEXT_QA_PROMPT.format_messages(context_str=CONTEXT, query_str="Capital?")),
    }


# --- default replies and usage ---------------------------------------------------------------------------------


def test_default_replies_for_each_kind_and_usage(fake: FakeOpenAI) -> None:
    client = client_for(fake)
    expected = {
        "correctness": "4.0\nThe generated answer is relevant and correct.",
        "faithfulness": "YES",
        "faithfulness_refine": "YES",
        "relevancy": "YES",
        "relevancy_refine": "YES",
        "query_gen": "capital of France variant 1\ncapital of France variant 2\ncapital of France variant 3",
        "generation": "Paris is the capital of France.",
    }
    for name, messages in judge_prompts().items():
        text = " ".join(m["content"] for m in messages)
        assert classify(text) == name.removesuffix("_refine"), name
        resp = chat(client, messages, temperature=0.0, max_tokens=50, seed=3)
        content = resp.choices[0].message.content
        assert content == expected[name], name
        assert resp.object == "chat.completion" and resp.model == MODEL
        assert resp.choices[0].finish_reason == "stop" and resp.choices[0].message.role == "assistant"
        p, c = count_words(text), count_words(content)
        assert (resp.usage.prompt_tokens, resp.usage.completion_tokens, resp.usage.total_tokens) == (p, c, p + c)

    calls = fake.calls()
    assert [c["kind"] for c in calls] == [
        "correctness",
        "faithfulness",
        "faithfulness",
        "relevancy",
        "relevancy",
        "query_gen",
        "generation",
    ]
    gen = judge_prompts()["generation"]
    assert calls[-1]["key"] == request_key(MODEL, gen, 0.0, 50, 3)
    assert all(c["status"] == 200 and c["auth_ok"] and c["endpoint"] == "chat" for c in calls)
    assert all(c["t_end"] >= c["t_start"] for c in calls)
    starts = [e for e in fake.calls(include_events=True) if e.get("event") == "start"]
    assert [s["key"] for s in starts] == [c["key"] for c in calls]
    assert fake.stats()["by_kind"] == {
        "correctness": 1,
        "faithfulness": 2,
        "relevancy": 2,
        "query_gen": 1,
        "generation": 1,
    }


def test_generation_from_plain_text_template_and_fallback(fake: FakeOpenAI) -> None:
    client = client_for(fake)
    long_ctx = " ".join(f"w{i}" for i in range(60)) + ". Second sentence."
    prompt = DEFAULT_TEXT_QA_PROMPT.format(context_str=long_ctx, query_str="q?")
    assert chat(client, user(prompt)).choices[0].message.content == " ".join(f"w{i}" for i in range(40))
    assert chat(client, user("Hello there.")).choices[0].message.content == "I don't know."


def test_streaming_chat_is_supported(fake: FakeOpenAI) -> None:
    stream = chat(
        client_for(fake), judge_prompts()["faithfulness"], stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices) == "YES"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 1


def test_models_endpoint_and_keep_alive(fake: FakeOpenAI) -> None:
    assert [m.id for m in client_for(fake).models.list()] == ["fake-model"]
    conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
    for _ in range(3):  # several requests over one connection: HTTP/1.1 keep-alive with Content-Length
        conn.request("GET", "/models")  # the /v1 prefix is optional
        resp = conn.getresponse()
        assert resp.status == 200 and json.loads(resp.read())["object"] == "list"
    conn.close()


# --- scripted rules --------------------------------------------------------------------------------------------


def test_429_with_retry_after_header(fake: FakeOpenAI) -> None:
    fake.set_rules([{"kind": "correctness", "action": "status", "status": 429, "retry_after": 7}])
    client = client_for(fake)
    with pytest.raises(openai.RateLimitError) as exc:
        chat(client, judge_prompts()["correctness"])
    assert exc.value.status_code == 429
    assert exc.value.response.headers["retry-after"] == "7"
    assert exc.value.code == "rate_limit_exceeded"
    assert chat(client, judge_prompts()["faithfulness"]).choices[0].message.content == "YES"  # other kinds unaffected
    assert fake.stats()["by_status"] == {"429": 1, "200": 1}


def test_500_and_503_are_internal_server_errors(fake: FakeOpenAI) -> None:
    fake.set_rules([{"action": "status", "status": 500, "times": 1}, {"action": "status", "status": 503, "times": 1}])
    client = client_for(fake)
    with pytest.raises(openai.InternalServerError) as e500:
        chat(client, user("hi"))
    with pytest.raises(openai.InternalServerError) as e503:
        chat(client, user("hi"))
    assert (e500.value.status_code, e503.value.status_code) == (500, 503)


def test_times_exhaustion_then_default(fake: FakeOpenAI) -> None:
    fake.set_rules([{"kind": "faithfulness", "action": "status", "status": 500, "times": 2}])
    client = client_for(fake)
    for _ in range(2):
        with pytest.raises(openai.InternalServerError):
            chat(client, judge_prompts()["faithfulness"])
    assert chat(client, judge_prompts()["faithfulness"]).choices[0].message.content == "YES"
    assert [r["used"] for r in fake.rules()] == [2]
    assert [c["status"] for c in fake.calls()] == [500, 500, 200]


def test_malformed_and_reply_rules_with_match(fake: FakeOpenAI) -> None:
    fake.set_rules(
        [
            {"kind": "correctness", "match": "Berlin", "action": "malformed"},
            {"kind": "correctness", "action": "reply", "reply": "2.0\nWrong city.", "times": 1},
        ]
    )
    client = client_for(fake)
    berlin = as_messages(
        correctness.DEFAULT_EVAL_TEMPLATE.format_messages(
            query="Capital of France?", reference_answer="Paris", generated_answer="Berlin"
        )
    )
    assert chat(client, berlin).choices[0].message.content == "I think the answer is fine."
    assert chat(client, judge_prompts()["correctness"]).choices[0].message.content == "2.0\nWrong city."
    assert chat(client, judge_prompts()["correctness"]).choices[0].message.content.startswith("4.0\n")
    fake.set_rules([{"action": "malformed", "reply": "maybe?"}])
    assert chat(client, judge_prompts()["relevancy"]).choices[0].message.content == "maybe?"


def test_drop_is_a_connection_error_and_server_survives(fake: FakeOpenAI) -> None:
    fake.set_rules([{"action": "drop", "times": 1}])
    client = client_for(fake)
    with pytest.raises(openai.APIConnectionError):
        chat(client, user("hi"))
    assert chat(client, user("hi")).choices[0].message.content == "I don't know."
    assert [c["status"] for c in fake.calls()] == [0, 200]


def test_sleep_provokes_client_timeout_and_start_events_show_in_flight(fake: FakeOpenAI) -> None:
    # the server sleeps 3 s, the client gives up at 0.2 s: "not completed" holds however slowly the machine runs
    fake.set_rules([{"action": "sleep", "delay_ms": 3000, "times": 1}])
    client = client_for(fake, timeout=0.2)
    with pytest.raises(openai.APITimeoutError):
        chat(client, user("slow one"))
    events = fake.calls(include_events=True)
    assert [e.get("event") for e in events] == ["start"] and fake.calls() == []  # started, not completed
    deadline = time.time() + 30
    while not fake.calls() and time.time() < deadline:
        time.sleep(0.02)
    assert fake.calls()[0]["key"] == events[0]["key"]  # the server finished it after the client left


def test_rules_validation_and_runtime_replacement(fake: FakeOpenAI) -> None:
    with pytest.raises(ValueError):
        fake.set_rules([{"action": "explode"}])
    with pytest.raises(ValueError):
        fake.set_rules([{"action": "status"}])  # no status code
    req = urllib.request.Request(f"{fake.base_url}/_rules", data=b'[{"kind": "nope"}]', method="POST")
    with pytest.raises(urllib.error.HTTPError) as bad:
        urllib.request.urlopen(req, timeout=5)
    assert bad.value.code == 400
    req = urllib.request.Request(
        f"{fake.base_url}/_rules", method="POST", data=json.dumps([{"action": "reply", "reply": "scripted"}]).encode()
    )
    assert json.loads(urllib.request.urlopen(req, timeout=5).read())["rules"] == 1
    assert chat(client_for(fake), user("x")).choices[0].message.content == "scripted"


# --- auth and models -------------------------------------------------------------------------------------------


def test_wrong_key_is_401_echoing_the_key_and_unknown_model_is_404(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    with FakeOpenAI(api_key="sk-right", models=[MODEL], log_path=str(log)).start() as server:
        with pytest.raises(openai.AuthenticationError) as auth:
            chat(client_for(server, api_key="sk-wrong-SECRET-123"), user("hi"))
        assert auth.value.status_code == 401 and auth.value.code == "invalid_api_key"
        assert "Incorrect API key provided: sk-wrong-SECRET-123" in str(auth.value)

        good = client_for(server, api_key="sk-right")
        with pytest.raises(openai.NotFoundError) as nf:
            chat(good, user("hi"), model="gpt-nope")
        assert nf.value.code == "model_not_found" and "The model `gpt-nope` does not exist" in str(nf.value)
        assert chat(good, user("hi")).choices[0].message.content == "I don't know."
        assert [m.id for m in good.models.list()] == [MODEL]
        calls = server.calls()
    assert [(c["status"], c["auth_ok"]) for c in calls] == [(401, False), (404, True), (200, True)]
    text = log.read_text()
    assert "sk-wrong-SECRET-123" not in text and "sk-right" not in text  # the Authorization header is never logged
    assert [json.loads(line) for line in text.splitlines() if "event" not in json.loads(line)] == calls


# --- embeddings ------------------------------------------------------------------------------------------------


def test_embeddings_float_and_base64(fake: FakeOpenAI) -> None:
    client = client_for(fake)
    floats = client.embeddings.create(
        model="text-embedding-3-small", input=["alpha beta", "gamma", "alpha beta"], encoding_format="float"
    )
    vecs = [d.embedding for d in floats.data]
    assert [d.index for d in floats.data] == [0, 1, 2] and len(vecs[0]) == 64
    assert vecs[0] == vecs[2] and vecs[0] != vecs[1]
    assert math.isclose(sum(v * v for v in vecs[1]), 1.0, rel_tol=1e-9)
    assert vecs[0] == fake_embedding("alpha beta")
    assert floats.usage.prompt_tokens == 5 == floats.usage.total_tokens  # 2 + 1 + 2 words

    # The client asks for base64 by default and decodes it itself.
    b64 = client.embeddings.create(model="text-embedding-3-small", input="gamma", dimensions=16)
    assert len(b64.data[0].embedding) == 16
    assert all(math.isclose(a, b, abs_tol=1e-6) for a, b in zip(b64.data[0].embedding, fake_embedding("gamma", 16)))

    with urllib.request.urlopen(
        urllib.request.Request(
            f"{fake.base_url}/embeddings",
            method="POST",
            headers={"Content-Type": "application/json"},
            data=json.dumps({"model": "m", "input": "gamma", "encoding_format": "base64"}).encode(),
        ),
        timeout=5,
    ) as r:
        raw = json.loads(r.read())["data"][0]["embedding"]
    decoded = struct.unpack("<64f", base64.b64decode(raw))
    assert all(math.isclose(a, b, abs_tol=1e-6) for a, b in zip(decoded, vecs[1]))

    fake.set_rules([{"kind": "embeddings", "action": "status", "status": 503, "times": 1}])
    with pytest.raises(openai.InternalServerError):
        client.embeddings.create(model="m", input="x")
    assert [c["endpoint"] for c in fake.calls()][-1] == "embeddings"


# --- concurrency -----------------------------------------------------------------------------------------------


def test_concurrent_requests_overlap() -> None:
    with FakeOpenAI(latency_ms=200).start() as server:
        client = client_for(server)
        errors: list[BaseException] = []

        def one(i: int) -> None:
            try:
                chat(client, user(f"question {i}"))
            except BaseException as exc:  # surfaced by the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(40)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        stats = server.stats()
    assert not errors
    assert elapsed < procwait.scaled(3.0), elapsed  # serial would take 40 x 0.2 = 8 s
    assert stats["calls"] == 40 and stats["max_in_flight"] > 10 and stats["in_flight"] == 0


# --- LlamaIndex end to end ------------------------------------------------------------------------------------


def test_llamaindex_judges_and_embeddings_against_the_fake(fake: FakeOpenAI) -> None:
    from llama_index.embeddings.openai import OpenAIEmbedding
    from llama_index.llms.openai import OpenAI

    llm = OpenAI(
        model=MODEL, api_base=fake.base_url, api_key="sk-test", max_retries=0, reuse_client=False
    )  # sync evaluate() runs each call in a fresh event loop
    result = correctness.CorrectnessEvaluator(llm=llm).evaluate(
        query="Capital of France?", response="Paris.", reference="Paris"
    )
    assert result.score == 4.0 and result.passing
    faith = faithfulness.FaithfulnessEvaluator(llm=llm).evaluate(response="Paris.", contexts=[CONTEXT])
    rel = relevancy.RelevancyEvaluator(llm=llm).evaluate(query="Capital?", response="Paris.", contexts=[CONTEXT])
    assert faith.passing and rel.passing
    emb = OpenAIEmbedding(model="text-embedding-3-small", api_base=fake.base_url, api_key="sk-test", max_retries=0)
    assert emb.get_text_embedding("gamma") == pytest.approx(fake_embedding("gamma"), abs=1e-6)
    assert {c["kind"] for c in fake.calls()} == {"correctness", "faithfulness", "relevancy", "embeddings"}


# --- as a subprocess -------------------------------------------------------------------------------------------


def test_subprocess_cli(tmp_path: Path) -> None:
    script = tmp_path / "rules.json"
    script.write_text(
        json.dumps([{"kind": "relevancy", "action": "status", "status": 429, "retry_after": 1, "times": 1}])
    )
    log = tmp_path / "calls.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "fake_openai.py"),
            "--port",
            "0",
            "--script",
            str(script),
            "--log",
            str(log),
            "--api-key",
            "sk-cli",
            "--models",
            f"{MODEL},text-embedding-3-small",
            "--latency-ms",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on http://127.0.0.1:") and line.endswith("/v1")
        base = line.removeprefix("listening on ")
        client = client_for(base, api_key="sk-cli")
        with pytest.raises(openai.RateLimitError) as rl:
            chat(client, judge_prompts()["relevancy"])
        assert rl.value.response.headers["retry-after"] == "1"
        assert chat(client, judge_prompts()["relevancy"]).choices[0].message.content == "YES"
        assert len(client.embeddings.create(model="text-embedding-3-small", input="x").data[0].embedding) == 64
        with pytest.raises(openai.AuthenticationError):
            chat(client_for(base, api_key="nope"), user("hi"))
        stats = json.loads(urllib.request.urlopen(f"{base}/_stats", timeout=5).read())
        assert stats["calls"] == 4 and stats["by_status"] == {"429": 1, "200": 2, "401": 1}
    finally:
        proc.terminate()
        proc.wait(timeout=5)
    records = [json.loads(x) for x in log.read_text().splitlines()]
    done = [r for r in records if "event" not in r]
    assert [(r["endpoint"], r["kind"], r["status"]) for r in done] == [
        ("chat", "relevancy", 429),
        ("chat", "relevancy", 200),
        ("embeddings", "embeddings", 200),
        ("chat", "generation", 401),
    ]
    assert sum(1 for r in records if r.get("event") == "start") == 3
    assert proc.stderr is not None and proc.stderr.read() == ""  # no per-request logging
