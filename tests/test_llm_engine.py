"""The LLM call engine against the scripted fake OpenAI server (tests/fake_openai.py), plus its parts.

Engines are built directly (``LLMEngine`` + ``SweepLLM``) on a fresh fake server per test; every
engine, cache and server is closed in teardown. Times are kept short (latencies of 0.1-0.3 s,
tiny backoffs via ``max_backoff``) so the whole file runs in well under 30 s.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from pathlib import Path
from types import SimpleNamespace

import httpx
import openai
import procwait
import pytest
from llama_index.core.base.llms.types import ChatMessage

from ragsweep.config import LLMSpec, PriceSpec, SweepSpec
from ragsweep.errors import RagsweepError
from ragsweep.llm.budget import Budget, BudgetExhausted
from ragsweep.llm.cache import LLMCallCache, call_key
from ragsweep.llm.clients import LLMClients, api_key_for, check_llms
from ragsweep.llm.engine import LLMCallError, LLMEngine, LLMFatalError
from ragsweep.llm.engine_inputs import RunTerms
from ragsweep.llm.openai_like import SweepLLM
from ragsweep.llm.pricing import cost_usd
from ragsweep.llm.ratelimit import RateLimiter, TokenBucket
from ragsweep.llm.retry import backoff_delay, is_fatal, is_retryable, retry_after_seconds
from ragsweep.llm.tokens import count_message_tokens
from ragsweep.llm.usage import Trace, llm_scope

sys.path.insert(0, str(Path(__file__).parent))
from fake_openai import FakeOpenAI  # noqa: E402

PRICE = PriceSpec(input=1, output=2)  # USD per million tokens


def user(text: str) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=text)]


def chat_calls(fake: FakeOpenAI) -> list[dict]:
    return [c for c in fake.calls() if c["endpoint"] == "chat"]


class Harness:
    """Makes fake servers, engines and SweepLLMs, and closes them all afterwards."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.fakes: list[FakeOpenAI] = []
        self.engines: list[LLMEngine] = []
        self.caches: list[LLMCallCache] = []

    def server(self, **kw) -> FakeOpenAI:
        fake = FakeOpenAI(**kw).start()
        self.fakes.append(fake)
        return fake

    def spec(self, fake: FakeOpenAI, **kw) -> LLMSpec:
        kw.setdefault("api_key_env", None)
        return LLMSpec(model=kw.pop("model", "fake-model"), base_url=fake.base_url, **kw)

    def engine(self, spec: LLMSpec, *, cache_name: str = "c.sqlite", server=None, **run_kw) -> LLMEngine:
        """An engine on ``spec``; ``run_kw``: its ``RunTerms`` (price ``PRICE`` and run ``r`` unless given)."""
        cache = LLMCallCache(self.tmp_path / cache_name)
        self.caches.append(cache)
        run_kw.setdefault("price", PRICE)
        run_kw.setdefault("run_id", "r")
        engine = LLMEngine(spec, cache, run=RunTerms(**run_kw), server=server)
        self.engines.append(engine)
        return engine

    def make(
        self,
        *,
        rules=None,
        latency_ms: float = 0.0,
        server_kw: dict | None = None,
        engine_kw=None,
        api_key: str | None = None,
        **spec_kw,
    ):
        fake = self.server(rules=rules, latency_ms=latency_ms, **(server_kw or {}))
        spec = self.spec(fake, **spec_kw)
        engine = self.engine(spec, **(engine_kw or {}))
        return fake, engine, SweepLLM(spec, engine, api_key=api_key)

    def close(self) -> None:
        for e in self.engines:
            e.close()
        for c in self.caches:
            c.close()
        for f in self.fakes:
            f.stop()


@pytest.fixture
def h(tmp_path):
    harness = Harness(tmp_path)
    yield harness
    harness.close()


# ---------------------------------------------------------------------------------------------------- retries


def test_429_retry_after_is_honoured(h):
    fake, engine, llm = h.make(rules=[{"action": "status", "status": 429, "retry_after": 0.3, "times": 2}])
    trace = Trace()
    t0 = time.perf_counter()
    with llm_scope(trace, stage="generation"):
        resp = llm.chat(user("hello there"))
    elapsed = time.perf_counter() - t0
    assert resp.message.content == "I don't know."
    assert engine.retries == 2 and trace.retries == 2
    assert engine.calls == 1 and engine.failures == 0
    assert elapsed >= 0.55, elapsed  # two waits of the server's 0.3 s
    assert [c["status"] for c in chat_calls(fake)] == [429, 429, 200]


def test_retry_after_is_capped_by_max_backoff(h):
    fake, engine, llm = h.make(
        rules=[{"action": "status", "status": 429, "retry_after": 30, "times": 1}], max_backoff=0.05
    )
    t0 = time.perf_counter()
    llm.chat(user("capped"))
    assert time.perf_counter() - t0 < procwait.scaled(5)
    assert engine.retries == 1


