"""``ragsweep.sweep``: a sweep from Python (a notebook, a script), with the command line's checks and errors."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ragsweep.errors import RagsweepError


def sweep(
    spec: dict | str | os.PathLike | Any,
    *,
    run_dir: str | os.PathLike | None = None,
    cache: str | os.PathLike | None = None,
    limit: int | None = None,
    fresh: bool = False,
    progress: bool = True,
    budget: float | None = None,
):
    """Run (or resume) a sweep and return its ``RunData`` (``records``, ``summary``, ``verdict``,
    ``engine(config_id)``).

    ``spec``: a mapping as a YAML spec holds (its relative paths are relative to the working directory), the path
    of a YAML spec (relative to its file), or a ``SweepSpec``. A bad spec, dataset or key raises ``RagsweepError``
    with the one line ``ragsweep run`` prints; ``budget`` (USD) stops before this call's LLM spending would pass it
    (``BudgetExhausted``; finished work is kept). The progress bars are rich's, which Jupyter shows too.
    """
    from rich.console import Console

    from ragsweep.config import SweepSpec, load_spec, parse_spec
    from ragsweep.driver import SweepRequest, run_sweep
    from ragsweep.results.run import load_run

    if isinstance(spec, SweepSpec):
        parsed = spec
    elif isinstance(spec, dict):
        parsed = parse_spec(spec, "<spec>", base_dir=Path.cwd())
    elif isinstance(spec, (str, os.PathLike)):
        parsed = load_spec(Path(spec))
    else:
        raise RagsweepError(f"spec: give a mapping, the path of a YAML spec or a SweepSpec, not {type(spec).__name__}")
    request = SweepRequest(
        parsed,
        run_dir=Path(run_dir) if run_dir is not None else None,
        cache_dir=Path(cache) if cache is not None else None,
        fresh=fresh,
        limit=limit,
        progress=progress,
        console=Console(),
        budget=budget,
    )
    return load_run(run_sweep(request))
