"""``ragsweep serve``: a loaded pipeline behind an HTTP API (typer only at import; ``cli`` registers it)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

import typer

from ragsweep.cli_common import fail as _fail


def serve(
    source: Path = typer.Argument(..., help="an exported folder (ragsweep export) or a run directory"),
    config_id: Optional[str] = typer.Argument(None, help="with a run: the configuration (default: the verdict's pick)"),
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on (0.0.0.0: every interface)"),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="port to listen on (0: a free one, printed)"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="with a run: its cache (default: the one it used)"),
    api_key_env: Optional[str] = typer.Option(
        None,
        "--api-key-env",
        help="the environment variable holding the API key clients must send (Authorization: Bearer KEY; the "
        "openai clients' api_key); required with a --host beyond loopback",
    ),
    max_queue: int = typer.Option(
        64, "--max-queue", min=1, help="questions answered or waiting at once; more get 503 with Retry-After"
    ),
    workers: Optional[int] = typer.Option(
        None,
        "--workers",
        min=1,
        help="questions answered at once, each by its own copy of the pipeline (its own embedding model and "
        "vectors in memory); default: the CPU cores, at most 4: extractive answering is CPU-bound, so more "
        "workers than cores add memory, not speed. With an LLM generator, answering waits on its server: raise it "
        "to the requests the server computes at once. 1: one question at a time",
    ),
    allow_modified: bool = typer.Option(
        False,
        "--allow-modified",
        help="serve an exported folder even where it differs from its SHA256SUMS (a warning names the files)",
    ),
    digest: Optional[str] = typer.Option(
        None, "--digest", help="the folder digest ragsweep export printed (sha256:...); refuse any other folder"
    ),
) -> None:
    """Serve one configuration over HTTP: POST /query (answer and sources with document, offsets, page and
    score), OpenAI-compatible POST /v1/chat/completions and POST /v1/completions (streamed with stream: true);
    GET /health, GET /v1/models."""
    from ragsweep.errors import RagsweepError

    try:
        api_key = _api_key(host, api_key_env)
        sock = _listen(host, port)  # first: a port in use fails at once, before any model loads
    except RagsweepError as exc:
        _fail(exc)
    try:
        from ragsweep.export import load_pipeline

        pipeline = load_pipeline(source, config_id, cache=cache, allow_modified=allow_modified, digest=digest)
    except RagsweepError as exc:
        sock.close()
        _fail(exc)
    import uvicorn

    from ragsweep.serve import make_app

    bound = sock.getsockname()[1]
    try:
        workers = workers or _default_workers()
        try:
            app = make_app(pipeline, api_key=api_key, max_queue=max_queue, workers=workers)  # the twins open here
        except RagsweepError as exc:
            sock.close()
            _fail(exc)
        routes = "POST /query, POST /v1/chat/completions, POST /v1/completions"
        typer.echo(f"serving {pipeline.config_id} at http://{host}:{bound} ({routes}; {workers} workers)")
        with _stopped_cleanly():
            try:
                uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
            finally:
                app.state.pool.close()  # the twins before the pipeline (done already where the server stopped)
    finally:
        pipeline.close()


def _default_workers() -> int:
    """The CPU cores this process may use, at most 4: a worker beyond the cores adds a model, not speed."""
    from ragsweep.embeddings.device import available_cores

    return min(4, available_cores())


@contextlib.contextmanager
def _stopped_cleanly() -> Iterator[None]:
    """uvicorn stops on SIGINT and SIGTERM once the requests in flight are answered, then raises the signal again
    into the handlers it found; these ignore it, so the pipeline closes and the command exits 0."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _api_key(host: str, env: str | None) -> str | None:
    """The key named by ``--api-key-env`` (never printed); a one-line error where it is unset, or where none is
    named and ``host`` is reachable beyond this machine."""
    import ipaddress
    import os

    from ragsweep.errors import RagsweepError

    if env is not None:
        key = os.environ.get(env, "").strip()  # HTTP trims a header's spaces: a key ending in one never matched
        if not key:
            raise RagsweepError(f"--api-key-env {env}: the variable is unset or empty; export {env}=<a secret key>")
        return key
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name
        loopback = False
    if not loopback:
        raise RagsweepError(
            f"--host {host}: serving beyond this machine needs an API key; set one in a variable and pass "
            "--api-key-env NAME (clients send it as Authorization: Bearer KEY), or serve on 127.0.0.1"
        )
    return None


def _listen(host: str, port: int):
    """A socket listening on ``host``:``port`` (0: a free port, printed), or a one-line error saying why not."""
    import socket

    from ragsweep.errors import RagsweepError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        raise RagsweepError(
            f"--port {port}: cannot listen on {host}:{port} ({exc.strerror or exc}); choose another port "
            "(--port 0 takes a free one) or --host"
        ) from None
