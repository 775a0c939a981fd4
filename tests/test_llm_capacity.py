"""Servers that queue, context windows, truncated replies, service time apart from queue wait.

The adaptive limit is checked two ways: in a virtual-time simulation of a server with FIFO slots
(``tests/queue_sim.py``: nothing sleeps, so the figures are exact and the same on any machine), and over
real HTTP against the scripted server (``tests/fake_openai.py`` with ``slots``: it computes that many
chat requests at once, queues the rest, and computes abandoned ones to the end, as llama-cpp-python's
server does). ``tests/test_llm_server.py`` runs the same behaviours against a real llama.cpp server.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import sys
from pathlib import Path

import pytest
from llama_index.core.base.llms.types import ChatMessage

from ragsweep.config import LLMSpec
from ragsweep.llm.cache import CachedCall, LLMCallCache
from ragsweep.llm.capacity import AdaptiveLimit, Clock
from ragsweep.llm.engine import LLMContextError, LLMEngine
from ragsweep.llm.engine_inputs import RunTerms
from ragsweep.llm.openai_like import SweepLLM
from ragsweep.llm.retry import context_overflow
from ragsweep.llm.server_info import ServerInfo, from_llama_cpp, from_models, from_ollama, probe
from ragsweep.llm.service_model import ServiceModel
from ragsweep.llm.usage import Trace, llm_scope

sys.path.insert(0, str(Path(__file__).parent))
from fake_openai import FakeOpenAI  # noqa: E402
from queue_sim import simulate  # noqa: E402


def _services(n: int = 120, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [rng.uniform(2.0, 12.0) for _ in range(n)]  # seconds: a small model's answers on a CPU


# ------------------------------------------------------------------------------------------- simulation


def test_one_slot_server_gets_one_request_and_nothing_twice():
    """The issue's case: concurrency 8, timeout 30 s, a server that computes one request at a time."""
    services = _services()
    serial = simulate(services, slots=1, concurrency=1, timeout=30)
    fixed = simulate(services, slots=1, concurrency=8, timeout=30, adaptive=False)
    adaptive = simulate(services, slots=1, concurrency=8, timeout=30)
    # without adapting, requests time out in the queue and the server computes abandoned copies
    assert fixed.timeouts > 10 and fixed.server_generations > 1.2 * fixed.replies
    # adapting: every request computed once, as fast as one at a time
    assert adaptive.replies == len(services) and adaptive.timeouts == 0
    assert adaptive.server_generations <= 1.05 * adaptive.replies
    assert adaptive.wall_s <= 1.2 * serial.wall_s
    assert adaptive.limit.limit == 1 and adaptive.limit.ceiling == 2
    # latency: the service time of nearly every call is known, and none includes a queue wait
    known = [s for s in adaptive.services_ms if s is not None]
    assert len(known) >= 0.9 * len(services)
    assert max(k / 1000 for k in known) <= max(services) + 1e-6


@pytest.mark.parametrize("slots", [2, 4])
def test_multi_slot_server_is_used(slots):
    services = _services()
    serial = simulate(services, slots=slots, concurrency=1, timeout=30)
    adaptive = simulate(services, slots=slots, concurrency=8, timeout=30)
    assert adaptive.timeouts == 0 and adaptive.server_generations == adaptive.replies == len(services)
    assert adaptive.wall_s < 0.75 * serial.wall_s  # it found the slots (ideal: 1 / slots)
    assert adaptive.limit.highest >= slots


@pytest.mark.parametrize("seed", range(3))
def test_a_cold_first_request_and_noisy_sizes_do_not_fool_it(seed):
    """The first request 5x slower (a cold server) and request sizes that predict service times only to within
    30 %: the limit compares delivery rates measured the same way, so it still settles on one request."""
    services = _services(160, seed=seed)
    services[0] *= 5
    serial = simulate(services, slots=1, concurrency=1, timeout=60, size_noise=0.3, seed=seed)
    adaptive = simulate(services, slots=1, concurrency=8, timeout=60, size_noise=0.3, seed=seed)
    assert adaptive.timeouts == 0 and adaptive.server_generations == adaptive.replies == len(services)
    assert adaptive.wall_s <= 1.05 * serial.wall_s and adaptive.limit.lowest == 1
    # requests mostly had the server to themselves: the time they spent waiting in its queue is small
    assert sum(adaptive.latencies_ms) / 1000 <= 1.5 * sum(services)


