"""``ragsweep track``: log a finished run to an experiment tracker (MLflow) after the fact (typer only at import;
``cli`` registers it)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ragsweep.cli_common import fail as _fail


def track(
    run_dir: Path = typer.Argument(..., help="run directory"),
    mlflow: Optional[str] = typer.Option(
        None, "--mlflow", help="MLflow tracking URI (default: the run's spec's tracking.mlflow)"
    ),
    experiment: Optional[str] = typer.Option(
        None, "--experiment", help="MLflow experiment (default: the spec's tracking.experiment, else its name)"
    ),
) -> None:
    """Log a run to MLflow: an experiment per sweep, a run for the sweep (verdict, report and result files as
    artifacts) and one per configuration (its axes; every figure per split with its CI bounds; a search's trials
    at their step). What an earlier call logged is found again and not logged twice."""
    from ragsweep.errors import RagsweepError

    try:
        from ragsweep.results.manifest_file import read_manifest
        from ragsweep.tracking.mlflow_log import track_run

        tracking = (read_manifest(run_dir).get("spec") or {}).get("tracking") or {}
        uri = mlflow or tracking.get("mlflow")
        if not uri:
            raise RagsweepError("--mlflow: give the MLflow tracking URI (the run's spec names none)")
        done = track_run(run_dir, uri, experiment or tracking.get("experiment"))
    except RagsweepError as exc:
        _fail(exc)
    typer.echo(done.line())
