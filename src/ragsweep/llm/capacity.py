"""How many requests one endpoint gets at once: a limit that adapts to what the server computes at once.

A local server (llama.cpp, llama-cpp-python, Ollama) often computes one request at a time and queues
the rest. A client that keeps more in flight gains no throughput; its requests time out while they wait
in the server's queue, are sent again while the server still computes the abandoned copies, and report
queue time as latency. So the limit follows the server's *delivery rate* (the probing of BBR, Cardwell et
al. 2016, "BBR: Congestion-Based Congestion Control"): it starts at one request and doubles (slow start,
Jacobson 1988) while each level delivers at least half the gain that serving every request at once would
(``GAIN``) over the best level below it; when a level does not, the limit falls back to the smallest level
that delivered about as much (``NEAR``), and that level is tried again only rarely, at exponentially
growing gaps. The delivery rate of a window of replies is, by Little's law, the requests in flight times
the share of their time in flight that their service time represents (predicted from each request's size,
``service_model``): service seconds delivered per second, immune to how replies bunch in time. It is only
compared with rates measured the same way, all recomputed with the model as it stands when a level is judged
(an early window read through an immature model would otherwise make the next level look like a gain), so a
model that is off by a constant factor (a server's prompt cache) decides the same; the first reply of an
endpoint (a cold server) does not teach the model. A batching server (vLLM) gains from more in flight and gets up
to ``llm.concurrency``; one that queues (llama-cpp-python) does not and gets one.

Service times come from the server where it reports them (llama.cpp's ``timings``), from requests that
had the server to themselves, or, once the server is known to serve one request at a time, from the
departure before a request's (a FIFO single server starts a request when the previous one leaves);
``service_model.ServiceModel`` predicts the rest from their sizes.

A request that timed out may still be computed by the server: its slot stays taken (a *ghost*) until
the requests sent before it have come back and its own predicted service time has passed, and it is
sent again only then. Used from the engine's one event loop.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from ragsweep.llm.service_model import ServiceModel

GAIN = 0.5  # a level must deliver at least half the ideal gain (n / m - 1) over the best level m below it
NEAR = 0.9  # falling back: the smallest level delivering at least this share of the best rate seen
MIN_WINDOW = 4  # replies per window at least (2 x the limit above 2): rates over fewer are too noisy
PROBE_GAP = 4  # windows before a level that gained nothing is tried again; doubles each time it fails again
MAX_PROBE_GAP = 64
QUEUED_SHARE = 0.25  # a call "waited in the server's queue" when queue time exceeds this share of its service


@dataclass(eq=False)
class Ticket:
    id: int
    sent: float
    in_flight: int  # requests of this endpoint in flight when it was sent, itself included
    epoch: int  # the limit's epoch when it was sent (windows only use requests sent at the current limit)
    overlapped: bool = False
    settled: asyncio.Future | None = field(default=None, repr=False)  # set when a ghost is released


@dataclass(frozen=True)
class Served:
    """What one successful call took: its service time apart from the time it waited, where known."""

    service_ms: float | None
    queue_ms: float | None
    basis: str | None  # server (reported timings) | alone (nothing else in flight) | serial | None


@dataclass(frozen=True)
class _Reply:
    """What a reply says about its level: requests in flight when it was sent, its size, its wall time, and the
    service time the server reported (None: predicted from its size when the level is judged)."""

    in_flight: int
    prompt_tokens: int
    completion_tokens: int
    ms: float
    server_ms: float | None


@dataclass(frozen=True)
class Clock:
    """Where the limit reads the time and schedules a ghost's release, as one: the real ones by default, virtual
    time in tests and ``tests/queue_sim.py``. ``schedule(seconds, callback)``; None: the running loop's
    ``call_later``."""

    now: Callable[[], float] = time.monotonic
    schedule: Callable[[float, Callable[[], None]], object] | None = None


class AdaptiveLimit:
    def __init__(
        self,
        maximum: int,
        *,
        adaptive: bool = True,
        slots: int | None = None,
        start: int | None = None,
        timeout_s: float = 60.0,
        clock: Clock = Clock(),
    ) -> None:
        self.maximum = max(1, int(maximum))
        self.adaptive = adaptive and self.maximum > 1
        self.slots = slots
        # from what the server says it computes at once, else ``start`` (OpenAI's API: the most), else one
        self.limit = max(1, min(self.maximum, slots or start or 1)) if self.adaptive else self.maximum
        self.ceiling: int | None = None  # the level that last gained nothing over the levels below it (or timed out)
        # the server computes one request at a time: it said so, or two in flight delivered no more than one
        self.serial = slots == 1
        self._levels: dict[int, list[_Reply]] = {}  # level -> its last window of replies, its rate recomputed
        self.epoch = 0
        self.model = ServiceModel()
        self._timeout_ms = timeout_s * 1000
        self._clock = clock.now
        self._schedule = clock.schedule  # (seconds, callback); default: the running loop's call_later
        self._active: dict[int, Ticket] = {}
        self._ghosts: dict[int, tuple[set[int], float]] = {}
        self._waiters: deque[asyncio.Future] = deque()
        self._handed = 0  # slots handed to waiters that have not taken them yet
        self._window: list[_Reply] = []
        self._good = 0
        self._probe_gap = PROBE_GAP
        self._last_end: float | None = None
        self._next = 0
        # what happened, for the manifest and the line printed after a run
        self.calls = self.waited = self.queued = self.timeouts = self.service_known = self.changes = 0
        self.wait_s = self.queue_s = 0.0
        self.lowest = self.highest = self.limit

    # ------------------------------------------------------------------ slots
    async def acquire(self) -> Ticket:
        t0 = self._clock()
        if self._waiters or len(self._active) + self._handed >= self.limit:
            fut = asyncio.get_running_loop().create_future()
            self._waiters.append(fut)
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():  # a slot was handed over: pass it on
                    self._handed -= 1
                    self._wake()
                else:
                    try:
                        self._waiters.remove(fut)
                    except ValueError:  # already taken off by _wake in the same turn, its slot not handed
                        pass
                raise
            self._handed -= 1
            self.waited += 1
            self.wait_s += self._clock() - t0
        now = self._clock()
        ticket = Ticket(self._next, now, len(self._active) + 1, self.epoch)
        self._next += 1
        if self._active:
            ticket.overlapped = True
            for other in self._active.values():
                other.overlapped = True
        self._active[ticket.id] = ticket
        return ticket

    def done(
        self, ticket: Ticket, ms: float, prompt_tokens: int, completion_tokens: int, server_ms: float | None = None
    ) -> Served:
        """A reply came back after ``ms``; ``server_ms``: the service time the server reported, if any."""
        end = self._clock()
        self._active.pop(ticket.id, None)
        try:
            return self._learn(ticket, ms, prompt_tokens, completion_tokens, server_ms, end)
        finally:
            self._last_end = end
            self._release()

    def _learn(
        self, ticket: Ticket, ms: float, prompt_tokens: int, completion_tokens: int, server_ms: float | None, end: float
    ) -> Served:
        served = self._service(ticket, ms, server_ms, end)
        if served.basis == "server" or (served.basis == "alone" and self.calls):  # the first: a cold server
            assert served.service_ms is not None  # "server" and "alone" always carry a service time
            self.model.add(prompt_tokens, completion_tokens, served.service_ms)
        self.calls += 1
        if served.service_ms is not None:
            self.service_known += 1
            if served.queue_ms and served.queue_ms > QUEUED_SHARE * served.service_ms:
                self.queued += 1
                self.queue_s += served.queue_ms / 1000
        predicted = (
            served.service_ms if served.basis == "server" else self.model.predict(prompt_tokens, completion_tokens)
        )
        if self.adaptive and ticket.epoch == self.epoch and predicted:
            self._window.append(
                _Reply(
                    ticket.in_flight,
                    prompt_tokens,
                    completion_tokens,
                    ms,
                    served.service_ms if served.basis == "server" else None,
                )
            )
            self._decide()
        return served

    def failed(self, ticket: Ticket, *, congestion: bool = False) -> None:
        """The call failed without a reply (``congestion``: the server said it is busy, 429/503)."""
        self._active.pop(ticket.id, None)
        if congestion and self.adaptive and self.limit > 1:
            self.ceiling = self.limit
            self._set(max(1, self.limit // 2))
        self._release()

    def timed_out(self, ticket: Ticket, prompt_tokens: int, max_tokens: int) -> asyncio.Future:
        """The client gave up on ``ticket``; the server may still compute it. Its slot stays taken until the
        requests sent before it have come back and its own service time has passed; the returned future is
        set then, and the request may be sent again."""
        self.timeouts += 1
        if self.adaptive and self.limit > 1:
            self.ceiling = self.limit
            self._set(max(1, self.limit // 2))
        ahead = {t.id for t in self._active.values() if t.id < ticket.id}  # sent before it
        try:
            predicted = self.model.predict(prompt_tokens, max_tokens)
        except Exception:  # noqa: BLE001 - a model that cannot predict holds the slot for the timeout
            predicted = None
        hold = min(self._timeout_ms, predicted) if predicted is not None else self._timeout_ms
        ticket.settled = asyncio.get_running_loop().create_future()
        self._ghosts[ticket.id] = (ahead, hold)
        self._check_ghosts()
        return ticket.settled

    # ------------------------------------------------------------------ what a reply says about the server
    def _service(self, ticket: Ticket, ms: float, server_ms: float | None, end: float) -> Served:
        if server_ms is not None and server_ms > 0:
            service = min(ms, server_ms)
            return Served(service, ms - service, "server")
        if not ticket.overlapped:
            return Served(ms, 0.0, "alone")
        if self.serial and self._last_end is not None:
            start = max(ticket.sent, self._last_end)
            service = min(ms, (end - start) * 1000)
            return Served(service, ms - service, "serial")
        return Served(None, None, None)

    def _decide(self) -> None:
        if len(self._window) < max(MIN_WINDOW, 2 * self.limit):
            return
        window, self._window = self._window, []
        if max(r.in_flight for r in window) < self.limit:
            return  # the limit was not what held the requests back: nothing learnt about it
        level = self.limit
        self._levels[level] = window
        rates = {n: r for n, r in ((n, self._rate(w)) for n, w in self._levels.items()) if r is not None}
        if level not in rates:
            return
        rate = rates[level]
        below = {n: r for n, r in rates.items() if n < level}
        if below:
            best = max(below, key=lambda n: (below[n], -n))
            if rate < (1 + GAIN * (level / best - 1)) * below[best]:  # more in flight did not serve more
                self.serial = self.serial or (level == 2 and best == 1)
                if self.ceiling is not None and level >= self.ceiling:
                    self._probe_gap = min(MAX_PROBE_GAP, self._probe_gap * 2)  # a probe that failed again
                self.ceiling, self._good = level, 0
                top = max(r for n, r in rates.items() if n <= level)
                self._set(min(n for n, r in rates.items() if n <= level and r >= NEAR * top))
                return
        if self.ceiling is not None and level >= self.ceiling:  # a probe that gained: forget the old level
            self.ceiling, self._probe_gap = None, PROBE_GAP
        if level >= 2 and below:
            self.serial = self.slots == 1
        if self.ceiling is None:
            self._set(min(self.maximum, 2 * level))
        elif level + 1 < self.ceiling:
            self._set(level + 1)
        else:
            self._good += 1
            if self._good >= self._probe_gap:
                self._good = 0
                self._set(min(self.maximum, level + 1))

    def _rate(self, window: list[_Reply]) -> float | None:
        """Service seconds a window delivered per second (Little's law), with the model as it stands now."""
        predicted = [
            r.server_ms if r.server_ms is not None else self.model.predict(r.prompt_tokens, r.completion_tokens)
            for r in window
        ]
        known = [p for p in predicted if p is not None]
        if len(known) < len(predicted):
            return None
        in_flight = sum(r.in_flight for r in window) / len(window)
        return in_flight * sum(known) / sum(r.ms for r in window)

    def _set(self, limit: int) -> None:
        if limit == self.limit:
            return
        self.limit = limit
        self.epoch += 1
        self._window = []
        self.changes += 1
        self.lowest, self.highest = min(self.lowest, limit), max(self.highest, limit)
        self._wake()

    # ------------------------------------------------------------------ bookkeeping
    def _release(self) -> None:
        self._check_ghosts()
        self._wake()

    def _check_ghosts(self) -> None:
        for gid, (ahead, hold) in list(self._ghosts.items()):
            if not ahead & self._active.keys():
                del self._ghosts[gid]
                schedule = self._schedule or asyncio.get_running_loop().call_later
                schedule(hold / 1000, functools.partial(self._release_ghost, gid))

    def _release_ghost(self, gid: int) -> None:
        ticket = self._active.pop(gid, None)
        if ticket is not None and ticket.settled is not None and not ticket.settled.done():
            ticket.settled.set_result(None)
        self._release()

    def _wake(self) -> None:
        while self._waiters and len(self._active) + self._handed < self.limit:
            fut = self._waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                self._handed += 1

    def summary(self) -> dict:
        return {
            "adaptive": self.adaptive,
            "maximum": self.maximum,
            "slots": self.slots,
            "limit": self.limit,
            "lowest": self.lowest,
            "highest": self.highest,
            "queued_at": self.ceiling,
            "serial": self.serial,
            "changes": self.changes,
            "calls": self.calls,
            "waited": self.waited,
            "wait_s": round(self.wait_s, 3),
            "queued": self.queued,
            "queue_s": round(self.queue_s, 3),
            "timeouts": self.timeouts,
            "service_known": self.service_known,
        }