def test_a_batching_server_gets_more_in_flight():
    """A vLLM-like server computes every request at once, each slowed by 10 % per other: more in flight serves
    more, so the limit grows to llm.concurrency."""
    services = _services(160)
    serial = simulate(services, batching=0.1, concurrency=1, size_noise=0.3)
    adaptive = simulate(services, batching=0.1, concurrency=8, size_noise=0.3)
    assert adaptive.limit.highest == 8 and adaptive.timeouts == 0
    assert adaptive.wall_s < 0.5 * serial.wall_s


def test_server_timings_separate_queue_from_service():
    services = _services(40)
    out = simulate(services, slots=1, concurrency=8, timeout=600, adaptive=False, server_reports=True)
    # the simulated server is FIFO with one slot: replies come back in the order sent
    assert out.services_ms == pytest.approx([s * 1000 for s in services], rel=1e-9)
    assert max(out.latencies_ms) > 5 * max(out.services_ms)  # queued, and the queue is not in the service time


def test_timed_out_request_waits_for_the_server_before_it_is_sent_again():
    """A request whose service time exceeds the timeout: sent again only after the server is presumed done."""
    out = simulate([5.0, 50.0, 5.0, 5.0], slots=1, concurrency=1, timeout=30, max_retries=2)
    assert out.replies == 3 and out.failed == 1 and out.timeouts == 3
    # nothing was sent while the server still computed an abandoned copy: no reply waited in its queue
    assert out.server_generations == out.replies + out.timeouts
    assert out.latencies_ms == [5000.0] * 3


def test_service_model_fits_prefill_and_decode():
    m = ServiceModel()
    assert m.predict(100, 10) is None
    for p, o in [(100, 10), (2000, 10), (100, 200), (1000, 100), (500, 50), (1500, 300), (300, 20)]:
        m.add(p, o, 50 + 0.5 * p + 20 * o)
    assert m.predict(800, 40) == pytest.approx(50 + 400 + 800, rel=1e-6)


# ------------------------------------------------------------------------------------------- over HTTP


class _Engines:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path, self.items = tmp_path, []

    def make(self, fake: FakeOpenAI, *, server: ServerInfo | None = None, **spec_kw):
        spec_kw.setdefault("api_key_env", None)
        spec = LLMSpec(model="fake-model", base_url=fake.base_url, **spec_kw)
        cache = LLMCallCache(self.tmp_path / f"c{len(self.items)}.sqlite")
        engine = LLMEngine(spec, cache, run=RunTerms(run_id="r"), server=server)
        self.items.append((engine, cache))
        return engine, SweepLLM(spec, engine, api_key=None)


@pytest.fixture
def engines(tmp_path):
    e = _Engines(tmp_path)
    yield e
    for engine, cache in e.items:
        engine.close()
        cache.close()


def _ask_all(llm, n: int, prefix: str) -> Trace:
    trace = Trace()

    async def main():
        with llm_scope(trace, stage="generation"):
            return await asyncio.gather(
                *(llm.achat([ChatMessage(role="user", content=f"{prefix} {i}")]) for i in range(n))
            )

    asyncio.run(main())
    return trace


@pytest.mark.slow  # 11 s of sleeping server; by default the learner is checked in virtual time (the tests above)
# and against the real llama.cpp server, which computes one request at a time (test_llm_server.py's queued run)
def test_one_slot_server_over_http(engines):
    """Requests of 0.15 s each against a one-slot server. With 12 in flight, no adapting and a 1 s timeout,
    the later ones wait up to 1.8 s in the queue: they time out and the server computes abandoned copies (on
    any machine: slower only makes more). Adapting, nothing waits longer than a request or two."""
    with FakeOpenAI(latency_ms=150, slots=1).start() as fixed_fake:
        engine, llm = engines.make(
            fixed_fake, concurrency=12, timeout=1.0, adaptive_concurrency=False, max_backoff=0.1, max_retries=1
        )
        _ask_all(llm, 12, "fixed")
        assert engine.timeouts > 0 and fixed_fake.stats()["generations"] > engine.calls
    with FakeOpenAI(latency_ms=150, slots=1).start() as fake:
        engine, llm = engines.make(fake, concurrency=16, timeout=1.5, max_backoff=0.1)
        trace = _ask_all(llm, 24, "adaptive")
        assert engine.calls == 24 and engine.timeouts == 0
        assert fake.stats()["generations"] <= 1.05 * engine.calls
        cap = engine.describe()["capacity"]
        assert cap["limit"] == 1 and cap["queued_at"] >= 2 and cap["waited"] > 0
        # service time apart from the queue, except for the first windows above one request (slow start)
        assert trace.service_unknown <= 8 and trace.service_ms <= trace.ms


