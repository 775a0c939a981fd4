"""One stage's share of a dry run (``pipelines.estimate``): LLM calls, tokens and dollars, and notes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ragsweep.config import SweepSpec
    from ragsweep.datasets.types import Question
    from ragsweep.pipelines.grid import Configuration


class DryRunInputs(Protocol):
    """What a stage's estimate reads (``estimate._Run``): the spec, the questions and configurations still to do,
    what is journaled, the questions' token counts, the chat overhead, each splitter's mean chunk length."""

    spec: SweepSpec
    questions: list[Question]
    configs: list[Configuration]
    done: set
    q_tokens: dict[str, int]
    overhead: int

    def mean_chunk(self, config: Any) -> float: ...


@dataclass
class StageEstimate:
    """A stage's LLM calls, prompt and completion tokens and dollars (None once one of its calls has no price)."""

    stage: str
    model: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    notes: list[str] = field(default_factory=list)

    def add(self, calls: int, prompt: int, completion: int, price) -> None:
        from ragsweep.llm.pricing import cost_usd

        self.calls += calls
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        c = cost_usd(price, prompt, completion)
        self.cost_usd = None if c is None or self.cost_usd is None else self.cost_usd + c