@pytest.mark.parametrize("status", [500, 502, 503, 408])
def test_server_errors_are_retried(h, status):
    fake, engine, llm = h.make(rules=[{"action": "status", "status": status, "times": 2}], max_backoff=0.02)
    resp = llm.chat(user(f"retry {status}"))
    assert resp.message.content == "I don't know."
    assert engine.retries == 2
    assert [c["status"] for c in chat_calls(fake)] == [status, status, 200]


def test_dropped_connection_is_retried(h):
    fake, engine, llm = h.make(rules=[{"action": "drop", "times": 1}], max_backoff=0.02)
    resp = llm.chat(user("dropped once"))
    assert resp.message.content == "I don't know."
    assert engine.retries == 1
    assert [c["status"] for c in chat_calls(fake)] == [0, 200]


def test_request_past_timeout_is_retried(h):
    fake, engine, llm = h.make(rules=[{"action": "sleep", "delay_ms": 2000, "times": 1}], timeout=0.5, max_backoff=0.02)
    t0 = time.perf_counter()
    resp = llm.chat(user("slow once"))
    elapsed = time.perf_counter() - t0
    assert resp.message.content == "I don't know."
    assert engine.retries == 1
    assert 0.45 <= elapsed < 1.8, elapsed  # cut at the 0.5 s timeout, not after the server's 2 s


def test_retries_exhausted_raise_call_error_naming_the_status(h):
    fake, engine, llm = h.make(rules=[{"action": "status", "status": 503, "times": 3}], max_retries=1, max_backoff=0.02)
    with pytest.raises(LLMCallError) as ei:
        llm.chat(user("always failing"))
    msg = str(ei.value)
    assert "503" in msg and "after 2 attempts" in msg
    assert len(chat_calls(fake)) == 2  # one try plus max_retries=1
    assert engine.failures == 1 and engine.calls == 0 and engine.retries == 1


@pytest.mark.parametrize("status", [400, 422])
def test_request_errors_are_not_retried(h, status):
    fake, engine, llm = h.make(rules=[{"action": "status", "status": status, "times": 5}], max_backoff=0.02)
    with pytest.raises(LLMCallError) as ei:
        llm.chat(user("bad request"))
    assert str(status) in str(ei.value)
    assert not isinstance(ei.value, LLMFatalError)
    assert len(chat_calls(fake)) == 1
    assert engine.retries == 0 and engine.failures == 1
    # not fatal: the next call goes through
    fake.set_rules([])
    assert llm.chat(user("good request")).message.content == "I don't know."


# ---------------------------------------------------------------------------------------------------- fatal


def test_wrong_key_is_fatal_names_endpoint_and_env_var_and_hides_key(h, tmp_path, monkeypatch):
    key = "sk-wrong-0123456789abcdef"
    monkeypatch.setenv("RAGSWEEP_TEST_LLM_KEY", key)
    fake = h.server(api_key="sk-right-key")
    llm_spec = h.spec(fake, api_key_env="RAGSWEEP_TEST_LLM_KEY")
    spec = SweepSpec(
        splitters=[{"kind": "sentence"}], retrievers=[{"kind": "bm25"}], generator={"kind": "llm"}, llm=llm_spec
    )
    clients = LLMClients(spec, tmp_path / "clients.sqlite", run_id="r")
    try:
        llm = clients.get(llm_spec)
        with pytest.raises(LLMFatalError) as ei:
            llm.chat(user("hello"))
        msg = str(ei.value)
        assert fake.base_url in msg
        assert "RAGSWEEP_TEST_LLM_KEY" in msg
        assert key not in msg and "0123456789abcdef" not in msg
        assert "\n" not in msg
        assert len(chat_calls(fake)) == 1  # not retried
        assert chat_calls(fake)[0]["auth_ok"] is False
    finally:
        clients.close()


def test_engine_scrubs_given_secrets_from_fatal_message(h):
    key = "sk-wrong-fedcba9876543210"
    fake = h.server(api_key="sk-right-key")
    spec = h.spec(fake, api_key_env="SOME_KEY_ENV")
    engine = h.engine(spec, secrets=(key,))
    llm = SweepLLM(spec, engine, api_key=key)
    with pytest.raises(LLMFatalError) as ei:
        llm.chat(user("hello"))
    assert key not in str(ei.value) and "SOME_KEY_ENV" in str(ei.value) and "***" in str(ei.value)