def test_server_reported_slots_and_timings(engines):
    props = {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 3}
    with FakeOpenAI(latency_ms=100, slots=3, props=props, timings=True).start() as fake:
        info = probe(fake.base_url, "fake-model")
        assert info == ServerInfo(4096, 3, "llama.cpp /props")
        engine, llm = engines.make(fake, server=info, concurrency=8)
        trace = _ask_all(llm, 9, "timed")
        assert engine.describe()["capacity"]["slots"] == 3 and engine.max_in_flight >= 3
        assert trace.service_unknown == 0
        assert trace.service_ms == pytest.approx(9 * 100, rel=0.01)  # the server's own figure


def test_server_info_parsers():
    assert from_llama_cpp({"default_generation_settings": {"n_ctx": 2048}}) == ServerInfo(
        2048, None, "llama.cpp /props"
    )
    assert from_models({"data": [{"id": "m", "max_model_len": 32768}]}, "m").context_window == 32768
    assert from_models({"data": [{"id": "other", "max_model_len": 1}]}, "m") is None
    assert (
        from_ollama({"models": [{"name": "llama3:latest", "context_length": 8192}]}, None, "llama3").context_window
        == 8192
    )
    assert from_ollama(None, {"parameters": "stop <eot>\nnum_ctx 4096"}, "llama3").context_window == 4096
    assert probe(None, "gpt-4o-mini") == ServerInfo()


def test_context_window_exceeded_is_permanent(engines):
    """The server refuses a long prompt (llama-cpp-python's 400 context_length_exceeded): one error with the
    sizes, no retry, and the window is remembered for the messages."""
    with FakeOpenAI(n_ctx=200).start() as fake:
        engine, llm = engines.make(fake, max_retries=3)
        long = " ".join(["word"] * 400)
        with pytest.raises(LLMContextError) as err:
            llm.chat([ChatMessage(role="user", content=long)])
        assert err.value.limit == 200 and err.value.prompt_tokens and err.value.prompt_tokens > 200
        assert "context window of 200 tokens" in str(err.value) and err.value.sent
        assert fake.stats()["calls"] == 1 and engine.retries == 0
        assert engine.describe()["context_window"] == 200
        line = err.value.advice("generation")
        assert line.startswith("generation: ") and "top_k" in line and "context_window" in line
        assert "\n" not in line
        assert llm.chat([ChatMessage(role="user", content="short")]).message.content  # short ones still go


def test_prompt_clearly_over_a_window_the_server_told_is_not_sent(engines):
    props = {"default_generation_settings": {"n_ctx": 200}, "total_slots": 1}
    with FakeOpenAI(props=props, n_ctx=200).start() as fake:
        engine, llm = engines.make(fake, server=probe(fake.base_url, "fake-model"))
        with pytest.raises(LLMContextError) as err:
            llm.chat([ChatMessage(role="user", content=" ".join(["word"] * 400))])
        assert not err.value.sent and "(estimated; not sent)" in str(err.value) and "llama.cpp /props" in str(err.value)
        assert fake.stats()["calls"] == 0


def test_context_overflow_messages_of_known_servers():
    class E(Exception):
        def __init__(self, status, body, message=""):
            super().__init__(message)
            self.status_code, self.body, self.message = status, body, message
            self.code = (body.get("error") or {}).get("code") if isinstance(body, dict) else None

    openai_like = E(
        400,
        {"error": {"code": "context_length_exceeded"}},
        "This model's maximum context length is 2048 tokens. However, you requested 2755 tokens "
        "(2243 in the messages, 512 in the completion).",
    )
    assert context_overflow(openai_like) == (2243, 2048)  # the prompt's tokens, apart from the reply's
    vllm_new = E(
        400,
        {"error": {"code": None}},
        "This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens.",
    )
    assert context_overflow(vllm_new) == (5000, 4096)
    llama_cpp = E(
        400,
        {
            "error": {
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 5000,
                "n_ctx": 4096,
                "message": "the request exceeds the available context size, try increasing it",
            }
        },
    )
    assert context_overflow(llama_cpp) == (5000, 4096)
    assert context_overflow(E(400, {"error": {"code": "invalid_value"}}, "temperature must be <= 2")) is None
    assert context_overflow(E(500, {}, "maximum context length is 10")) is None


def test_truncated_replies_are_counted_and_kept(engines, tmp_path):
    rules = [{"kind": "generation", "reply": "one two three four five six seven eight", "finish_reason": "length"}]
    with FakeOpenAI(rules=rules).start() as fake:
        engine, llm = engines.make(fake, max_tokens=4)
        trace = _ask_all(llm, 3, "cut")
        assert trace.truncated == 3 and engine.truncated == 3
        again = _ask_all(llm, 3, "cut")  # from the cache: still counted
        assert again.truncated == 3 and again.cached == 3
        assert engine.cache.get(next(iter(_keys(engine)))).finish_reason == "length"


