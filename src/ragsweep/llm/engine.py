"""The LLM call engine: cache, single flight, budget, rate limits, concurrency and retries.

Every call of one endpoint runs on a private event loop in a background thread, whichever
thread or event loop it comes from (LlamaIndex calls LLMs both synchronously and
asynchronously), so the concurrency ceiling and the rate limits hold for the whole process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import threading
import time

from ragsweep.config import LLMSpec, PriceSpec
from ragsweep.errors import RagsweepError
from ragsweep.llm.budget import Budget
from ragsweep.llm.cache import CachedCall, LLMCallCache, call_key
from ragsweep.llm.pricing import cost_usd
from ragsweep.llm.ratelimit import RateLimiter
from ragsweep.llm.retry import backoff_delay, is_fatal, is_retryable, retry_after_seconds, status_of
from ragsweep.llm.tokens import count_message_tokens
from ragsweep.llm.usage import Trace, current_scope, current_trace


class LLMFatalError(RagsweepError):
    """A failure every later call would repeat (bad key, unknown model): the stage stops."""


class LLMCallError(RagsweepError):
    """One call failed for good (retries used up, or a request the server rejects)."""


class LLMEngine:
    def __init__(self, spec: LLMSpec, cache: LLMCallCache, *, price: PriceSpec | None = None,
                 budget: Budget | None = None, run_id: str | None = None, secrets: tuple[str, ...] = (),
                 seed: int = 0) -> None:
        self.spec = spec
        self.cache = cache
        self.price = price
        self.budget = budget
        self.run_id = run_id
        self._secrets = tuple(s for s in secrets if s)
        self._rng = random.Random(seed)
        self._limiter = RateLimiter(spec.requests_per_minute, spec.tokens_per_minute)
        self._sem: asyncio.Semaphore | None = None
        self._inflight: dict[str, asyncio.Future] = {}
        self.fatal: str | None = None
        self.calls = self.cache_hits = self.retries = self.failures = 0
        self.in_flight = self.max_in_flight = 0
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"llm-{spec.model}", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ entry points
    def submit(self, llm, messages, kwargs: dict) -> concurrent.futures.Future:
        """Schedule a chat call on the engine's loop; the caller's scope and trace go with it."""
        if self._closed:
            raise LLMCallError(f"the LLM engine for {self.spec.model!r} is closed")
        return asyncio.run_coroutine_threadsafe(
            self._call(llm, list(messages), dict(kwargs), current_scope(), current_trace()), self._loop)

    def close(self) -> None:
        self._closed = True
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)

    def scrub(self, text: str) -> str:
        for s in self._secrets:
            text = text.replace(s, "***")
        return text

    # ------------------------------------------------------------------ one call
    async def _call(self, llm, messages, kwargs, scope: dict, trace: Trace | None) -> CachedCall:
        if self.fatal:
            raise LLMFatalError(self.fatal)
        params = llm.request_params(kwargs)
        msg_dicts = [{"role": getattr(m.role, "value", m.role), "content": m.content or ""} for m in messages]
        key = call_key(self.spec.model, msg_dicts, params)
        hit = self.cache.get(key)
        while hit is None and key in self._inflight:  # the same call is on its way: wait for it, do not repeat it
            try:
                hit = await asyncio.shield(self._inflight[key])
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():  # this caller was cancelled
                    raise
                hit = self.cache.get(key)  # only the first caller was: make the call (or join a newer one)
        if hit is not None:
            self.cache_hits += 1
            _record(trace, hit, cached=True)
            return hit
        fut: asyncio.Future = self._loop.create_future()
        self._inflight[key] = fut
        try:
            call = await self._fresh(llm, messages, kwargs, params, key, scope, trace)
            fut.set_result(call)
            return call
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # retrieved: no "never retrieved" warning when nobody else waited
            raise
        finally:
            self._inflight.pop(key, None)

    async def _fresh(self, llm, messages, kwargs, params, key, scope, trace) -> CachedCall:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.spec.concurrency)
        est_out = int(params.get("max_tokens") or params.get("max_completion_tokens") or self.spec.max_tokens)
        # the prompt's size is needed only to rate-limit tokens or to bound spending
        need_estimate = self.budget is not None or self.spec.tokens_per_minute is not None
        est_in = count_message_tokens(messages) if need_estimate else 0
        reserved, held = 0.0, False
        if self.budget is not None:
            reserved = await self._reserve(cost_usd(self.price, est_in, est_out) or 0.0)
            held = True
        try:
            attempt = 0
            while True:
                if self.fatal:
                    raise LLMFatalError(self.fatal)
                await self._limiter.acquire(est_in + est_out)
                async with self._sem:
                    if self.fatal:  # it came while this call waited for a slot: do not send it
                        raise LLMFatalError(self.fatal)
                    self.in_flight += 1
                    self.max_in_flight = max(self.max_in_flight, self.in_flight)
                    t0 = time.perf_counter()
                    try:
                        resp = await llm._raw_achat(messages, **kwargs)
                        error = None
                    except Exception as exc:  # noqa: BLE001 - classified below
                        error = exc
                    finally:
                        self.in_flight -= 1
                    ms = (time.perf_counter() - t0) * 1000
                if error is None:
                    break
                if is_fatal(error):
                    self.fatal = self._fatal_message(error)
                    raise LLMFatalError(self.fatal) from None
                if not is_retryable(error) or attempt >= self.spec.max_retries:
                    self.failures += 1
                    tried = f" after {attempt + 1} attempts" if attempt else ""
                    raise LLMCallError(f"LLM call failed{tried}: {self._describe(error)}") from None
                wait = backoff_delay(attempt, retry_after_seconds(error), cap=self.spec.max_backoff, rng=self._rng)
                attempt += 1
                self.retries += 1
                if trace is not None:
                    trace.retries += 1
                await asyncio.sleep(wait)
            usage = resp.additional_kwargs or {}
            if "prompt_tokens" not in usage and not need_estimate:  # endpoint reports no usage: estimate it
                est_in = count_message_tokens(messages)
            p = int(usage.get("prompt_tokens", est_in) or 0)
            c = int(usage.get("completion_tokens", 0) or 0)
            self._limiter.correct(est_in + est_out, p + c)
            cost = cost_usd(self.price, p, c)
            raw = getattr(resp, "raw", None)
            finish = None
            try:
                finish = raw.choices[0].finish_reason  # type: ignore[union-attr]
            except (AttributeError, IndexError, TypeError):
                pass
            call = CachedCall(resp.message.content or "", finish, p, c, ms, cost)
            self.cache.put(key, self.spec.model, call, {**scope, "run": self.run_id})
            self.calls += 1
            if self.budget is not None:
                self.budget.settle(reserved, cost or 0.0)
                held = False
            _record(trace, call, cached=False)
            return call
        finally:
            if held:
                self.budget.release(reserved)

    async def _reserve(self, amount: float) -> float:
        """Reserve a call's worst case; while other calls' reservations are outstanding, wait for
        them to settle (usually far below their worst case) before refusing."""
        from ragsweep.llm.budget import BudgetExhausted

        while True:
            try:
                return self.budget.reserve(amount)
            except BudgetExhausted:
                if self.budget.outstanding == 0:
                    raise
                await asyncio.sleep(0.02)

    # ------------------------------------------------------------------ messages
    def _describe(self, exc: BaseException) -> str:
        status = status_of(exc)
        text = str(exc).strip().splitlines()
        msg = f"{type(exc).__name__}" + (f" ({status})" if status else "") + (f": {text[0]}" if text else "")
        return self.scrub(msg)[:500]

    def _fatal_message(self, exc: BaseException) -> str:
        status = status_of(exc)
        where = self.spec.base_url or "https://api.openai.com/v1"
        if status == 401:
            hint = (f"the endpoint refused the API key from ${self.spec.api_key_env}; check the key"
                    if self.spec.api_key_env else "the endpoint wants an API key; set llm.api_key_env")
        elif status == 403:
            hint = "the key has no access to this model or endpoint"
        elif status == 429:
            hint = "the account's quota is used up (insufficient_quota); add credit or use another key"
        else:
            hint = (f"model {self.spec.model!r} or the path not found there; fix llm.model (GET {where}/models "
                    "lists them) or base_url (OpenAI-compatible servers usually end in /v1)")
        return f"LLM endpoint {where}: {hint} [{self._describe(exc)}]"


def _record(trace: Trace | None, call: CachedCall, cached: bool) -> None:
    if trace is None:
        return
    trace.calls += 1
    trace.cached += int(cached)
    trace.prompt_tokens += call.prompt_tokens
    trace.completion_tokens += call.completion_tokens
    trace.ms += call.ms
    trace.replies.append(call.content)
    if cached:
        trace.cached_ms += call.ms
    else:
        if call.cost_usd is None:
            trace.unpriced += 1
        else:
            trace.cost_usd += call.cost_usd