def test_after_a_fatal_error_calls_fail_fast_without_a_request(h):
    fake = h.server(api_key="sk-right-key")
    spec = h.spec(fake, api_key_env="SOME_KEY_ENV")
    engine = h.engine(spec)
    llm = SweepLLM(spec, engine, api_key="sk-bad-key-xyz")
    with pytest.raises(LLMFatalError):
        llm.chat(user("first"))
    n = len(chat_calls(fake))
    fake.api_key = None  # the server would now accept anything; the engine must not even ask
    t0 = time.perf_counter()
    with pytest.raises(LLMFatalError):
        llm.chat(user("second"))
    with pytest.raises(LLMFatalError):
        asyncio.run(llm.achat(user("third")))
    assert time.perf_counter() - t0 < procwait.scaled(0.5)
    assert len(chat_calls(fake)) == n == 1
    assert engine.fatal


def test_unknown_model_is_fatal_and_mentions_llm_model(h):
    fake, engine, llm = h.make(server_kw={"models": ["other"]})
    with pytest.raises(LLMFatalError) as ei:
        llm.chat(user("hello"))
    msg = str(ei.value)
    assert "llm.model" in msg and "fake-model" in msg and fake.base_url in msg
    assert len(chat_calls(fake)) == 1


@pytest.mark.parametrize("status", [401, 403, 404])
def test_fatal_statuses_are_not_retried(h, status):
    fake, engine, llm = h.make(rules=[{"action": "status", "status": status}], max_backoff=0.02)
    with pytest.raises(LLMFatalError):
        llm.chat(user("x"))
    assert len(chat_calls(fake)) == 1 and engine.retries == 0


# ---------------------------------------------------------------------------------------------------- cache


def test_identical_call_is_served_from_cache(h):
    fake, engine, llm = h.make()
    first = llm.chat(user("what is the answer"))
    assert len(chat_calls(fake)) == 1
    trace = Trace()
    with llm_scope(trace):
        second = llm.chat(user("what is the answer"))
    assert len(chat_calls(fake)) == 1  # no request
    assert second.message.content == first.message.content
    # the same usage, and said to be replayed (nothing paid for it now)
    assert {**second.additional_kwargs, "cached": False} == first.additional_kwargs
    assert second.additional_kwargs["cached"] and not first.additional_kwargs["cached"]
    assert first.additional_kwargs["prompt_tokens"] == 4  # the fake counts words
    assert engine.cache_hits == 1 and engine.calls == 1
    assert trace.calls == 1 and trace.cached == 1 and trace.cost_usd == 0


def test_cache_persists_across_engines(h):
    fake, engine, llm = h.make()
    llm.chat(user("persist me"))
    engine2 = h.engine(engine.spec)  # same cache file, a new engine (a re-run)
    llm2 = SweepLLM(engine.spec, engine2, api_key=None)
    assert llm2.chat(user("persist me")).message.content == "I don't know."
    assert len(chat_calls(fake)) == 1 and engine2.cache_hits == 1


def test_request_parameters_and_messages_are_part_of_the_key(h):
    fake, engine, llm = h.make()
    llm.chat(user("same text"))
    n = 1

    def expect_request(resp_fn):
        nonlocal n
        resp_fn()
        n += 1
        assert len(chat_calls(fake)) == n

    expect_request(lambda: llm.chat(user("same text"), temperature=0.7))
    expect_request(lambda: llm.chat(user("other text")))
    expect_request(lambda: llm.chat([ChatMessage(role="system", content="same text")]))
    # SweepLLMs of other specs share the engine (as LLMClients does): their parameters are in the key
    for variant in ({"max_tokens": 100}, {"seed": 1}, {"seed": None}, {"temperature": 0.3}):
        other = SweepLLM(engine.spec.model_copy(update=variant), engine, api_key=None)
        expect_request(lambda: other.chat(user("same text")))
    keys = [c["key"] for c in chat_calls(fake)]
    assert len(set(keys)) == len(keys)
    assert engine.cache_hits == 0
    llm.chat(user("same text"), temperature=0.7)  # and each is cached under its own key
    assert len(chat_calls(fake)) == n and engine.cache_hits == 1


def test_call_key_is_stable_across_dict_ordering():
    a = call_key("m", [{"role": "user", "content": "x"}], {"temperature": 0.0, "max_tokens": 5, "seed": 0})
    b = call_key("m", [{"content": "x", "role": "user"}], {"seed": 0, "max_tokens": 5, "temperature": 0.0})
    assert a == b and len(a) == 64
    assert a != call_key("m2", [{"role": "user", "content": "x"}], {"temperature": 0.0, "max_tokens": 5, "seed": 0})
    assert a != call_key("m", [{"role": "user", "content": "y"}], {"temperature": 0.0, "max_tokens": 5, "seed": 0})
    assert a != call_key("m", [{"role": "user", "content": "x"}], {"temperature": 0.0, "max_tokens": 5, "seed": 1})


