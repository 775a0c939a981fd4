"""Client-side rate limits in requests/min and tokens/min, as token buckets.

A bucket holds up to one minute's allowance and refills continuously (the "token bucket" of
Turner 1986, "New directions in communications"); a call waits until both buckets can pay for
it. Token costs are estimated before the call and corrected with the reported usage after it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Callable


class TokenBucket:
    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.level = self.capacity
        self._clock = clock
        self._t = clock()

    def _refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._t) * self.rate)
        self._t = now

    def wait_time(self, amount: float) -> float:
        """Seconds until ``amount`` can be paid (0 if now); amounts above capacity pay a full bucket."""
        self._refill()
        need = min(amount, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def pay(self, amount: float) -> None:
        self._refill()
        self.level -= min(amount, self.capacity)

    def adjust(self, delta: float) -> None:
        """Correct an earlier payment by ``delta`` (positive: it cost more than estimated)."""
        self._refill()
        self.level = min(self.capacity, self.level - delta)


class RateLimiter:
    """Both limits at once; ``None`` disables a limit. Use from one event loop."""

    def __init__(self, requests_per_minute: float | None, tokens_per_minute: float | None) -> None:
        self.requests = TokenBucket(requests_per_minute) if requests_per_minute else None
        self.tokens = TokenBucket(tokens_per_minute) if tokens_per_minute else None
        self._lock: asyncio.Lock | None = None
        self.waited_s = 0.0

    async def acquire(self, tokens: float) -> None:
        if self.requests is None and self.tokens is None:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # first come, first served
            while True:
                wait = max(
                    self.requests.wait_time(1) if self.requests else 0.0,
                    self.tokens.wait_time(tokens) if self.tokens else 0.0,
                )
                if wait <= 0:
                    break
                self.waited_s += wait
                await asyncio.sleep(wait)
            if self.requests:
                self.requests.pay(1)
            if self.tokens:
                self.tokens.pay(tokens)

    def correct(self, estimated: float, actual: float) -> None:
        if self.tokens is not None:
            self.tokens.adjust(actual - estimated)
