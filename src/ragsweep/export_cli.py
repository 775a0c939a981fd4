"""``ragsweep export``: one configuration of a run as a folder ``ragsweep.load_pipeline`` opens anywhere (typer
only at import; ``cli`` registers it)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ragsweep.cli_common import fail as _fail


def export(
    run_dir: Path = typer.Argument(..., help="run directory"),
    config_id: Optional[str] = typer.Argument(None, help="configuration id (default: the verdict's pick)"),
    out: Path = typer.Option(..., "--out", help="the folder to write (new, or empty)"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="cache directory (default: the one the run used)"),
) -> None:
    """Write one configuration of a run (its chunks, indexes, tuned weights, prompts, corpus) to a folder that
    `ragsweep.load_pipeline(FOLDER)` opens as a LlamaIndex query engine, without the run or its cache."""
    from ragsweep.errors import RagsweepError

    try:
        from ragsweep.export import export_pipeline

        folder = export_pipeline(run_dir, config_id, out, cache=cache)
    except RagsweepError as exc:
        _fail(exc)
    import json

    record = json.loads(folder.pipeline.read_text(encoding="utf-8"))
    from ragsweep.export.digests import folder_digest

    typer.echo(f"exported {record['config_id']} of {run_dir} to {out}/ (pipeline.json, README.md, SHA256SUMS)")
    digest = folder_digest(folder.root)
    typer.echo(f"folder digest: {digest} (pin it: ragsweep serve {out} --digest {digest})")
    typer.echo(f'load it: ragsweep.load_pipeline("{out}").engine.query("...")')
