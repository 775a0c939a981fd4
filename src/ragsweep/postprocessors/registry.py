"""Applying a postprocessor: its spec class names the function (``builder``, ``ragsweep.components``).

Each function takes ``(spec, config, nodes, dataset)`` (the configuration's postprocessor spec, the
configuration, the retrieved nodes in rank order, the dataset whose documents the nodes come from) and
returns a ``base.Shaped``. They are pure functions of their inputs (memoised per process where they
re-split a document), so a Ray task gives the same result as the driver.
"""

from __future__ import annotations

import time

from ragsweep.components import builder
from ragsweep.postprocessors.base import Shaped, unchanged


def postprocess(config, nodes: list, dataset) -> tuple[Shaped, float]:
    """``config``'s postprocessor over its retrieved ``nodes``, and the milliseconds it took (0 without one)."""
    spec = config.postprocessor
    if spec is None:
        return unchanged(nodes), 0.0
    t0 = time.perf_counter()
    shaped = builder(spec)(spec, config, list(nodes), dataset)
    ms = (time.perf_counter() - t0) * 1000
    shaped.record = {"postprocess_ms": ms, "n_retrieved": len(nodes), **shaped.record}
    return shaped, ms