def test_spending_and_trace_by_scope(h):
    fake, engine, llm = h.make()
    t1, t2, t3 = Trace(), Trace(), Trace()
    with llm_scope(t1, stage="generation", config_id="c1"):
        llm.chat(user("one two three"))
    with llm_scope(t2, stage="generation", config_id="c2"):
        llm.chat(user("four five"))
        llm.chat(user("six"))
        llm.chat(user("six"))  # cached: counted in the trace, not paid again
    with llm_scope(t3, stage="stage2", config_id="c1", judge="correctness"):
        llm.chat(user("judge this"))
    reply_words = 3  # "I don't know."

    def cost(p, c):
        return (p * 1 + c * 2) / 1e6

    rows = {(r["stage"], r["config_id"], r["judge"]): r for r in engine.cache.spending("r")}
    assert set(rows) == {("generation", "c1", None), ("generation", "c2", None), ("stage2", "c1", "correctness")}
    g1, g2, s2 = (
        rows[("generation", "c1", None)],
        rows[("generation", "c2", None)],
        rows[("stage2", "c1", "correctness")],
    )
    assert (g1["calls"], g1["prompt_tokens"], g1["completion_tokens"]) == (1, 3, 3)
    assert g1["cost_usd"] == pytest.approx(cost(3, 3))
    assert (g2["calls"], g2["prompt_tokens"], g2["completion_tokens"]) == (2, 3, 6)
    assert g2["cost_usd"] == pytest.approx(cost(3, 6))
    assert (s2["calls"], s2["prompt_tokens"], s2["model"]) == (1, 2, "fake-model")
    assert engine.cache.spending("someone-else") == []
    assert (t1.calls, t1.cached, t1.prompt_tokens, t1.completion_tokens) == (1, 0, 3, reply_words)
    assert t1.cost_usd == pytest.approx(cost(3, 3))
    assert (t2.calls, t2.cached, t2.prompt_tokens, t2.completion_tokens) == (3, 1, 4, 9)
    assert t2.cost_usd == pytest.approx(cost(3, 6))  # the cached call cost nothing
    assert t2.as_dict()["llm_cached"] == 1 and t3.replies == ["I don't know."]
    # server usage agrees with the accounting
    assert sum(c["prompt_tokens"] for c in chat_calls(fake)) == sum(r["prompt_tokens"] for r in rows.values())


def test_unpriced_model_accounts_tokens_only(h):
    fake, engine, llm = h.make(engine_kw={"price": None})
    trace = Trace()
    with llm_scope(trace, stage="generation"):
        llm.chat(user("no price"))
    assert trace.unpriced == 1 and trace.as_dict()["cost_usd"] is None
    (row,) = engine.cache.spending("r")
    assert row["cost_usd"] is None and row["prompt_tokens"] == 2


# ---------------------------------------------------------------------------------------------------- single flight


def test_concurrent_identical_calls_make_one_request(h):
    fake, engine, llm = h.make(latency_ms=200)

    async def main():
        trace = Trace()
        with llm_scope(trace, stage="generation"):
            results = await asyncio.gather(*(llm.achat(user("the same question")) for _ in range(20)))
        return results, trace

    results, trace = asyncio.run(main())
    assert len(fake.calls(include_events=True)) == 2  # one start event, one completed call
    assert len(chat_calls(fake)) == 1
    assert {r.message.content for r in results} == {"I don't know."}
    assert engine.calls == 1 and engine.cache_hits == 19
    assert trace.calls == 20 and trace.cached == 19


def test_single_flight_shares_a_failure_without_repeating_it(h):
    fake, engine, llm = h.make(rules=[{"action": "status", "status": 400}], latency_ms=200)

    async def main():
        return await asyncio.gather(*(llm.achat(user("bad")) for _ in range(5)), return_exceptions=True)

    results = asyncio.run(main())
    assert all(isinstance(r, LLMCallError) for r in results)
    assert len(chat_calls(fake)) == 1


def test_cancelled_caller_does_not_cancel_an_identical_concurrent_call(h):
    fake, engine, llm = h.make(latency_ms=300)

    async def main():
        first = asyncio.create_task(llm.achat(user("shared")))
        await asyncio.sleep(0.1)  # first is now in flight on the server
        second = asyncio.create_task(llm.achat(user("shared")))
        await asyncio.sleep(0.05)  # second waits for first's reply
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        return await second

    resp = asyncio.run(main())
    assert resp.message.content == "I don't know."


# ---------------------------------------------------------------------------------------------------- concurrency


def _run_distinct(llm, n: int, prefix: str):
    async def main():
        return await asyncio.gather(*(llm.achat(user(f"{prefix} question {i}")) for i in range(n)))

    t0 = time.perf_counter()
    results = asyncio.run(main())
    return results, time.perf_counter() - t0


