"""Reading a run's ``manifest.json``: the current format, or a one-line error saying what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

from ragsweep.errors import RagsweepError
from ragsweep.run_dir import RunDir
from ragsweep.run_records import FORMAT_VERSION, Manifest


def read_manifest(run_dir: Path) -> Manifest:
    """``manifest.json`` of a run directory in the current format, or a one-line error."""
    if not run_dir.exists():
        raise RagsweepError(
            f"{run_dir}: no such run directory (a run is written to OUTPUT_DIR/NAME by `ragsweep run SPEC`)"
        )
    if not run_dir.is_dir():
        raise RagsweepError(f"{run_dir}: not a directory; give the run directory (e.g. runs/demo), not a file in it")
    mpath = RunDir(run_dir).manifest
    if not mpath.is_file():
        if RunDir(run_dir).journal.is_file():
            raise RagsweepError(
                f"{run_dir}: has a journal but no manifest.json (a sweep killed before it wrote one, "
                "or an older ragsweep); run `ragsweep run SPEC` again to write it (finished work "
                "is reused)"
            )
        raise RagsweepError(
            f"{run_dir}: not a ragsweep run directory (no manifest.json); run `ragsweep run SPEC` to make one"
        )
    try:
        meta = json.loads(mpath.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise RagsweepError(f"{mpath}: not valid JSON; run `ragsweep run SPEC` again to rewrite it") from None
    version = meta.get("format_version") if isinstance(meta, dict) else None
    if not isinstance(version, int):
        raise RagsweepError(f"{mpath}: no format_version; not a ragsweep manifest")
    if version < FORMAT_VERSION:
        raise RagsweepError(
            f"{run_dir}: written by an older ragsweep (run format {version}, this version reads "
            f"{FORMAT_VERSION}); run `ragsweep run SPEC` with this version to rewrite it from its "
            "journal (finished work is reused, nothing is recomputed)"
        )
    if version > FORMAT_VERSION:
        raise RagsweepError(
            f"{run_dir}: written by a newer ragsweep (run format {version}, this version reads "
            f"{FORMAT_VERSION}); upgrade ragsweep to read it"
        )
    return cast(Manifest, meta)
