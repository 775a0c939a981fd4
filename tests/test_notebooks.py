"""The analysis notebooks run against a freshly produced run, so they cannot rot.

Code cells are executed in order in one namespace (no Jupyter kernel needed), with the run
directory passed the way a user would: the ``RAGSWEEP_RUN`` environment variable.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_on_a_fresh_run(path, base_run, monkeypatch):
    monkeypatch.setenv("RAGSWEEP_RUN", str(base_run.run_dir))
    nb = json.loads(path.read_text(encoding="utf-8"))
    ns: dict = {}
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code, f"{path.name} has no code cells"
    for i, cell in enumerate(code):
        exec(compile("".join(cell["source"]), f"{path.name}[cell {i}]", "exec"), ns)  # noqa: S102
    assert len(ns["ranked"]) == len(base_run.summary)
    assert ns["ranked"]["bertscore_f1_rescaled"].is_monotonic_decreasing
    assert ns["ranked"]["overlaps_best"].iloc[0]