def test_concurrency_ceiling_holds(h):
    fake, engine, llm = h.make(latency_ms=100, concurrency=4)
    results, elapsed = _run_distinct(llm, 40, "ceiling")
    assert len(results) == 40 and len(chat_calls(fake)) == 40
    assert fake.stats()["max_in_flight"] <= 4
    assert engine.max_in_flight == 4
    assert elapsed >= 0.9, elapsed  # 10 waves of 0.1 s


def test_concurrency_is_used(h):
    fake, engine, llm = h.make(latency_ms=100, concurrency=32)
    llm.chat(user("warm up"))
    results, elapsed = _run_distinct(llm, 40, "parallel")
    assert len(results) == 40
    assert elapsed < procwait.scaled(2.0), elapsed  # sequential would take 4 s
    assert fake.stats()["max_in_flight"] > 4
    assert engine.max_in_flight <= 32


def test_ceiling_holds_for_sync_calls_from_many_threads(h):
    # a fixed ceiling (the adaptive one starts at 1 and may not have reached 3 within 12 calls on a busy machine);
    # 300 ms replies leave the 12 threads time to fill it
    fake, engine, llm = h.make(latency_ms=300, concurrency=3, adaptive_concurrency=False)
    with ThreadPoolExecutor(12) as pool:
        results = list(pool.map(lambda i: llm.chat(user(f"threaded {i}")).message.content, range(12)))
    assert results == ["I don't know."] * 12
    assert fake.stats()["max_in_flight"] <= 3 and engine.max_in_flight == 3


# ---------------------------------------------------------------------------------------------------- rate limits


def test_token_bucket_arithmetic_with_fake_clock():
    now = [100.0]
    b = TokenBucket(60, clock=lambda: now[0])  # 60 per minute: capacity 60, 1 per second
    assert b.capacity == 60 and b.rate == 1.0 and b.level == 60  # starts full
    assert b.wait_time(10) == 0
    b.pay(10)
    assert b.level == 50
    b.pay(50)
    assert b.level == 0
    assert b.wait_time(5) == pytest.approx(5.0)
    now[0] += 2
    assert b.wait_time(5) == pytest.approx(3.0)
    assert b.level == pytest.approx(2.0)
    b.adjust(-10)  # the call cost 10 less than paid
    assert b.level == pytest.approx(12.0)
    b.adjust(20)  # it cost 20 more: the bucket goes into debt
    assert b.level == pytest.approx(-8.0)
    assert b.wait_time(1) == pytest.approx(9.0)
    now[0] += 1000
    assert b.wait_time(1) == 0 and b.level == 60  # refill stops at capacity
    b.adjust(-100)
    assert b.level == 60
    assert b.wait_time(1000) == 0  # more than capacity pays a full bucket
    b.pay(1000)
    assert b.level == 0
    assert b.wait_time(1000) == pytest.approx(60.0)


def test_rate_limiter_spaces_requests_once_the_bucket_is_empty():
    async def main():
        limiter = RateLimiter(requests_per_minute=600, tokens_per_minute=None)  # 10 per second, burst of 600
        t0 = time.perf_counter()
        for _ in range(600):
            await limiter.acquire(1)
        burst = time.perf_counter() - t0
        t1 = time.perf_counter()
        for _ in range(4):
            await limiter.acquire(1)
        return burst, time.perf_counter() - t1, limiter.waited_s

    burst, spaced, waited = asyncio.run(main())
    assert burst < 0.3
    assert spaced >= 0.37, spaced  # 4 more at 0.1 s each
    assert waited >= 0.37


def test_rate_limiter_without_limits_never_waits():
    async def main():
        limiter = RateLimiter(None, None)
        for _ in range(1000):
            await limiter.acquire(10_000)
        return limiter.waited_s

    assert asyncio.run(main()) == 0


def test_engine_tokens_per_minute_delays_calls(h):
    msgs = [user(f"q {i}") for i in range(3)]
    est_in = {count_message_tokens(m) for m in msgs}
    assert len(est_in) == 1
    max_tokens = 2040 - est_in.pop()  # each call estimated at 2040 tokens; the bucket holds 6000, 100/s
    long_reply = " ".join(["w"] * (max_tokens - 5))  # actual usage close to the estimate: no refund to speak of
    fake, engine, llm = h.make(
        rules=[{"action": "reply", "reply": long_reply}], tokens_per_minute=6000, max_tokens=max_tokens
    )

    async def main():
        return await asyncio.gather(*(llm.achat(m) for m in msgs))

    asyncio.run(main())
    starts = sorted(c["t_start"] for c in chat_calls(fake))
    assert len(starts) == 3
    assert starts[1] - starts[0] < 0.5
    assert starts[2] - starts[0] >= 1.0, starts  # the third waits ~1.2 s for 120 tokens at 100/s
    assert engine._limiter.waited_s >= 1.0


