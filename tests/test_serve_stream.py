"""An LLM generator's answer streamed by ``serve`` as its server writes it, recorded as the sweep records it.

The LLM here is ``fake_openai`` over real HTTP (it streams a reply a word at a time, and can cut a stream on its
way, which a real server does not do on demand); ``test_llm_server.py`` streams from the real llama.cpp server.
Work is counted at the LLM server: a question streamed once is answered whole from the cache, and the other way
round; a stream cut after some text is not sent again (its text was shown) and is one error event.
"""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path

import httpx
import openai
import pytest
from conftest import BASE_SPEC, SENTENCE256
from fake_openai import FakeOpenAI
from served_app import running

import ragsweep

KEY = "sk-stream-7f3e"
LIMIT = 2
CID = "sentence256-bm25-k2"


@pytest.fixture(scope="module")
def streamed(tmp_path_factory, shared_cache):
    """A one-configuration LLM sweep on the scripted server, its configuration loaded and served."""
    from ragsweep.config import parse_spec
    from ragsweep.driver import SweepRequest, run_sweep
    from ragsweep.results.run import load_run
    from ragsweep.serve import make_app

    tmp = tmp_path_factory.mktemp("stream")
    with pytest.MonkeyPatch.context() as env, FakeOpenAI(api_key=KEY) as fake:
        env.setenv("STREAM_FAKE_KEY", KEY)
        data = copy.deepcopy(BASE_SPEC)
        llm = {"model": "stream-model", "base_url": fake.base_url, "api_key_env": "STREAM_FAKE_KEY", "max_retries": 2}
        data.update(
            splitters=[SENTENCE256],
            retrievers=[{"kind": "bm25"}],
            top_k=[2],
            output_dir=str(tmp),
            generator={"kind": "llm"},
            llm=llm,
        )
        req = SweepRequest(parse_spec(data), run_dir=tmp / "run", cache_dir=shared_cache, limit=LIMIT, progress=False)
        run = load_run(run_sweep(req))
        pipeline = ragsweep.load_pipeline(tmp / "run", CID)
        try:
            with running(make_app(pipeline)) as url:
                yield url, run, fake, Path(shared_cache) / "llm_calls.sqlite"
        finally:
            pipeline.close()


def _generations(fake: FakeOpenAI) -> int:
    return sum(c["kind"] == "generation" for c in fake.calls())


def _client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0)


def _chat(url: str, question: str, **kw):
    return _client(url).chat.completions.create(
        model=CID, messages=[{"role": "user", "content": question}], timeout=60, **kw
    )


def test_a_new_question_streams_word_by_word_and_is_then_answered_whole_from_the_cache(streamed):
    url, _, fake, _ = streamed
    question = "Within how many days must a breach be reported to the authority?"
    before = _generations(fake)
    chunks = list(_chat(url, question, stream=True))
    texts = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert _generations(fake) == before + 1
    assert len(texts) > 3, texts  # the server's words as they came, not one piece
    assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].model_extra["sources"]
    whole = _chat(url, question)  # the same prompt: the cache's reply, no call
    assert whole.choices[0].message.content == "".join(texts)
    assert whole.model_extra["sources"] == chunks[-1].model_extra["sources"]
    assert _generations(fake) == before + 1
    again = list(_chat(url, question, stream=True))  # from the cache: whole, in pieces
    assert "".join(c.choices[0].delta.content or "" for c in again) == "".join(texts)
    assert _generations(fake) == before + 1


