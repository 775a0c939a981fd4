"""The tests' subprocess wait (``procwait.run``): a child is given up on when it stalls, not when it is slow."""

from __future__ import annotations

import subprocess
import sys
import time

import procwait
import pytest


def test_a_child_that_keeps_working_outlives_the_stall_limit():
    """Two seconds of output, a line every 0.25 s, under a 1 s stall limit: it finishes."""
    code = "import time\nfor i in range(8):\n    print(i, flush=True); time.sleep(0.25)\n"
    proc = procwait.run([sys.executable, "-c", code], stall=1.0, poll=0.05)
    assert proc.returncode == 0 and proc.stdout.split() == [str(i) for i in range(8)]


def test_a_child_that_computes_silently_is_not_stalled():
    """No output for 2.5 s, but CPU time grows: a silent computation is progress."""
    code = "import time\nt = time.time()\nwhile time.time() - t < 2.5:\n    pass\nprint('done')\n"
    proc = procwait.run([sys.executable, "-c", code], stall=1.0, poll=0.05)
    assert proc.returncode == 0 and proc.stdout.strip() == "done"


def test_a_stalled_child_is_killed_with_what_it_printed():
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as info:
        procwait.run(
            [sys.executable, "-c", "import time; print('waiting', flush=True); time.sleep(60)"], stall=1.0, poll=0.05
        )
    assert time.monotonic() - start < 30
    assert "waiting" in info.value.output and "no progress for" in info.value.output


@pytest.mark.parametrize("raw", ["abc", "0", "-2", "inf"])
def test_a_bad_timeout_scale_is_one_line(raw):
    with pytest.raises(SystemExit, match=f"RAGSWEEP_TEST_TIMEOUT_SCALE={raw!r} is not a positive number"):
        procwait._scale(raw)
    assert procwait._scale("2.5") == 2.5
