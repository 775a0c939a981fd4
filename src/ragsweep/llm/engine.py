"""The LLM call engine: cache, single flight, budget, rate limits, concurrency and retries.

Every call of one endpoint runs on a private event loop in a background thread, whichever
thread or event loop it comes from (LlamaIndex calls LLMs both synchronously and
asynchronously), so the concurrency ceiling and the rate limits hold for the whole process.
Requests in flight follow the server's capacity (``capacity.AdaptiveLimit``, at most
``llm.concurrency``); each call records its service time apart from the time it waited where that
can be had, and its ``finish_reason``. A prompt the server's context window cannot hold is a
``LLMContextError``, never retried: checked before sending against the window the server stated at the
start (``server_info``), else known from the server's ``context_length_exceeded`` reply.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import threading
import time
from dataclasses import replace
from typing import Any

from ragsweep.config import LLMSpec
from ragsweep.llm.cache import CachedCall, LLMCallCache, call_key
from ragsweep.llm.capacity import AdaptiveLimit
from ragsweep.llm.engine_inputs import ChatCall, RunTerms
from ragsweep.llm.errors import (
    ConfigurationStopped,
    FormRefused,
    LLMCallError,
    LLMContextError,
    LLMFatalError,
    describe_error,
    fatal_message,
)
from ragsweep.llm.pricing import cost_usd
from ragsweep.llm.ratelimit import RateLimiter
from ragsweep.llm.reply_form import ReplyForm, current_form
from ragsweep.llm.response_facts import finish_reason, record_call, server_ms, timeout_errors
from ragsweep.llm.retry import (
    backoff_delay,
    connection_failure,
    context_overflow,
    is_fatal,
    is_retryable,
    refuses_format,
    retry_after_seconds,
    status_of,
)
from ragsweep.llm.server_info import ServerInfo, is_local
from ragsweep.llm.streamed import CURRENT_TAP, StreamBroken, StreamTap, streamed_reply
from ragsweep.llm.structured import FormUse, OutputMode
from ragsweep.llm.tokens import count_message_tokens
from ragsweep.llm.usage import current_extra, current_scope, current_trace
from ragsweep.redact import redact_text

# consecutive requests of an endpoint that could not reach it before its calls stop (one line: cannot reach URL)
UNREACHABLE_AFTER = 4

# a prompt is refused before sending only when its estimate (tiktoken's cl100k, not the server's tokenizer)
# passes the known window by this factor; closer calls are left to the server
CONTEXT_MARGIN = 1.1


class LLMEngine:
    def __init__(
        self,
        spec: LLMSpec,
        cache: LLMCallCache,
        *,
        run: RunTerms = RunTerms(),
        seed: int = 0,
        server: ServerInfo | None = None,
    ) -> None:
        self.spec = spec
        self.server = server or ServerInfo()
        # the server's context window where known (it told, or refused a prompt saying so); prompts are checked
        # before sending only against a window the server told at the start, so an answer's fate never depends
        # on which prompt happened to be refused first
        self.context_limit = self.server.context_window
        self.context_source = self.server.source if self.context_limit else None
        self.cache = cache
        self.price = run.price
        self.budget = run.budget
        self.run_id = run.run_id
        self._secrets = tuple(s for s in run.secrets if s)
        self._rng = random.Random(seed)
        self._limiter = RateLimiter(spec.requests_per_minute, spec.tokens_per_minute)
        self._capacity: AdaptiveLimit | None = None
        self._inflight: dict[str, asyncio.Future] = {}
        self.fatal: str | None = None
        self.calls = self.cache_hits = self.retries = self.failures = 0
        self.timeouts = self.truncated = self.context_refused = 0
        self.in_flight = self.max_in_flight = 0
        self.unreached = 0  # requests in a row that did not reach the server
        # configurations one of whose prompts a server of unknown window refused as too long: no call of theirs is
        # sent after it
        self.stopped_configs: dict[str, str] = {}
        self.forms = FormUse()  # structured replies: how this endpoint takes a schema, and what it took
        self._stream_usage = True  # a streamed request asks for its usage (stream_options) until refused
        self._mode_task: asyncio.Future | None = None
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"llm-{spec.model}", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ entry points
    def submit(self, llm, messages, kwargs: dict, on_delta=None) -> concurrent.futures.Future:
        """Schedule a chat call on the engine's loop; the caller's scope and trace go with it. ``on_delta``: sent
        with ``stream: true``, each piece of the reply's text is passed to it as it arrives (``streamed``)."""
        if self._closed:
            raise LLMCallError(f"the LLM engine for {self.spec.model!r} is closed")
        kwargs = {**current_extra(), **kwargs}
        tap = StreamTap(on_delta) if on_delta is not None else None
        chat = ChatCall(llm, list(messages), kwargs, current_scope(), current_trace())
        return asyncio.run_coroutine_threadsafe(self._call(chat, current_form(), tap), self._loop)

    def output_mode(self, llm) -> concurrent.futures.Future:
        """How this endpoint holds a reply to its schema (an ``OutputMode``), learnt on first use."""
        return asyncio.run_coroutine_threadsafe(self._output_mode(llm), self._loop)

    def describe(self) -> dict:
        """What this endpoint did in this process: capacity, waits, timeouts, truncations (the manifest)."""
        out = {
            "endpoint": self.scrub(self.spec.base_url or "https://api.openai.com/v1"),
            "model": self.spec.model,
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "timeouts": self.timeouts,
            "truncated": self.truncated,
            "failed": self.failures,
            "context_window": self.context_limit,
            "context_source": self.context_source,
            "max_in_flight": self.max_in_flight,
        }
        if self._capacity is not None:
            out["capacity"] = self._capacity.summary()
        if self.forms.mode is not None:
            out["structured"] = self.forms.summary()
        return out

    def close(self) -> None:
        self._closed = True
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)

    def scrub(self, text: str) -> str:
        """``text`` (an error, the endpoint) without a URL's credentials or any secret the spec's URLs and keys hold."""
        text = redact_text(text)
        for s in self._secrets:
            text = text.replace(s, "***")
        return text

    # ------------------------------------------------------------------ structured replies
    async def _call(self, chat: ChatCall, form: ReplyForm | None, tap: StreamTap | None):
        """One call; asked in ``form``, it carries the form's schema where this endpoint takes one, and is made
        again without it if the server refuses that request's ``response_format``."""
        fmt = None if form is None else await self._format_for(chat.llm, form)
        CURRENT_TAP.set(tap)  # this call's task alone (a probe or a call it joins is another task)
        if form is None or fmt is None:
            return await self._reply(chat)
        try:
            return await self._reply(replace(chat, kwargs={**chat.kwargs, "response_format": fmt}))
        except FormRefused as exc:
            self.forms.refused[form.name] = str(exc)
            return await self._reply(chat)

    async def _format_for(self, llm, form: ReplyForm) -> dict | None:
        from ragsweep.llm.structured import is_openai_api, response_format

        mode = await self._output_mode(llm)
        if not mode.constrained or form.name in self.forms.refused:
            return None
        self.forms.constrained += 1
        return response_format(mode.mode, form, openai_api=is_openai_api(self.spec.base_url))

    async def _output_mode(self, llm) -> OutputMode:
        """Learnt once per engine (single flight); a probe that could not reach the server is tried again."""
        if self.forms.mode is not None and self.forms.final:
            return self.forms.mode
        if self._mode_task is None:
            self._mode_task = asyncio.ensure_future(self._learn_mode(llm))
        task = self._mode_task
        mode, final = await asyncio.shield(task)
        if self._mode_task is task:
            self.forms.mode, self.forms.final = mode, final
            if not final:
                self._mode_task = None
        return mode

    async def _learn_mode(self, llm) -> tuple[OutputMode, bool]:
        """(mode, final): the spec's or OpenAI's, else a probe in each form in turn (``structured.learn``)."""
        from llama_index.core.base.llms.types import ChatMessage

        from ragsweep.llm.structured import PROBE_PROMPT, learn

        async def ask(kwargs: dict):
            self.forms.probes += 1
            messages = [ChatMessage(role="user", content=PROBE_PROMPT)]
            return (await self._reply(ChatCall(llm, messages, kwargs, {"stage": "probe"}, None))).content

        return await learn(self.spec.structured_output, self.spec.base_url, ask)

    # ------------------------------------------------------------------ one call
    async def _reply(self, chat: ChatCall) -> CachedCall:
        if self.fatal:
            raise LLMFatalError(self.fatal)
        params = chat.llm.request_params(chat.kwargs)
        msg_dicts = [{"role": getattr(m.role, "value", m.role), "content": m.content or ""} for m in chat.messages]
        if chat.trace is not None:
            chat.trace.last_messages = msg_dicts
        # what the server states it serves (model file, template) keys the reply too, where it states it
        key = call_key(
            self.spec.model, msg_dicts, {**params, "server": self.server.identity} if self.server.identity else params
        )
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
            record_call(chat.trace, hit, cached=True)
            return replace(hit, cached=True)
        fut: asyncio.Future = self._loop.create_future()
        self._inflight[key] = fut
        try:
            call = await self._fresh(chat, params, key)
            fut.set_result(call)
            return call
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # retrieved: no "never retrieved" warning when nobody else waited
            raise
        finally:
            self._inflight.pop(key, None)

    async def _fresh(self, chat: ChatCall, params: dict, key: str) -> CachedCall:
        """``chat`` made anew (no reply cached under ``key``, none on its way): its prompt checked against the
        window and its worst case reserved from the budget, sent, then charged, cached and recorded."""
        if self._capacity is None:  # made on the engine's loop, where its futures live
            # a hosted API serves any number at once (its rate limits are the limits): no slow start there
            self._capacity = AdaptiveLimit(
                self.spec.concurrency,
                adaptive=self.spec.adaptive_concurrency,
                slots=self.server.slots,
                timeout_s=self.spec.timeout,
                start=None if is_local(self.spec.base_url) else self.spec.concurrency,
            )
        est_out = int(params.get("max_tokens") or params.get("max_completion_tokens") or self.spec.max_tokens)
        # the prompt's size is needed to rate-limit tokens, to bound spending and to check the context window
        told = self.server.context_window
        need_estimate = self.budget is not None or self.spec.tokens_per_minute is not None or told is not None
        est_in = count_message_tokens(chat.messages) if need_estimate else 0
        if told is not None and est_in > CONTEXT_MARGIN * told:
            self.failures += 1
            self.context_refused += 1
            raise LLMContextError(est_in, told, self.server.source, sent=False)
        reserved, held = 0.0, False
        if self.budget is not None:
            reserved = await self.budget.reserve_when_settled(cost_usd(self.price, est_in, est_out) or 0.0)
            held = True
        try:
            resp, ms, served = await self._send(chat, est_in, est_out)
            usage = resp.additional_kwargs or {}
            if "prompt_tokens" not in usage and not need_estimate:  # endpoint reports no usage: estimate it
                est_in = count_message_tokens(chat.messages)
            p = int(usage.get("prompt_tokens", est_in) or 0)
            c = int(usage.get("completion_tokens", 0) or 0)
            self._limiter.correct(est_in + est_out, p + c)
            cost = cost_usd(self.price, p, c)
            finish = finish_reason(getattr(resp, "raw", None))
            self.truncated += finish == "length"
            call = CachedCall(resp.message.content or "", finish, p, c, ms, cost, served.service_ms, served.queue_ms)
            self.cache.put(key, self.spec.model, call, {**chat.scope, "run": self.run_id})
            self.calls += 1
            if self.budget is not None:
                self.budget.settle(reserved, cost or 0.0)
                held = False
            record_call(chat.trace, call, cached=False)
            return call
        finally:
            if held:
                assert self.budget is not None  # held only while a budget holds a reservation
                self.budget.release(reserved)

    async def _send(self, chat: ChatCall, est_in: int, est_out: int):
        """One request, retried on 429, 5xx, timeouts and dropped connections, through the adaptive limit:
        ``(response, wall ms, Served)``. A request that timed out is sent again only once the server is
        presumed done with it (``AdaptiveLimit.timed_out``)."""
        capacity = self._capacity
        assert capacity is not None  # made by _fresh before its first request
        attempt = 0
        while True:
            if self.fatal:
                raise LLMFatalError(self.fatal)
            await self._limiter.acquire(est_in + est_out)
            ticket = await capacity.acquire()
            if self.fatal:  # it came while this call waited for a slot: do not send it
                capacity.failed(ticket)
                raise LLMFatalError(self.fatal)
            if _stop_key(chat.scope) in self.stopped_configs:  # its configuration's prompts are too long
                capacity.failed(ticket)
                self.context_refused += 1
                raise ConfigurationStopped(self.stopped_configs[_stop_key(chat.scope)])
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            t0 = time.perf_counter()
            error: Exception | None = None
            resp: Any = None
            tap = CURRENT_TAP.get()
            try:
                if tap is None:
                    resp = await chat.llm._raw_achat(chat.messages, **chat.kwargs)
                else:
                    resp = await streamed_reply(chat.llm, chat.messages, chat.kwargs, tap, self._stream_usage)
            except Exception as exc:  # noqa: BLE001 - classified below
                error = exc
            except BaseException:  # cancelled (rare: a stopping stage): the slot goes back at once
                capacity.failed(ticket)
                raise
            finally:
                self.in_flight -= 1
            ms = (time.perf_counter() - t0) * 1000
            if error is None:
                self.unreached = 0
                usage = resp.additional_kwargs or {}
                p = int(usage.get("prompt_tokens", 0) or 0) or (est_in or count_message_tokens(chat.messages))
                c = int(usage.get("completion_tokens", 0) or 0)
                return resp, ms, capacity.done(ticket, ms, p, c, server_ms(getattr(resp, "raw", None)))
            settled = None
            if isinstance(error, timeout_errors()):
                self.timeouts += 1
                settled = capacity.timed_out(ticket, est_in or count_message_tokens(chat.messages), est_out)
            else:
                capacity.failed(ticket, congestion=status_of(error) in (429, 503))
            if tap is not None and self._stream_usage and status_of(error) == 400 and "stream_options" in str(error):
                self._stream_usage = False  # a server that takes no stream_options: asked without (usage counted)
                continue
            retryable = isinstance(error, StreamBroken) or is_retryable(error)
            if tap is not None and tap.chars and (not retryable or attempt >= self.spec.max_retries):
                self.failures += 1  # part of the reply was shown and cannot be taken back
                broke = f"the reply's stream broke after {tap.chars} characters"
                raise LLMCallError(f"{broke}: {describe_error(error, self.scrub)}; ask again") from None
            overflow = context_overflow(error)
            if overflow is None and "response_format" in chat.kwargs and refuses_format(error):
                raise FormRefused(status_of(error), describe_error(error, self.scrub)) from None
            if overflow is not None:
                self.failures += 1
                asked, limit = overflow
                if self.server.context_window is None and chat.scope.get("config_id"):  # a window not known ahead:
                    # the configuration's other prompts of the stage (its size) are not sent, queued ones included
                    self.stopped_configs.setdefault(
                        _stop_key(chat.scope), "the server refused an earlier prompt of this configuration"
                    )
                if limit:
                    self.context_limit, self.context_source = limit, "the server's error reply"
                raise LLMContextError(asked, limit, self.context_source, sent=True) from None
            if is_fatal(error):
                self.fatal = fatal_message(self.spec, error, self.scrub)
                raise LLMFatalError(self.fatal) from None
            unreached = connection_failure(error)
            self.unreached = self.unreached + 1 if unreached else 0
            if unreached and self.unreached >= UNREACHABLE_AFTER:  # down: stop, do not retry for minutes
                where = self.scrub(self.spec.base_url or "https://api.openai.com/v1")
                self.fatal = (
                    f"cannot reach {where} ({unreached}); start the server or fix base_url, then run the same "
                    "command again: it goes on where this one stopped"
                )
                raise LLMFatalError(self.fatal) from None
            if not retryable or attempt >= self.spec.max_retries:
                self.failures += 1
                tried = f" after {attempt + 1} attempts" if attempt else ""
                raise LLMCallError(f"LLM call failed{tried}: {describe_error(error, self.scrub)}") from None
            wait = backoff_delay(attempt, retry_after_seconds(error), cap=self.spec.max_backoff, rng=self._rng)
            attempt += 1
            self.retries += 1
            if chat.trace is not None:
                chat.trace.retries += 1
            await asyncio.sleep(wait)
            if settled is not None:
                await settled  # the server is presumed done with the copy it was computing


def _stop_key(scope: dict) -> str:
    """A configuration's calls of one stage and judge (its generation prompts; one judge's prompts): what a
    refusal stops."""
    return f"{scope.get('stage')}:{scope.get('judge')}:{scope.get('config_id')}"