def test_engine_corrects_token_estimates_with_reported_usage(h):
    msgs = [user(f"q {i}") for i in range(6)]
    max_tokens = 2040 - count_message_tokens(msgs[0])
    fake, engine, llm = h.make(tokens_per_minute=6000, max_tokens=max_tokens)  # replies are 3 words
    t0 = time.perf_counter()
    for m in msgs:  # without the correction the third call would wait 1.2 s, the fourth 20 s more
        llm.chat(m)
    assert time.perf_counter() - t0 < procwait.scaled(1.0)
    assert engine._limiter.waited_s == 0


# ---------------------------------------------------------------------------------------------------- backoff


def test_backoff_delay_bounds_and_cap():
    rng = random.Random(1)
    for attempt in range(7):
        d = min(10.0, 0.5 * 2**attempt)
        for _ in range(50):
            w = backoff_delay(attempt, cap=10.0, rng=rng)
            assert d / 2 <= w <= d, (attempt, w)
    assert backoff_delay(6, cap=10.0, rng=random.Random(0)) >= 5.0  # 32 s capped at 10: in [5, 10]
    a = [backoff_delay(i, rng=random.Random(7)) for i in range(5)]
    b = [backoff_delay(i, rng=random.Random(7)) for i in range(5)]
    assert a == b
    assert len({backoff_delay(2, rng=rng) for _ in range(10)}) > 1  # jittered


def test_backoff_retry_after_wins_and_is_capped():
    assert backoff_delay(5, 2.0, cap=60.0) == 2.0
    assert backoff_delay(0, 0.0) == 0.0
    assert backoff_delay(0, 120.0, cap=60.0) == 60.0


def _exc_with_headers(headers: dict):
    return SimpleNamespace(response=httpx.Response(429, headers=headers))


def test_retry_after_seconds_parsing():
    assert retry_after_seconds(_exc_with_headers({"Retry-After": "2"})) == 2.0
    assert retry_after_seconds(_exc_with_headers({"retry-after": "0.3"})) == pytest.approx(0.3)
    assert retry_after_seconds(_exc_with_headers({"retry-after-ms": "250"})) == pytest.approx(0.25)
    assert retry_after_seconds(_exc_with_headers({"retry-after-ms": "250", "Retry-After": "9"})) == pytest.approx(0.25)
    future = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 27 <= retry_after_seconds(_exc_with_headers({"Retry-After": future})) <= 31
    past = format_datetime(datetime.now(timezone.utc) - timedelta(seconds=30), usegmt=True)
    assert retry_after_seconds(_exc_with_headers({"Retry-After": past})) == 0.0
    assert retry_after_seconds(_exc_with_headers({"Retry-After": "soon"})) is None
    assert retry_after_seconds(_exc_with_headers({"Retry-After": "-5"})) == 0.0
    assert retry_after_seconds(_exc_with_headers({})) is None
    assert retry_after_seconds(ValueError("no response")) is None


def _status_error(status: int) -> openai.APIStatusError:
    req = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    return openai.APIStatusError("boom", response=httpx.Response(status, request=req), body=None)


@pytest.mark.parametrize(
    "status,retryable,fatal",
    [
        (429, True, False),
        (408, True, False),
        (500, True, False),
        (503, True, False),
        (400, False, False),
        (422, False, False),
        (401, False, True),
        (403, False, True),
        (404, False, True),
    ],
)
def test_error_classification(status, retryable, fatal):
    exc = _status_error(status)
    assert is_retryable(exc) is retryable
    assert is_fatal(exc) is fatal


def test_connection_errors_are_retryable():
    req = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    assert is_retryable(openai.APIConnectionError(request=req))
    assert is_retryable(openai.APITimeoutError(request=req))
    assert not is_retryable(ValueError("x")) and not is_fatal(ValueError("x"))


# ---------------------------------------------------------------------------------------------------- budget


def test_budget_reserve_settle_release():
    b = Budget(1.0)
    assert b.reserve(0.25) == 0.25
    assert b.reserve(0.75) == 0.75  # exactly at the limit is allowed
    assert b.reserved == 1.0
    with pytest.raises(BudgetExhausted) as ei:
        b.reserve(0.125)
    assert "\n" not in str(ei.value) and "--budget" in str(ei.value)
    assert b.refused == 1 and b.reserved == 1.0
    b.settle(0.25, 0.125)
    assert (b.reserved, b.spent) == (0.75, 0.125)
    b.release(0.75)
    assert (b.reserved, b.spent) == (0.0, 0.125)
    assert b.reserve(0.875) == 0.875
    with pytest.raises(BudgetExhausted):
        b.reserve(0.0625)
    assert b.refused == 2


