"""What an ``engine.LLMEngine`` is given: the run's terms once, when it is made (``RunTerms``), and each chat call
on its way down the call path (``ChatCall``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragsweep.config import PriceSpec
from ragsweep.llm.budget import Budget
from ragsweep.llm.usage import Trace


@dataclass(frozen=True)
class RunTerms:
    """What the run sets for an engine's calls, held together as the run hands them over: the price a call is
    charged at (None: not charged), the budget it spends from, the run the call cache records as having paid, and
    the secrets (the spec's keys and URLs) kept out of what the engine reports."""

    price: PriceSpec | None = None
    budget: Budget | None = None
    run_id: str | None = None
    secrets: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChatCall:
    """One chat call as the engine's call path passes it from step to step (``_reply``, ``_fresh``, ``_send``):
    the LLM (a ``SweepLLM``), the messages and request arguments, and who it is made for (the caller's scope and
    trace, taken when it was submitted)."""

    llm: Any
    messages: list
    kwargs: dict
    scope: dict
    trace: Trace | None