def _keys(engine):
    return [r[0] for r in engine.cache._db.execute("SELECT key FROM calls")]


def test_cache_written_before_service_times_still_reads(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript("""CREATE TABLE calls (key TEXT PRIMARY KEY, model TEXT NOT NULL, content TEXT NOT NULL,
        finish_reason TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, ms REAL, cost_usd REAL,
        created REAL NOT NULL, run TEXT, stage TEXT, config_id TEXT, judge TEXT);
        INSERT INTO calls VALUES ('k', 'm', 'hello', 'stop', 3, 1, 25.0, NULL, 0, 'r', 'generation', 'c', NULL);""")
    db.commit()
    db.close()
    cache = LLMCallCache(path)
    try:
        assert cache.get("k") == CachedCall("hello", "stop", 3, 1, 25.0, None, None, None)
        cache.put("k2", "m", CachedCall("x", "length", 1, 1, 9.0, None, 7.0, 2.0), {"stage": "judge", "judge": "f"})
        assert cache.get("k2").service_ms == 7.0
    finally:
        cache.close()


def test_adaptive_limit_waiters_are_served_in_order():
    async def main():
        lim = AdaptiveLimit(1)
        order = []
        first = await lim.acquire()

        async def take(i):
            t = await lim.acquire()
            order.append(i)
            lim.done(t, 1.0, 1, 1)

        tasks = [asyncio.ensure_future(take(i)) for i in range(5)]
        await asyncio.sleep(0)
        lim.done(first, 1.0, 1, 1)
        await asyncio.gather(*tasks)
        return order, lim

    order, lim = asyncio.run(main())
    assert order == [0, 1, 2, 3, 4] and lim.waited == 5


def test_a_waiter_cancelled_as_a_slot_frees_is_cancelled_cleanly():
    async def main():
        lim = AdaptiveLimit(1)
        held = await lim.acquire()
        waiter = asyncio.ensure_future(lim.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        lim.failed(held)  # the same turn: _wake passes over the cancelled waiter
        with pytest.raises(asyncio.CancelledError):
            await waiter
        again = await asyncio.wait_for(lim.acquire(), 1)  # the slot was not lost
        lim.done(again, 1.0, 1, 1)
        return lim

    lim = asyncio.run(main())
    assert lim.limit == 1 and not lim._active


def test_timeouts_do_not_make_a_server_serial_and_a_failing_model_does_not_leak_slots():
    async def main():
        lim = AdaptiveLimit(8, start=2, timeout_s=0.05)  # the ghost of the timed-out request is held 50 ms
        t = await lim.acquire()
        lim.timed_out(t, 100, 100)
        assert lim.ceiling == 2 and not lim.serial  # a timeout says nothing about serving one at a time

        def broken(*_):
            raise RuntimeError("no fit")

        lim.model.predict = broken
        u = await lim.acquire()
        with pytest.raises(RuntimeError):
            lim.done(u, 5.0, 10, 10)
        assert u.id not in lim._active  # the slot went back although learning from the reply failed
        return lim

    asyncio.run(main())


def test_levels_are_compared_through_the_same_model():
    """A first window read through an immature service model (predicting half the true time) must not make the
    next level look like a gain: every level's rate is recomputed with the model as it stands when a level is
    judged. A one-slot server: at two in flight each reply waits for the other's service."""

    class Learning:  # a service model that learns the truth (1000 ms) between the two windows
        mature = False

        def add(self, *args) -> None:
            pass

        def predict(self, prompt_tokens: int, completion_tokens: int) -> float:
            return 1000.0 if self.mature else 500.0

    async def main() -> AdaptiveLimit:
        now = [0.0]
        lim = AdaptiveLimit(8, clock=Clock(lambda: now[0], lambda s, cb: None))
        lim.model = Learning()
        for _ in range(5):  # alone, one after another (the first teaches nothing: a cold server)
            t = await lim.acquire()
            now[0] += 1.0
            lim.done(t, 1000.0, 10, 100)
        assert lim.limit == 2
        lim.model.mature = True
        a, b = await lim.acquire(), await lim.acquire()
        now[0] += 1.0
        lim.done(a, 1000.0, 10, 100)
        c = await lim.acquire()
        now[0] += 1.0
        lim.done(b, 2000.0, 10, 100)
        d = await lim.acquire()
        now[0] += 1.0
        lim.done(c, 2000.0, 10, 100)
        now[0] += 1.0
        lim.done(d, 2000.0, 10, 100)
        return lim

    lim = asyncio.run(main())
    assert lim.limit == 1 and lim.ceiling == 2 and lim.serial and lim.highest == 2
