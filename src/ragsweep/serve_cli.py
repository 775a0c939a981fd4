"""``ragsweep serve``: a loaded pipeline behind an HTTP API (typer only at import; ``cli`` registers it)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ragsweep.cli_common import fail as _fail


def serve(
    source: Path = typer.Argument(..., help="an exported folder (ragsweep export) or a run directory"),
    config_id: Optional[str] = typer.Argument(None, help="with a run: the configuration (default: the verdict's pick)"),
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on (0.0.0.0: every interface)"),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="port to listen on"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="with a run: its cache (default: the one it used)"),
) -> None:
    """Serve one configuration over HTTP: POST /query (answer and sources with document, offsets, page and
    score) and an OpenAI-compatible POST /v1/chat/completions; GET /health, GET /v1/models."""
    from ragsweep.errors import RagsweepError

    try:
        from ragsweep.export import load_pipeline

        pipeline = load_pipeline(source, config_id, cache=cache)
    except RagsweepError as exc:
        _fail(exc)
    import uvicorn

    from ragsweep.serve import make_app

    try:
        typer.echo(f"serving {pipeline.config_id} at http://{host}:{port} (POST /query, POST /v1/chat/completions)")
        uvicorn.run(make_app(pipeline), host=host, port=port, log_level="warning")
    finally:
        pipeline.close()
