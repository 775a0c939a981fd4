"""Running a ``ragsweep`` command inside the test process, as its subprocess would run it, minus the start-up.

A ``ragsweep run`` subprocess spends most of a small test sweep importing PyTorch and sentence-transformers
(5-7 s here) and loading MiniLM; in the test process those are paid once per session. ``run`` gives the command
what a fresh process would have -- the environment and working directory asked for, stdout and stderr of its
own (not terminals), Python's default warning filters (pytest's own would swallow warnings), exit codes as
``python -m ragsweep.cli`` returns them (``process_exit.exit_code``) -- and puts the test process's back
afterwards, logging's root handlers and level included. What stays is what a process keeps on purpose: loaded
models and imported modules.

Tests whose point is the process itself keep a subprocess: kill and resume, locks, Ray, ``--verbose`` (library
loggers' levels), start-up import weight, output written below Python (C libraries writing to fd 2).
"""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import time
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import procwait

PROG = "python -m ragsweep.cli"  # the program name click prints in usage lines, as the subprocess shows it
_DEFAULT_FILTERS = list(warnings.filters)  # the interpreter's, read when conftest imports this, before any test


class _Pipe(io.StringIO):
    """A captured stream that says what a pipe says: UTF-8, not a terminal."""

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:  # a pipe has one; callers that need it (faulthandler) fall back on this error
        raise io.UnsupportedOperation("fileno")


def _invoke(args: list[str]) -> int:
    from ragsweep.cli import app
    from ragsweep.process_exit import exit_code

    return exit_code(lambda: app(args=args, prog_name=PROG))


def _fresh_process_caches() -> None:
    """Forget what a new process would not know: the LLM servers probed by URL (a test's port may be reused)."""
    probe = getattr(sys.modules.get("ragsweep.llm.server_info"), "probe", None)
    if probe is not None:
        probe.cache_clear()


def run(args: list[str], *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """``ragsweep ARGS`` in this process with exactly ``env`` as its environment and ``cwd`` as its directory;
    returns what ``subprocess.run(..., capture_output=True, text=True)`` would."""
    args = [str(a) for a in args]
    out, err = _Pipe(), _Pipe()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    start = time.monotonic()
    code: int | None = None
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        _fresh_process_caches()
        with warnings.catch_warnings(), redirect_stdout(out), redirect_stderr(err):
            warnings.filters[:] = _DEFAULT_FILTERS
            code = _invoke(args)
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        if procwait.LOG:
            procwait.log_call(["ragsweep", *args], time.monotonic() - start, code, mode="in-process")
    return subprocess.CompletedProcess([PROG, *args], code, out.getvalue(), err.getvalue())
