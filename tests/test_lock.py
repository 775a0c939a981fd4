"""One writer per run directory and cache: a second writer stops with one line naming the holder; a lock
left by a killed process is taken over."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import describe

from ragsweep.errors import RagsweepError
from ragsweep.pipelines.lock import DirLock


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    with DirLock(tmp_path, "run directory", "wait for it") as first:
        assert first.previous is None
        with pytest.raises(RagsweepError) as err:
            DirLock(tmp_path, "run directory", "wait for it").__enter__()
        line = str(err.value)
        assert "\n" not in line and f"run directory {tmp_path} is being written by another ragsweep run" in line
        assert f"pid {os.getpid()} on {socket.gethostname()}, started 20" in line and line.endswith("wait for it")
    with DirLock(tmp_path, "run directory", "wait for it") as again:  # released on exit, nothing left behind
        assert again.previous is None


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sys, time
        from ragsweep.pipelines.lock import DirLock
        with DirLock({str(tmp_path)!r}, "cache", "x"):
            print("held", flush=True)
            time.sleep(60)
    """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RagsweepError, match=f"pid {holder.pid} "):
            DirLock(tmp_path, "cache", "x").__enter__()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
    with DirLock(tmp_path, "cache", "x") as lock:
        assert lock.previous is not None and lock.previous.startswith(f"pid {holder.pid} on ")
        assert json.loads((tmp_path / "lock").read_text())["pid"] == os.getpid()


def test_two_runs_of_one_spec_at_once(make_spec, popen_cli, run_cli, tmp_path, seeded_cache):
    """The second ``ragsweep run`` of a spec whose first is running stops at once with one line and
    exit 2, writing nothing; so does one with another run directory but the same cache."""
    spec = make_spec("locked", retrievers=[{"kind": "bm25"}])
    other = make_spec("locked-other", retrievers=[{"kind": "bm25"}])
    cache = seeded_cache
    first = popen_cli("run", spec.path, "--cache", cache, "--limit", 4, log_dir=tmp_path)
    try:
        lock = spec.run_dir / "lock"
        deadline = time.monotonic() + 60
        while not (lock.is_file() and lock.read_text()):
            assert first.poll() is None and time.monotonic() < deadline, "the first run never took its lock"
            time.sleep(0.05)
        second = run_cli("run", spec.path, "--cache", cache, "--limit", 4, timeout=60)
        assert second.returncode == 2, describe(second)
        err = second.stderr.strip()
        assert f"is being written by another ragsweep run (pid {first.pid} on {socket.gethostname()}" in err
        assert len(err.splitlines()) == 1 and "Traceback" not in err
        third = run_cli("run", other.path, "--cache", cache, "--limit", 4, timeout=60)
        assert third.returncode == 2 and f"cache {cache} is being written" in third.stderr, describe(third)
        assert not other.run_dir.exists() or not any(p.name != "lock" for p in other.run_dir.iterdir())
        assert first.wait(300) == 0
    finally:
        if first.poll() is None:
            first.kill()
