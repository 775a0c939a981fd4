"""End the ``ragsweep`` command without the C++ teardown where pyarrow can abort a finished process.

pyarrow's thread pools are torn down by C++ static destructors after Python has finalized; now and
then one finds a thread still joinable and the process dies with SIGABRT ("terminate called without
an active exception", apache/arrow#34314) after its work is done and its exit code chosen — seen
once in a CI run, on ``ragsweep report`` of a directory whose records were missing (exit -6 instead
of 2). The command therefore runs Python's exit handlers (Ray, logging, ...) itself, flushes its
output and leaves with ``os._exit`` and its own exit code.
"""

from __future__ import annotations

import atexit
import os
import sys
import traceback
from collections.abc import Callable


def exit_code(command: Callable[[], object]) -> int:
    """Run ``command`` (a Typer app) and return the exit code the interpreter would end with: SystemExit's
    code, a ``sys.exit("message")`` printed and 1, 130 for Ctrl-C, 1 with the traceback for anything else."""
    try:
        command()
    except SystemExit as exc:
        if isinstance(exc.code, int) or exc.code is None:
            return exc.code or 0
        print(exc.code, file=sys.stderr)  # sys.exit("message"): Python prints it and exits 1
        return 1
    except KeyboardInterrupt:
        return 130
    except BaseException:  # noqa: BLE001 - printed as Python would, then the same exit code
        traceback.print_exc()
        return 1
    return 0


def run_then_exit(command: Callable[[], object]) -> None:
    """Run ``command`` (a Typer app), then end the process with its exit code, skipping static destructors."""
    code = exit_code(command)
    atexit._run_exitfuncs()  # what interpreter shutdown would run: Ray's shutdown, logging's flush
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe
            pass
    os._exit(code)
