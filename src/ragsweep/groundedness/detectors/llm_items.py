"""Running an LLM detector over items: every item at once (the engine bounds concurrency and rate), each
with its own trace, so an item's time is the sum of its calls' service times (the server's time on them, not
what they waited in its queue, where that can be had: ``llm.capacity``) and its cost is priced from its tokens
(cached replies included: the figure is what the detector costs, not what this run paid). Each call is
recorded in the call cache under stage ``judges`` and the detector's name."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ragsweep.groundedness.detectors.base import Scored

UNPARSEABLE = "unmeasured (unparseable reply)"


class Unmeasured(Exception):
    """Raised by a detector's ``one(item)``: no score for the item, for the reason given (an unparseable reply)."""


def run_items(items, one: Callable[[object], Awaitable[float | None]], price, name: str) -> list[Scored]:
    """``one(item)`` -> score (None or ``Unmeasured(reason)``: unmeasured); a failed call is that item's error
    (its reason), not the run's."""
    from ragsweep.errors import short_reason
    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError
    from ragsweep.llm.pricing import cost_usd
    from ragsweep.llm.usage import Trace, llm_scope

    async def each(item) -> Scored:
        trace = Trace()
        error, score = None, None
        with llm_scope(trace, stage="judges", judge=name, config_id=None):
            try:
                score = await one(item)
            except (BudgetExhausted, LLMFatalError):
                raise
            except Unmeasured as exc:
                error = str(exc) or UNPARSEABLE
            except Exception as exc:  # noqa: BLE001 - one item's failure is recorded with its reason
                error = short_reason(exc)
        if score is None and error is None:
            error = UNPARSEABLE
        return Scored(score, trace.service_ms, cost_usd(price, trace.prompt_tokens, trace.completion_tokens), error)

    async def run() -> list[Scored]:
        return list(await asyncio.gather(*(each(i) for i in items)))

    return asyncio.run(run())
