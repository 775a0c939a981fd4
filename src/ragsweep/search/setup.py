"""What one search is, decided once at its start and read by its evaluator and its manifest record (as Optuna's
``Study`` carries a study's state): the space, its study, the questions it optimises and reports on, the metric
and its direction, the seed and the trial budget."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragsweep.search.space import SearchSpace
from ragsweep.search.study import SearchStudy


@dataclass
class SearchSetup:
    spec: Any  # config.SweepSpec
    space: SearchSpace
    study: SearchStudy
    validation: list  # the questions trials are evaluated on
    test: list  # the questions the finalists are reported on
    split: dict  # qid -> split
    metric: str
    lower: bool  # the metric is better lower
    directions: Sequence[str]  # one per objective
    seed: int
    limit: int | None  # the trial budget (None: time or money bound it)
