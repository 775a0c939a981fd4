"""The ``search:`` section: enumerate the grid (the default) or search it within a budget.

A search evaluates configurations on the validation questions only, one trial per configuration
(with ``racing``, on growing batches of them, and a trial significantly worse than the leader stops early),
in an Optuna study stored in the run directory (``search.sqlite``); the best few (``finalists``)
are then answered on the test questions, where the verdict reports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator, model_validator

from ragsweep.components import Named
from ragsweep.config.base import Strict

# the search strategies, one module each behind ``search.strategies.base.Strategy``: a new one is its module and
# a line here. Capabilities: every_configuration (enumerates the grid: no budget), budgeted (searches within one),
# multi_objective (several objectives), multi_objective_only.
STRATEGIES: dict[str, Named] = {
    "grid": Named("ragsweep.search.strategies.grid:GridStrategy", ("every_configuration",)),
    "random": Named("ragsweep.search.strategies.random_search:RandomStrategy", ("budgeted", "multi_objective")),
    "greedy": Named("ragsweep.search.strategies.greedy:GreedyStrategy", ("budgeted",)),
    "tpe": Named("ragsweep.search.strategies.tpe:TPEStrategy", ("budgeted", "multi_objective")),
    "nsga2": Named(
        "ragsweep.search.strategies.nsga2:NSGA2Strategy", ("budgeted", "multi_objective", "multi_objective_only")
    ),
}
if TYPE_CHECKING:  # the table's names and auto, known at run time: any name to a type checker
    STRATEGY_NAMES = str
else:
    STRATEGY_NAMES = Literal[(*STRATEGIES, "auto")]


def _able(capability: str, but: str = "") -> list[str]:
    """The strategies with ``capability`` (and without ``but``), in the table's order."""
    return [name for name, kind in STRATEGIES.items() if kind.has(capability) and not (but and kind.has(but))]


def _either(capability: str, but: str = "") -> str:
    """Those strategies in a sentence: ``random, tpe or nsga2``."""
    names = _able(capability, but)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


# search: auto, from bench/search_bench.py on two LegalBench-RAG subsets (BENCHMARKS.md, "Search instead of
# enumeration"): greedy had the lowest worst-subset median test regret at 20 % of the grid's compute (-0.027 on
# privacy_qa, 0.000 on contractnli; tpe -0.081 and +0.022), and MOTPE's front covered most of the grid's
AUTO = {"single": "greedy", "multi": "tpe"}
Objective = Literal["quality", "latency", "cost"]


class BudgetSpec(Strict):
    """When the search stops: whichever limit is reached first (checked between trials, so the last
    trial may pass a time or dollar limit by what it took)."""

    trials: int | None = Field(None, ge=1, description="distinct configurations evaluated")
    seconds: float | None = Field(None, gt=0, description="compute spent evaluating trials (wall seconds)")
    usd: float | None = Field(None, gt=0, description="LLM dollars the trials' validation answers record")
    fraction: float | None = Field(None, gt=0, le=1, description="trials as a fraction of the grid's size")

    def trial_limit(self, n_configs: int) -> int | None:
        """Trials allowed: ``trials`` and ``fraction`` of ``n_configs`` (rounded up), the smaller."""
        import math

        limits = [
            x for x in (self.trials, math.ceil(self.fraction * n_configs) if self.fraction else None) if x is not None
        ]
        return min(limits) if limits else None

    @property
    def empty(self) -> bool:
        return all(x is None for x in (self.trials, self.seconds, self.usd, self.fraction))


class RacingSpec(Strict):
    """Racing (``search.racing``): trials are answered on growing batches of validation questions and dropped
    when significantly worse than the leader (paired one-sided tests, at alpha / (m - 1), alpha shared by
    the looks)."""

    first: float = Field(0.2, gt=0, le=1, description="fraction of the validation questions at the first look")
    growth: float = Field(2.0, gt=1, description="each look sees this many times the questions of the last")
    minimum: int = Field(10, ge=2, description="questions at the first look, at least")
    alpha: float = Field(0.05, gt=0, lt=1, description="chance of ever dropping the best configuration")
    family: bool = Field(
        True,
        description="true: each test at alpha / (m - 1), so the bound holds over the m "
        "configurations raced; false: each at alpha over the looks (as Optuna's "
        "WilcoxonPruner tests each trial alone), more dropped sooner, no bound "
        "on dropping the best (BENCHMARKS.md)",
    )


