"""Executors schedule the units of a ``pipelines.plan.SweepPlan``: in this process (``local``) or as Ray tasks
(``ray``), each a ``base.Executor`` (one protocol, one signature). An executor never looks inside a stage: it
calls the stages' public functions, records a unit's failure against its configurations, and hands rows to the
journal. A new executor is one module here and one line in ``config/services.EXECUTORS``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from ragsweep.config.services import EXECUTORS


def open_executor(kind: str, spec, configs, cache, console=None) -> AbstractContextManager:
    """The executor ``kind`` names, ready for the sweep (Ray joined or started, and checked) until exit."""
    return EXECUTORS[kind].load()(spec, configs, cache, console)  # its module (and Ray) imported on first use
