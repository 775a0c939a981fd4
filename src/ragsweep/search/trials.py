"""What a trial is: one configuration evaluated on the validation questions, and what that took."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeGuard

# ``quality`` is maximised unless its metric is one where lower is better; latency and cost are minimised
MINIMISED = {"latency", "cost"}
Direction = Literal["minimize", "maximize"]


@dataclass(frozen=True)
class Outcome:
    """One configuration's evaluation: objective values (None when it failed), what it cost to compute
    (wall seconds of its work this time, LLM dollars its answers record) and how many questions it had."""

    values: dict[str, float] | None
    seconds: float = 0.0
    usd: float = 0.0
    questions: int = 0
    failed_questions: int = 0
    reason: str | None = None
    dropped: dict | None = None  # racing: {"at": questions seen, "p": adjusted p-value, "leader": config id}


@dataclass
class Trial:
    """A trial as the study holds it. ``state``: complete, failed, running (asked, not told: a killed
    invocation), repeat (a configuration evaluated before, told its earlier values at no cost) or pruned
    (dropped by racing: ``values`` are its means on the questions it saw, ``dropped`` says when and why) or
    skipped (a cost-aware search asked it and evaluated a cheaper proposal instead)."""

    number: int
    config_hash: str | None
    config_id: str | None
    state: str
    values: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    usd: float = 0.0
    repeat_of: int | None = None
    reason: str | None = None
    batch: int | None = None
    questions: int = 0
    dropped: dict | None = None
    features: dict | None = None  # what it added when asked (``search.cost.features``)
    predicted: float | None = None  # seconds the cost model predicted when it was asked

    @property
    def evaluated(self) -> bool:
        """A configuration's own evaluation (a repeat reuses another trial's)."""
        return self.state in ("complete", "failed", "pruned") and self.config_hash is not None


def directions(objectives: Sequence[str], lower_is_better: bool) -> list[Direction]:
    """Optuna's direction per objective."""
    return ["minimize" if o in MINIMISED or (o == "quality" and lower_is_better) else "maximize" for o in objectives]


def finite(x: object) -> TypeGuard[float]:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)