def test_a_question_of_the_run_streams_the_runs_answer_without_a_call(streamed):
    url, run, fake, _ = streamed
    row = run.records[run.records["config_id"] == CID].iloc[0]
    before = _generations(fake)
    chunks = list(_chat(url, row["question"], stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == row["answer"]
    assert [s["doc_id"] for s in chunks[-1].model_extra["sources"]] == [s["doc_id"] for s in row["sources"]]
    assert _generations(fake) == before


def test_the_async_client_streams_it_too(streamed):
    url, _, fake, _ = streamed
    client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0)
    question = "Who pays the costs of arbitration under the agreement?"
    messages = [{"role": "user", "content": question}]

    async def texts() -> list[str]:
        reply = await client.chat.completions.create(model=CID, messages=messages, stream=True, timeout=60)
        return [c.choices[0].delta.content or "" async for c in reply]

    got = asyncio.run(texts())
    assert sum(bool(t) for t in got) > 3
    assert _chat(url, question).choices[0].message.content == "".join(got)


def test_a_stream_cut_once_is_sent_again_and_goes_on_where_it_stopped(streamed):
    """The server's connection drops after three words: the request is sent again, and the client, which already
    has those words, gets the rest once, with no error; the reply is cached whole with the server's token count."""
    import sqlite3

    url, _, fake, calls = streamed
    question = "Can the landlord enter the premises without notice?"
    fake.set_rules([{"kind": "generation", "cut_after": 3, "times": 1}])
    try:
        before = _generations(fake)
        chunks = list(_chat(url, question, stream=True))
    finally:
        fake.set_rules([])
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert _generations(fake) == before + 2  # the cut one, then the whole one
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert _chat(url, question).choices[0].message.content == text  # from the cache, the same text once
    assert _generations(fake) == before + 2
    last = [c for c in fake.calls() if c["kind"] == "generation"][-1]
    with sqlite3.connect(calls) as db:
        (tokens,) = db.execute("SELECT completion_tokens FROM calls ORDER BY created DESC LIMIT 1").fetchone()
    assert tokens == last["completion_tokens"] > 0  # the usage the server reported (stream_options), not a guess


def test_a_stream_cut_every_time_is_one_error_event_after_the_text_it_had(streamed):
    url, _, fake, _ = streamed
    question = "May the tenant sublet the premises without consent?"
    fake.set_rules([{"kind": "generation", "cut_after": 3}])
    try:
        before = _generations(fake)
        got = []
        with pytest.raises(openai.APIError, match=r"the reply's stream broke after \d+ characters"):
            for c in _chat(url, question, stream=True):
                got.append(c.choices[0].delta.content or "")
        assert len([t for t in got if t]) == 3  # what was written before the cut reached the client, once
        assert _generations(fake) == before + 3  # sent again llm.max_retries (2) times, each cut the same way
    finally:
        fake.set_rules([])
    assert _chat(url, question).choices[0].message.content  # the server goes on; asked again, it is answered


def test_a_failure_before_any_text_is_one_json_line_with_its_status(streamed):
    url, _, fake, _ = streamed
    fake.set_rules([{"kind": "generation", "action": "status", "status": 400, "message": "no such thing"}])
    try:
        reply = httpx.post(
            f"{url}/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "Is a deposit refundable?"}], "stream": True},
            timeout=60,
        )
    finally:
        fake.set_rules([])
    assert reply.status_code == 422 and reply.headers["content-type"].startswith("application/json")
    assert "no such thing" in reply.json()["error"]["message"]


def test_a_server_that_refuses_stream_options_is_asked_without_them(streamed):
    """Usage is asked for with ``stream_options``; a server that refuses the field (400) is asked again without
    it, from then on, and the reply's tokens are counted here. Last in the file: the served engine remembers."""
    url, _, fake, calls = streamed
    question = "Must a tenant give notice before moving out?"
    fake.stream_options = False
    try:
        before = len(fake.calls())
        chunks = list(_chat(url, question, stream=True))
        again = list(_chat(url, "How much notice must a tenant give?", stream=True))
    finally:
        fake.stream_options = True
    sent = [c for c in fake.calls()[before:] if c["kind"] == "generation"]
    assert [c["status"] for c in sent] == [400, 200, 200]  # refused once, then never sent the field again
    assert "".join(c.choices[0].delta.content or "" for c in chunks) and again[-1].choices[0].finish_reason == "stop"
    assert _chat(url, question).choices[0].message.content == "".join(c.choices[0].delta.content or "" for c in chunks)
