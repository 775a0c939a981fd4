"""One writer per run directory and per cache: an advisory lock file naming its holder.

Two ``ragsweep run`` of one spec at once would both answer the same questions, and two runs
writing one embedded Chroma directory can damage it. The lock is ``flock`` on a file inside the
directory: the kernel drops it when its process dies, however it dies, so a lock left by a killed
run is simply taken (its holder line says who left it). The file keeps the holder's pid, host and
start time, which the refused writer's one-line error names.
"""

from __future__ import annotations

import json
import os
import socket
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path

from ragsweep.errors import RagsweepError

LOCK_NAME = "lock"


def _holder(text: str) -> str:
    try:
        info = json.loads(text)
        return f"pid {info['pid']} on {info['host']}, started {info['started']}"
    except (ValueError, KeyError, TypeError):
        return "another process"


class DirLock:
    """An exclusive lock on ``directory`` for this process (a context manager).

    ``what`` names the directory in the error (``run directory``, ``cache``); ``fix`` says what to do.
    ``previous`` is the holder line of a lock found left behind by a process that no longer holds it."""

    def __init__(self, directory: Path, what: str, fix: str) -> None:
        self.path = Path(directory) / LOCK_NAME
        self.what, self.fix = what, fix
        self.previous: str | None = None
        self._fd: int | None = None

    def __enter__(self) -> "DirLock":
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            text = os.pread(fd, 4096, 0).decode("utf-8", "replace")
            os.close(fd)
            raise RagsweepError(
                f"{self.what} {self.path.parent} is being written by another ragsweep run ({_holder(text)}); {self.fix}"
            ) from None
        left = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
        if left:
            self.previous = _holder(left)
        info = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)  # a clean exit leaves no holder line behind
            os.close(self._fd)  # closing drops the flock
            self._fd = None


@contextmanager
def writer_locks(spec, run_dir: Path | None, cache_root: Path, console=None):
    """Hold the run directory, the cache and an embedded Chroma directory of the spec's for this process."""
    dirs = (
        []
        if run_dir is None
        else [(run_dir, "run directory", "wait for it to finish, or give this sweep another name (spec name or --out)")]
    )
    dirs.append((cache_root, "cache", "wait for it to finish, or pass another --cache"))
    if spec.vector_store.path is not None and spec.vector_store.url is None:
        dirs.append((spec.vector_store.path, "vector_store.path", "wait for it to finish, or use another path"))
    with ExitStack() as stack:
        for directory, what, fix in dirs:
            lock = stack.enter_context(DirLock(directory, what, fix))
            if lock.previous and console is not None:
                console.print(
                    f"note: {what} {directory}: took over the lock left by a run that stopped ({lock.previous})",
                    soft_wrap=True,
                )
        yield
