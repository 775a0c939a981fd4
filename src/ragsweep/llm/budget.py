"""A spending ceiling for one invocation: a call is made only if it cannot pass the budget.

Each uncached call reserves its worst case (estimated prompt tokens plus ``max_tokens`` of
output) before it is sent and settles at its reported cost; when the next reservation would
pass the limit, ``BudgetExhausted`` stops the stage cleanly and everything done is kept.
"""

from __future__ import annotations

import asyncio
import threading

from ragsweep.errors import RagsweepError


class BudgetExhausted(RagsweepError):
    pass


class Budget:
    def __init__(self, limit_usd: float) -> None:
        self.limit = float(limit_usd)
        self.spent = 0.0
        self.reserved = 0.0
        self.refused = 0
        self.outstanding = 0  # reservations not yet settled (a count: float sums drift)
        self._lock = threading.Lock()

    def reserve(self, amount: float) -> float:
        with self._lock:
            if self.spent + self.reserved + amount > self.limit:
                self.refused += 1
                raise BudgetExhausted(
                    f"budget ${self.limit:.4f} reached (spent ${self.spent:.4f}); the next call could cost up to "
                    f"${amount:.4f}; finished work is kept: re-run with a higher --budget to go on"
                )
            self.reserved += amount
            self.outstanding += 1
            return amount

    async def reserve_when_settled(self, amount: float) -> float:
        """``reserve``, but while other calls' reservations are outstanding, wait for them to settle (usually far
        below their worst case) before refusing."""
        while True:
            try:
                return self.reserve(amount)
            except BudgetExhausted:
                if self.outstanding == 0:
                    raise
                await asyncio.sleep(0.02)

    def settle(self, reserved: float, actual: float) -> None:
        with self._lock:
            self.reserved -= reserved
            self.outstanding -= 1
            if self.outstanding == 0:
                self.reserved = 0.0
            self.spent += actual

    def release(self, reserved: float) -> None:
        with self._lock:
            self.reserved -= reserved
            self.outstanding -= 1
            if self.outstanding == 0:
                self.reserved = 0.0
