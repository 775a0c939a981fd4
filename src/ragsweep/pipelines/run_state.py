"""One invocation's state: what the driver's steps (``ragsweep.driver``), stage 2 (``stages.judge.run_stage2``) and
the outputs (``outputs.write.write_outputs``) share instead of passing along.

Optuna's ``Study`` is the model: one object carries the run, so a step takes one argument and says in its
body what it reads and sets. The state owns what must be closed whatever happens (the executor and the
stage context on ``stack``, the LLM clients, the journal); ``close`` closes them in that order.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ragsweep.cache_dir import CacheDir
from ragsweep.config import SweepSpec
from ragsweep.datasets.types import Dataset, Question
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.grid import Configuration
from ragsweep.pipelines.journal import Journal
from ragsweep.pipelines.plan import SweepPlan
from ragsweep.pipelines.progress import Progress
from ragsweep.pipelines.stats import SweepStats
from ragsweep.run_records import SearchRecord, Stage2Record

if TYPE_CHECKING:
    from rich.console import Console

    from ragsweep.llm.clients import LLMClients


@dataclass
class RunState:
    """The run directory, cache, dataset, configurations and journal of one ``run_sweep`` call, and what its
    stages found: the plan and stage context, the error that stopped it, stage 2's and a search's records
    (``run_records``)."""

    spec: SweepSpec
    run_dir: Path
    cache: CacheDir
    t_start: float
    stats: SweepStats
    dataset: Dataset
    questions: list[Question]
    configs: list[Configuration]
    scorer_key: str
    journal: Journal
    bars: Progress
    limit: int | None = None
    budget: float | None = None
    console: Console | None = None
    stack: ExitStack = field(default_factory=ExitStack)  # the executor (Ray), the stage context: closed once
    clients: LLMClients | None = None  # when the spec calls an LLM
    run_id: str = ""
    split: dict[str, str] = field(default_factory=dict)  # qid -> validation or test (``evaluation.split``)
    plan: SweepPlan = field(init=False)  # what is pending (set by the driver's start)
    unscored_before: list | None = None  # answers left unscored by an earlier invocation (nothing to answer now)
    ctx: StageContext = field(init=False)  # the stage context of this process (set before the units run)
    judged: list[Configuration] = field(default_factory=list)  # what stage 2 may select from
    error: RagsweepError | None = None
    stage2_info: Stage2Record | None = None
    search_info: SearchRecord | None = None
    metric_why: str = "scoring.metric"  # why the verdict decides by spec.scoring.metric (evaluation.default_metric)

    def close(self) -> None:
        """Ray, a Chroma server, the embedding cache and Neo4j (``stack``), then the LLM clients and the journal."""
        try:
            self.stack.close()
        finally:
            try:
                if self.clients is not None:
                    self.clients.close()
            finally:
                self.journal.close()