def test_engine_budget_stops_before_sending_and_cached_calls_still_pass(h):
    msgs = [user(f"b {i}") for i in range(5)]
    est_in = {count_message_tokens(m) for m in msgs}
    assert len(est_in) == 1
    reservation = cost_usd(PRICE, est_in.pop(), 100)
    actual = cost_usd(PRICE, 2, 100)  # "b i" is 2 words; the reply is 100 words
    budget = Budget(2.5 * actual + reservation)  # calls 0..2 fit, the 4th's reservation does not
    fake, engine, llm = h.make(
        rules=[{"action": "reply", "reply": " ".join(["word"] * 100)}], max_tokens=100, engine_kw={"budget": budget}
    )
    for m in msgs[:3]:
        llm.chat(m)
    assert len(chat_calls(fake)) == 3
    assert budget.spent == pytest.approx(3 * actual) and budget.reserved == pytest.approx(0)
    with pytest.raises(BudgetExhausted):
        llm.chat(msgs[3])
    assert len(chat_calls(fake)) == 3  # refused before any request
    assert budget.refused == 1 and budget.reserved == pytest.approx(0)
    spent = budget.spent
    cached = llm.chat(msgs[0])  # cached: free, allowed though the budget is exhausted
    assert len(cached.message.content.split()) == 100
    assert len(chat_calls(fake)) == 3 and budget.spent == spent


def test_engine_budget_waits_for_calls_in_flight_before_refusing(h):
    """Six concurrent calls, room for 3.5 worst-case reservations: the calls that do not fit wait for
    those in flight to settle (far below their worst case, the replies are short) and then go
    through, instead of stopping the run with most of the budget unused; spending never passes it."""
    msgs = [user(f"c {i}") for i in range(6)]
    reservation = cost_usd(PRICE, count_message_tokens(msgs[0]), 100)
    budget = Budget(3.5 * reservation)
    fake, engine, llm = h.make(latency_ms=300, max_tokens=100, engine_kw={"budget": budget})

    async def main():
        return await asyncio.gather(*(llm.achat(m) for m in msgs), return_exceptions=True)

    t0 = time.perf_counter()
    results = asyncio.run(main())
    assert not any(isinstance(r, BaseException) for r in results), results
    assert len(chat_calls(fake)) == 6
    assert time.perf_counter() - t0 >= 0.55  # the last three waited for the first settlements
    assert budget.spent <= budget.limit and budget.reserved == pytest.approx(0) and budget.outstanding == 0


def test_engine_budget_refuses_when_nothing_is_in_flight_to_wait_for(h):
    msgs = [user(f"d {i}") for i in range(3)]
    reservation = cost_usd(PRICE, count_message_tokens(msgs[0]), 100)
    budget = Budget(0.5 * reservation)
    fake, engine, llm = h.make(max_tokens=100, engine_kw={"budget": budget})
    with pytest.raises(BudgetExhausted):
        llm.chat(msgs[0])
    assert len(chat_calls(fake)) == 0 and budget.outstanding == 0


def test_failed_call_releases_its_reservation(h):
    budget = Budget(1.0)
    fake, engine, llm = h.make(rules=[{"action": "status", "status": 400}], engine_kw={"budget": budget})
    with pytest.raises(LLMCallError):
        llm.chat(user("x"))
    assert budget.reserved == pytest.approx(0) and budget.spent == 0


# ---------------------------------------------------------------------------------------------------- clients


def test_api_key_for(monkeypatch):
    monkeypatch.delenv("RAGSWEEP_TEST_UNSET_KEY", raising=False)
    spec = LLMSpec(model="m", api_key_env="RAGSWEEP_TEST_UNSET_KEY")
    with pytest.raises(RagsweepError) as ei:
        api_key_for(spec, "stage2.llm")
    msg = str(ei.value)
    assert "RAGSWEEP_TEST_UNSET_KEY" in msg and "stage2.llm.api_key_env" in msg and "\n" not in msg
    monkeypatch.setenv("RAGSWEEP_TEST_UNSET_KEY", "")
    with pytest.raises(RagsweepError):
        api_key_for(spec)
    monkeypatch.setenv("RAGSWEEP_TEST_UNSET_KEY", "sk-abc")
    assert api_key_for(spec) == "sk-abc"
    assert api_key_for(LLMSpec(model="m", api_key_env=None)) is None


def _sweep(llm: dict, **kw) -> SweepSpec:
    return SweepSpec(
        splitters=[{"kind": "sentence"}], retrievers=[{"kind": "bm25"}], generator={"kind": "llm"}, llm=llm, **kw
    )


def test_check_llms_requires_prices_under_a_budget():
    spec = _sweep({"model": "my-local-model", "api_key_env": None})
    with pytest.raises(RagsweepError) as ei:
        check_llms(spec, 1.0)
    assert "prices" in str(ei.value) and "my-local-model" in str(ei.value)
    check_llms(spec, None)  # no budget: tokens only is fine
    check_llms(
        _sweep(
            {"model": "my-local-model", "api_key_env": None}, prices={"my-local-model": {"input": 0.1, "output": 0.2}}
        ),
        1.0,
    )
    check_llms(_sweep({"model": "gpt-4o-mini", "api_key_env": None}), 1.0)  # built-in price


