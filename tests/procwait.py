"""Waiting for a subprocess by its progress, not by the clock.

A test that runs ``ragsweep`` in a subprocess must not fail only because the machine is slow or busy (a CI
neighbour, a server on the same cores). ``run`` therefore gives up on a child only when it has *stalled*: no new
output and no CPU time used (by it or its children) for ``stall`` seconds. A child that computes or writes keeps
its deadline moving; one that waits silently on a server needs a ``stall`` longer than the server's replies.
``cap`` bounds the whole wait against a child that spins forever. ``RAGSWEEP_TEST_TIMEOUT_SCALE`` multiplies both
(a very slow machine: 2 or 3).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

import psutil


def _scale(raw: str) -> float:
    """``RAGSWEEP_TEST_TIMEOUT_SCALE``: a positive number, else one line saying so (the suite does not start)."""
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise SystemExit(
            f"error: RAGSWEEP_TEST_TIMEOUT_SCALE={raw!r} is not a positive number; unset it or give "
            "one such as 2 (a slow machine)"
        )
    return value


SCALE = _scale(os.environ.get("RAGSWEEP_TEST_TIMEOUT_SCALE") or "1")
# where each child's command, wall time and exit code are appended (a JSON line each): where the suite's time goes
LOG = os.environ.get("RAGSWEEP_TEST_PROC_LOG")


def scaled(seconds: float) -> float:
    """A fixed wait of a test, scaled for a slow machine."""
    return seconds * SCALE


def _cpu_seconds(pid: int) -> float:
    """CPU time of ``pid`` and of every live descendant (0 once it is gone)."""
    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system + getattr(t, "children_user", 0.0) + getattr(t, "children_system", 0.0)
        except psutil.Error:
            continue
    return total


def run(
    cmd: list[str], *, stall: float = 300, cap: float = 3600, poll: float = 0.2, **popen_kw
) -> subprocess.CompletedProcess:
    """``subprocess.run(cmd, capture_output=True, text=True)`` that raises ``subprocess.TimeoutExpired`` only
    when the child made no progress (output, CPU) for ``stall`` s, or ran past ``cap`` s (both scaled)."""
    stall, cap = scaled(stall), scaled(cap)
    with tempfile.TemporaryDirectory(prefix="rs-proc-") as tmp:
        out_path, err_path = Path(tmp) / "out", Path(tmp) / "err"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, **popen_kw)
            start = last = time.monotonic()
            seen: tuple = ()
            try:
                while proc.poll() is None:
                    time.sleep(poll)
                    now = time.monotonic()
                    mark = (out_path.stat().st_size, err_path.stat().st_size, round(_cpu_seconds(proc.pid), 1))
                    if mark != seen:
                        seen, last = mark, now
                    if now - last > stall or now - start > cap:
                        proc.kill()
                        proc.wait()
                        why = f"no progress for {stall:g} s" if now - last > stall else f"over {cap:g} s"
                        raise subprocess.TimeoutExpired(
                            cmd, now - start, output=_read(out_path) + f"\n[killed: {why}]", stderr=_read(err_path)
                        )
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                if LOG:
                    log_call(cmd[1:], time.monotonic() - start, proc.returncode)
        return subprocess.CompletedProcess(cmd, proc.returncode, _read(out_path), _read(err_path))


def log_call(cmd: list[str], wall: float, code: int | None, mode: str = "subprocess") -> None:
    """Append one command's line to ``RAGSWEEP_TEST_PROC_LOG`` (its first five words after the interpreter)."""
    import json

    line = {
        "cmd": [str(c) for c in cmd[:5]],
        "wall_s": round(wall, 2),
        "exit": code,
        "mode": mode,
        "test": os.environ.get("PYTEST_CURRENT_TEST"),
    }
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")
