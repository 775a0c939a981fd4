"""A discrete-event simulation of an LLM server with a request queue, driven by ragsweep's AdaptiveLimit.

Virtual time: nothing sleeps, so the outcome is a function of the inputs alone (no thread timing, no
machine speed). The server has ``slots`` FIFO slots (llama-cpp-python: 1; llama.cpp ``--parallel k``:
k) and keeps computing a request its client abandoned (as llama-cpp-python's non-streaming endpoint
does); the client times out after ``timeout`` seconds, waits until ``AdaptiveLimit`` says the server is
done with the abandoned copy, and sends it again, as the engine does.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from dataclasses import dataclass, field

from ragsweep.llm.capacity import AdaptiveLimit, Clock


@dataclass
class SimResult:
    wall_s: float
    server_generations: int  # requests the server computed, abandoned ones included
    replies: int  # replies the client received
    timeouts: int
    limit: AdaptiveLimit
    failed: int = 0  # requests that timed out more than ``max_retries`` times
    latencies_ms: list[float] = field(default_factory=list)
    services_ms: list[float | None] = field(default_factory=list)


class _Sim:
    def __init__(self) -> None:
        self.now = 0.0
        self._heap: list = []
        self._seq = itertools.count()

    def at(self, delay: float, fn) -> None:
        heapq.heappush(self._heap, (self.now + delay, next(self._seq), fn))

    async def run(self, finished: asyncio.Future) -> None:
        while True:
            for _ in range(20):  # let every coroutine that can go on reach its next wait
                await asyncio.sleep(0)
            if finished.done():
                return
            if not self._heap:
                raise RuntimeError("simulation stuck: requests wait for nothing")
            t, _, fn = heapq.heappop(self._heap)
            self.now = t
            fn()


class _Server:
    """FIFO server with ``slots`` slots; a request's service time is given by the caller."""

    def __init__(self, sim: _Sim, slots: int) -> None:
        self.sim, self.slots, self.busy, self.queue, self.generations = sim, slots, 0, [], 0

    def submit(self, service_s: float, fut: asyncio.Future) -> None:
        self.queue.append((service_s, fut))
        self._start()

    def _start(self) -> None:
        while self.busy < self.slots and self.queue:
            service_s, fut = self.queue.pop(0)
            self.busy += 1
            self.sim.at(service_s, lambda fut=fut: self._finish(fut))

    def _finish(self, fut: asyncio.Future) -> None:
        self.busy -= 1
        self.generations += 1
        if not fut.done():
            fut.set_result(self.sim.now)
        self._start()


class _Batching:
    """A batching server (vLLM-like): every request in at once, each progressing at ``1 / (1 + slowdown * (n - 1))``
    of its solo speed while ``n`` are in (processor sharing); computed to the end even when its client left."""

    def __init__(self, sim: _Sim, slowdown: float) -> None:
        self.sim, self.slowdown, self.generations = sim, slowdown, 0
        self.jobs: dict[int, list] = {}  # id -> [remaining solo seconds, future]
        self._t, self._version, self._ids = 0.0, 0, itertools.count()

    def _speed(self) -> float:
        return 1.0 / (1.0 + self.slowdown * (len(self.jobs) - 1)) if self.jobs else 0.0

    def _advance(self) -> None:
        done = (self.sim.now - self._t) * self._speed()
        for job in self.jobs.values():
            job[0] -= done
        self._t = self.sim.now

    def _schedule(self) -> None:
        self._version += 1
        if self.jobs:
            version, (jid, job) = self._version, min(self.jobs.items(), key=lambda kv: kv[1][0])
            self.sim.at(max(0.0, job[0]) / self._speed(), lambda: self._finish(jid, version))

    def submit(self, service_s: float, fut: asyncio.Future) -> None:
        self._advance()
        self.jobs[next(self._ids)] = [service_s, fut]
        self._schedule()

    def _finish(self, jid: int, version: int) -> None:
        if version != self._version:
            return
        self._advance()
        _, fut = self.jobs.pop(jid)
        self.generations += 1
        if not fut.done():
            fut.set_result(self.sim.now)
        self._schedule()


def simulate(
    services_s: list[float],
    *,
    slots: int = 1,
    concurrency: int = 8,
    timeout: float = 60.0,
    adaptive: bool = True,
    server_reports: bool = False,
    max_retries: int = 6,
    batching: float | None = None,
    size_noise: float = 0.0,
    seed: int = 0,
) -> SimResult:
    """Send one request per entry of ``services_s`` (its service time in seconds, completion tokens
    proportional to it), at most ``concurrency`` at once, as the engine does. ``batching``: a batching server
    with that per-request slowdown per extra request in (``slots`` is then ignored). ``size_noise``: the
    completion tokens a request reports are off from its service time by a lognormal factor of that sigma
    (seeded), as real service times are off from any model of a request's size."""
    import random

    rng = random.Random(seed)
    tokens_of = [max(1, round(s * 100 * rng.lognormvariate(0, size_noise))) for s in services_s]

    async def main() -> SimResult:
        sim = _Sim()
        loop = asyncio.get_running_loop()
        lim = AdaptiveLimit(concurrency, adaptive=adaptive, timeout_s=timeout, clock=Clock(lambda: sim.now, sim.at))
        server = _Server(sim, slots) if batching is None else _Batching(sim, batching)
        out = SimResult(0.0, 0, 0, 0, lim)
        pending = list(reversed(list(zip(services_s, tokens_of))))

        async def call(service_s: float, tokens: int) -> None:
            for _ in range(max_retries + 1):
                ticket = await lim.acquire()
                sent = sim.now
                fut = loop.create_future()
                server.submit(service_s, fut)
                give_up = loop.create_future()
                sim.at(timeout, lambda: give_up.done() or give_up.set_result(None))
                done, _ = await asyncio.wait({fut, give_up}, return_when=asyncio.FIRST_COMPLETED)
                if fut in done:
                    ms = (sim.now - sent) * 1000
                    served = lim.done(ticket, ms, 200, tokens, service_s * 1000 if server_reports else None)
                    out.replies += 1
                    out.wall_s = sim.now
                    out.latencies_ms.append(ms)
                    out.services_ms.append(served.service_ms)
                    return
                out.timeouts += 1
                await lim.timed_out(ticket, 200, tokens)
            out.failed += 1

        async def worker() -> None:
            while pending:
                await call(*pending.pop())

        finished = asyncio.ensure_future(asyncio.gather(*(worker() for _ in range(2 * concurrency))))
        await sim.run(finished)
        await finished
        out.server_generations = server.generations
        return out

    return asyncio.run(main())
