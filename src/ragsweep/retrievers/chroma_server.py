"""A Chroma server (``chroma run``) over a persist directory, on loopback, for the length of a run.

Embedded Chroma is one process's store: several processes writing the same directory corrupt
it. A Ray sweep on one machine therefore serves the spec's embedded directory through Chroma's
own server for the run, so every worker reads and writes through one process and the
collections stay those a local run builds and reopens.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from ragsweep.errors import RagsweepError


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(url: str) -> bool:
    for path in ("/api/v2/heartbeat", "/api/v1/heartbeat"):
        try:
            with urllib.request.urlopen(url + path, timeout=1) as r:
                if r.status == 200:
                    return True
        except OSError:
            continue
    return False


def _die_with_parent() -> None:
    """Linux: the server gets SIGTERM when the process that started it dies (even by SIGKILL)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class ChromaServer:
    """``with ChromaServer(path) as url:`` runs ``chroma run --path path`` on 127.0.0.1 until the block ends."""

    def __init__(self, path: Path, port: int | None = None, timeout: float = 60.0) -> None:
        self.path, self.port, self.timeout = Path(path), port, timeout
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def __enter__(self) -> str:
        exe = Path(sys.executable).with_name("chroma")
        cli = str(exe) if exe.exists() else shutil.which("chroma")
        if cli is None:
            raise RagsweepError(
                "vector_store: the `chroma` command (chromadb's CLI) is not installed next to this "
                "Python; reinstall chromadb, or set vector_store.url to a running Chroma server"
            )
        self.path.mkdir(parents=True, exist_ok=True)
        self.port = self.port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = open(self.path.parent / f"{self.path.name}.server.log", "wb")  # noqa: SIM115 - closed in __exit__
        self.proc = subprocess.Popen(
            [cli, "run", "--path", str(self.path), "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,
        )
        deadline = time.monotonic() + self.timeout
        while not _answers(self.url):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__(None, None, None)
                raise RagsweepError(
                    f"vector_store.path: could not serve {self.path} with `chroma run` (see "
                    f"{self._log.name}); start a Chroma server yourself and set vector_store.url"
                )
            time.sleep(0.2)
        return self.url

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        self._log.close()