def test_check_llms_requires_the_key(monkeypatch):
    monkeypatch.delenv("RAGSWEEP_TEST_UNSET_KEY", raising=False)
    with pytest.raises(RagsweepError, match="RAGSWEEP_TEST_UNSET_KEY"):
        check_llms(_sweep({"model": "gpt-4o-mini", "api_key_env": "RAGSWEEP_TEST_UNSET_KEY"}), None)


def test_llm_clients_share_one_engine_per_endpoint(h, tmp_path):
    fake = h.server()
    base = h.spec(fake)
    spec = _sweep(base.model_dump())
    clients = LLMClients(spec, tmp_path / "shared.sqlite", run_id="r", budget_usd=1.0)
    try:
        a = clients.get(base)
        assert clients.get(base.model_copy()) is a
        hot = clients.get(base.model_copy(update={"temperature": 0.9}))
        assert hot is not a and hot._engine is a._engine and len(clients.engines) == 1
        a.chat(user("one"))
        a.chat(user("one"))
        hot.chat(user("one"))
        counters = clients.counters()
        assert counters["llm_calls_made"] == 2 and counters["llm_cache_hits"] == 1
        assert counters["budget_usd"] == 1.0 and counters["spent_usd"] == 0  # fake-model has no price
    finally:
        clients.close()


# ---------------------------------------------------------------------------------------------------- LlamaIndex


def test_sweep_llm_is_a_llamaindex_llm(h):
    from llama_index.core.llms import LLM

    fake, engine, llm = h.make()
    assert isinstance(llm, LLM)
    assert llm.metadata.is_chat_model is True
    assert llm.metadata.model_name == "fake-model"
    assert llm.complete("hi").text == "I don't know."
    assert asyncio.run(llm.acomplete("hello")).text == "I don't know."


def test_correctness_evaluator_through_the_engine_is_attributed(h):
    from llama_index.core.evaluation import CorrectnessEvaluator

    fake, engine, llm = h.make()
    trace = Trace()

    async def main():
        with llm_scope(trace, stage="stage2", config_id="cfg", judge="correctness"):
            return await CorrectnessEvaluator(llm=llm).aevaluate(
                query="What is two plus two?", response="Four.", reference="4"
            )

    result = asyncio.run(main())
    assert result.score == 4.0 and result.passing is True
    assert fake.stats()["by_kind"] == {"correctness": 1}
    (row,) = engine.cache.spending("r")
    assert (row["stage"], row["config_id"], row["judge"], row["calls"]) == ("stage2", "cfg", "correctness", 1)
    assert trace.calls == 1 and trace.replies[0].startswith("4.0")


def test_sync_complete_from_inside_a_running_event_loop(h):
    fake, engine, llm = h.make()

    async def main():
        # LlamaIndex components (QueryFusionRetriever) call llm.complete synchronously, maybe under a loop
        with llm_scope(None, stage="query_rewrite"):
            return llm.complete(
                "Generate 2 search queries, one on each line, related to the following "
                "input query:\nQuery: hi\nQueries:\n"
            ).text

    text = asyncio.run(main())
    assert text.splitlines() == ["hi variant 1", "hi variant 2"]
    (row,) = engine.cache.spending("r")
    assert row["stage"] == "query_rewrite"


def test_stream_chat_yields_the_reply(h):
    fake, engine, llm = h.make()
    chunks = list(llm.stream_chat(user("stream please")))
    assert chunks[-1].message.content == "I don't know."
    assert len(chat_calls(fake)) == 1


def test_what_the_server_states_it_serves_keys_the_cache(h):
    """llama.cpp's /props names the model file and chat template: a server restarted under the same alias with
    another template is asked anew, not replayed; the same file and template are the cache's; a server that
    states nothing (llama-cpp-python) keys as before."""
    from ragsweep.llm.server_info import probe

    def props(template: str) -> dict:
        return {"default_generation_settings": {"n_ctx": 4096}, "model_path": "/m/a.gguf", "chat_template": template}

    made = []
    for template in ("chatml", "gemma", "gemma"):
        fake = h.server(props=props(template))
        spec = h.spec(fake)
        info = probe(fake.base_url, spec.model)
        assert info.identity is not None and info.context_window == 4096
        llm = SweepLLM(spec, h.engine(spec, server=info), api_key=None)
        llm.chat(user("same prompt"))
        made.append(len(chat_calls(fake)))
    assert made == [1, 1, 0]  # another template: asked; the same again: replayed
    silent = h.server()  # no /props
    assert probe(silent.base_url, "fake-model").identity is None
