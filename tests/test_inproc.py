"""The in-process command runner (``inproc.run``) answers as ``python -m ragsweep.cli`` does and leaves the test
process as it found it."""

from __future__ import annotations

import logging
import os
import sys
import warnings
from pathlib import Path

import inproc
import procwait

ROOT = Path(__file__).resolve().parents[1]


def _both(args: list[str], cwd: Path, env: dict[str, str]):
    here = inproc.run(args, cwd=cwd, env=env)
    there = procwait.run([sys.executable, "-m", "ragsweep.cli", *args], cwd=cwd, env=env, stall=120)
    return here, there


def test_exit_codes_and_output_match_a_subprocess(tmp_path):
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}
    (tmp_path / "bad.yaml").write_text("name: x\nsplitters: 3\n", encoding="utf-8")
    for args in (
        ["validate", "bad.yaml"],
        ["validate", "missing.yaml"],
        ["show", "nowhere"],
        ["run", "--no-such"],
        ["validate", str(ROOT / "specs" / "demo.yaml")],
    ):
        here, there = _both(args, tmp_path, env)
        assert (here.returncode, here.stdout, here.stderr) == (there.returncode, there.stdout, there.stderr), args


def test_environment_directory_logging_and_warnings_are_put_back(tmp_path):
    before_env, before_cwd = dict(os.environ), os.getcwd()
    root = logging.getLogger()
    handlers, level, filters = root.handlers[:], root.level, list(warnings.filters)
    env = {**os.environ, "RAGSWEEP_INPROC_PROBE": "1"}
    env.pop("HOME", None)
    proc = inproc.run(["validate", str(ROOT / "specs" / "demo.yaml")], cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert dict(os.environ) == before_env and os.getcwd() == before_cwd
    assert root.handlers == handlers and root.level == level and list(warnings.filters) == filters


def test_a_crash_prints_its_traceback_and_exits_1(tmp_path, monkeypatch):
    import ragsweep.cli

    def boom(*_a, **_k):
        raise RuntimeError("scripted crash")

    monkeypatch.setattr(ragsweep.cli, "app", boom)
    proc = inproc.run(["validate", "x.yaml"], cwd=tmp_path, env=dict(os.environ))
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "RuntimeError: scripted crash" in proc.stderr