class SearchSpec(Strict):
    """How configurations are chosen. ``grid`` answers every configuration on every question; the
    others evaluate trials on the validation questions until the budget is spent."""

    strategy: STRATEGY_NAMES = Field(
        "grid", description="auto: the strategy the benchmark found most robust (AUTO), recorded in chosen_by"
    )
    chosen_by: Literal["spec", "auto"] = Field("spec", description="set by strategy: auto")
    budget: BudgetSpec = Field(default_factory=BudgetSpec, description="default for a search: fraction 0.2 of the grid")
    seed: int | None = Field(None, description="the sampler's seed; default: the spec's seed")
    objectives: list[Objective] = Field(
        ["quality"],
        min_length=1,
        description="quality (the metric's validation mean, maximised), latency (median ms per question) and "
        "cost (LLM USD per question), minimised; two or more make a multi-objective search",
    )
    metric: str | None = Field(None, description="the quality metric; default: scoring.metric")
    order: Literal["plan", "models_first"] = Field(
        "plan", description="greedy: the axes in pipeline order, or the models (embedding, reranker, transform) first"
    )
    finalists: int = Field(
        5,
        ge=1,
        description="the best trials (by validation quality; with several objectives "
        "also the Pareto front) answered on the test questions",
    )
    batch: int = Field(1, ge=1, description="trials asked and evaluated together (an executor's parallelism)")
    cost_aware: bool = Field(
        False,
        description="evaluate the cheapest of 4 proposals, by the seconds a cost model "
        "fitted on the trials so far predicts from what each would add "
        "(chunks, index, graph, answers)",
    )
    racing: RacingSpec | None = Field(
        None,
        description="true or {first, growth, minimum, alpha}: drop trials "
        "significantly worse than the leader on early questions",
    )

    @model_validator(mode="before")
    @classmethod
    def _auto(cls, data):
        if isinstance(data, dict) and data.get("strategy") == "auto":
            several = len(data.get("objectives") or ["quality"]) > 1
            data = {**data, "strategy": AUTO["multi" if several else "single"], "chosen_by": "auto"}
        return data

    @field_validator("racing", mode="before")
    @classmethod
    def _racing_shorthand(cls, v):
        return {} if v is True else (None if v is False else v)

    @model_validator(mode="after")
    def _consistent(self) -> "SearchSpec":
        if len(set(self.objectives)) != len(self.objectives):
            raise ValueError("search.objectives must be distinct")
        if "quality" not in self.objectives:
            raise ValueError("search.objectives must include quality")
        kind, every = STRATEGIES[self.strategy], STRATEGIES[self.strategy].has("every_configuration")
        if every and not self.budget.empty:
            raise ValueError(
                f"search.budget: the {self.strategy} evaluates every configuration; choose a strategy "
                f"({', '.join(_able('budgeted'))}) to search within a budget"
            )
        if every and self.cost_aware:
            raise ValueError(f"search.cost_aware: the {self.strategy} evaluates every configuration; choose a strategy")
        if every and self.multi_objective:
            raise ValueError(
                f"search.objectives: the {self.strategy} reports every configuration; several objectives need "
                f"{_either('multi_objective')}"
            )
        if self.racing is not None and self.multi_objective:
            raise ValueError(
                "search.racing: a race drops trials by quality alone, which would lose fast or cheap "
                "ones from the Pareto front; race with objectives [quality] only"
            )
        if self.multi_objective and not kind.has("multi_objective"):
            raise ValueError(
                f"search.objectives: {self.strategy} optimises quality alone; use {_either('multi_objective')} for "
                "several objectives"
            )
        if kind.has("multi_objective_only") and not self.multi_objective:
            raise ValueError(
                f"search.strategy: {self.strategy} is multi-objective; add latency or cost to search.objectives, or "
                f"use {_either('budgeted', but='multi_objective_only')}"
            )
        return self

    @property
    def searching(self) -> bool:
        """Trials on validation and finalists on test: any strategy but the grid, and the grid with racing."""
        return not STRATEGIES[self.strategy].has("every_configuration") or self.racing is not None

    @property
    def budgeted(self) -> bool:
        """The strategy searches within a budget (every one but the grid, which enumerates)."""
        return STRATEGIES[self.strategy].has("budgeted")

    @property
    def multi_objective(self) -> bool:
        return len(self.objectives) > 1


def parse_search(value):
    """``search: tpe`` is ``search: {strategy: tpe}``."""
    return {"strategy": value} if isinstance(value, str) else value
