"""Executors schedule the units of a ``pipelines.plan.SweepPlan``: in this process (``local``) or as Ray tasks
(``ray``), each a ``base.Executor`` (one protocol, one signature). An executor never looks inside a stage: it
calls the stages' public functions, records a unit's failure against its configurations, and hands rows to the
journal. A new executor is one module here and one branch in ``open_executor``.
"""

from __future__ import annotations

from contextlib import contextmanager

EXECUTORS = ("local", "ray")


@contextmanager
def open_executor(kind: str, spec, configs, cache, console=None):
    """The executor ``kind`` names, ready for the sweep (Ray joined or started, and checked) until exit."""
    if kind == "ray":
        from ragsweep.executors.cluster import ray_session
        from ragsweep.executors.ray import RayExecutor

        with ray_session(spec, configs, cache, console) as session:
            yield RayExecutor(session)
        return
    from ragsweep.executors.local import LocalExecutor

    yield LocalExecutor()
