"""Many LLM-bound tasks at once, stopping cleanly when one says the stage must stop.

The LLM engine bounds the requests in flight; this pool only keeps enough tasks queued to fill
it. A budget reached or an endpoint refusing every call (``BudgetExhausted``, ``LLMFatalError``)
stops taking new items while those already started finish, so nothing paid for is thrown away.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from ragsweep.errors import RagsweepError

T = TypeVar("T")


async def drain(items: Sequence[T], handle: Callable[[T], Awaitable[None]], workers: int) -> RagsweepError | None:
    """Run ``handle`` on every item, ``workers`` at a time, in order; return the error that stopped
    the pool, if any (every other exception is ``handle``'s to record)."""
    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError

    queue = list(reversed(items))
    stop: list[RagsweepError] = []

    async def worker() -> None:
        while queue and not stop:
            item = queue.pop()
            try:
                await handle(item)
            except (BudgetExhausted, LLMFatalError) as exc:
                stop.append(exc)

    await asyncio.gather(*(worker() for _ in range(max(1, workers))))
    return stop[0] if stop else None
