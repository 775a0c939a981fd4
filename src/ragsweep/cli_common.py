"""What the command modules share (typer only at import): the one-line error exit and the console tables print to."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer


def fail(exc: Exception) -> NoReturn:
    """Print ``error: <exc>`` on stderr and exit 2: bad input gets one line, no traceback."""
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2)


def console():
    from rich.console import Console

    # Logs and CI are not terminals: give tables room instead of rich's 80-column default.
    return Console(stderr=False, width=None if sys.stdout.isatty() else 160)
