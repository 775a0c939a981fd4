"""Shared fixtures for the sweep integration tests (test_sweep.py, test_chroma_server.py).

Everything here is lazy: nothing is imported or computed unless a test asks for a fixture, so the
unit-test files are not slowed down. The expensive part of a sweep is loading the MiniLM model and
computing the first embeddings and BERTScores (~30 s cold); a session-scoped cache directory lets
every integration test after the first reuse them, and ``base_run`` runs the reference sweep once.
"""

from __future__ import annotations

import atexit
import copy
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import inproc
import procwait
import pytest

from ragsweep.metrics.catalogue import names

# An unset backend follows the machine (onnx-int8 without a GPU: ``config.backend_default``). The suite pins the
# default to torch, as on a GPU machine, so that its figures and caches do not depend on the machine it runs on
# (and a fresh cache pays no ONNX export); tests/test_backend_default.py runs the CPU default end to end, and
# ``RAGSWEEP_DEFAULT_BACKEND=onnx-int8 make test`` runs everything on it.
os.environ.setdefault("RAGSWEEP_DEFAULT_BACKEND", "torch")
# what loaded pipelines keep between loads (ONNX exports) stays in the session's temporary files, not ~/.cache
if "RAGSWEEP_USER_CACHE" not in os.environ:
    os.environ["RAGSWEEP_USER_CACHE"] = tempfile.mkdtemp(prefix="ragsweep-user-cache-")
    atexit.register(shutil.rmtree, os.environ["RAGSWEEP_USER_CACHE"], True)

# The reference spec: demo dataset, 2 splitters x {bm25, vector, fusion} x top_k {3, 5} = 12 configurations.
# Scoring is trimmed (fewer baseline pairs and bootstrap resamples) only to keep the tests quick; every
# spec built from it keeps the same seed and scoring block, so the cached BERTScore baseline is shared.
SENTENCE256 = {"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}
PATTERN = {"kind": "pattern", "pattern": "\n(?=§)", "max_chunk_chars": 1500}
MINILM = {"kind": "sentence_transformers", "model": "minilm"}
BASE_SPEC: dict = {
    "name": "itest",
    "seed": 7,
    "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
    "splitters": [SENTENCE256, PATTERN],
    "embeddings": [MINILM],
    "retrievers": [{"kind": "bm25"}, {"kind": "vector"}, {"kind": "fusion"}],
    "top_k": [3, 5],
    "scoring": {"bootstrap_samples": 200, "bertscore": {"baseline_pairs": 50}},
}
BASE_LIMIT = 12

RETRIEVAL_METRICS = names("retrieval")
BERTSCORE_RAW = ["bertscore_p", "bertscore_r", "bertscore_f1"]
BERTSCORE_RESCALED = ["bertscore_p_rescaled", "bertscore_r_rescaled", "bertscore_f1_rescaled"]


@dataclass
class SpecFile:
    """A spec written to its own directory; its run directory is ``<dir>/runs/<name>``."""

    path: Path
    data: dict
    dir: Path

    @property
    def name(self) -> str:
        return self.data["name"]

    @property
    def run_dir(self) -> Path:
        return Path(self.data["output_dir"]) / self.data["name"]


@dataclass
class Run:
    """What a finished ``ragsweep run`` left behind, loaded once (the directory may change later)."""

    run_dir: Path
    manifest: dict
    records: object  # pandas.DataFrame
    summary: object  # pandas.DataFrame
    stdout: str = ""
    stderr: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def invocation(self) -> dict:
        return self.manifest["invocations"][-1]


@pytest.fixture(scope="session")
def make_spec(tmp_path_factory):
    """``make_spec(name, **overrides)`` writes a YAML spec (BASE_SPEC updated by ``overrides``) in a new tmp dir."""
    import yaml

    def _make(name: str, **overrides) -> SpecFile:
        d = tmp_path_factory.mktemp(f"spec-{name}")
        data = copy.deepcopy(BASE_SPEC)
        data.update(copy.deepcopy(overrides))
        data["name"] = name
        data["output_dir"] = str(d / "runs")
        path = d / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
        return SpecFile(path, data, d)

    return _make


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory) -> Path:
    """One cache directory (embeddings, BERTScore pairs, chunks, Chroma) shared by the integration tests."""
    return tmp_path_factory.mktemp("ragsweep-cache")


@pytest.fixture(scope="session")
def onnx_exports(tmp_path_factory) -> Path:
    """A cache root holding MiniLM's ONNX exports (fp32, and int8 written from the weights; BERTScore uses the same
    model), made once: an export takes 5-11 s, and the tests that check exporting itself make their own."""
    from ragsweep.config import HFEmbeddingSpec
    from ragsweep.embeddings.factory import load_model

    root = tmp_path_factory.mktemp("onnx-exports")
    for backend in ("onnx", "onnx-int8"):
        load_model(HFEmbeddingSpec(backend=backend), root)
    return root


@pytest.fixture(scope="session")
def cli_workdir(tmp_path_factory) -> Path:
    """Working directory of CLI subprocesses, so nothing (e.g. a default .ragsweep/cache) lands in the repo."""
    return tmp_path_factory.mktemp("cli-cwd")


def _cli_env(extra: dict | None = None, unset: tuple[str, ...] = ()) -> dict:
    env = dict(os.environ)
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "ANONYMIZED_TELEMETRY": "False",
            # Rich sizes tables to COLUMNS when stdout is not a terminal (default 80).
            "COLUMNS": "250",
            "PYTHONUNBUFFERED": "1",
        }
    )
    for k in unset:
        env.pop(k, None)
    if extra:
        env.update(extra)
    return env


@pytest.fixture(scope="session")
def run_cli(cli_workdir):
    """``run_cli(*args, env=None, unset=(), timeout=300, own_process=False)`` runs ``ragsweep ARGS`` as
    ``python -m ragsweep.cli`` would and returns its CompletedProcess: in this process (``inproc.run``: the
    same environment, directory, output and exit code, without a fresh process's start-up) unless
    ``own_process`` or ``--verbose`` asks for a subprocess, whose ``timeout`` is how long it may go without
    progress (``procwait.run``)."""

    def _run(
        *args,
        env: dict | None = None,
        unset: tuple[str, ...] = (),
        timeout: float = 300,
        cwd: Path | None = None,
        own_process: bool = False,
    ) -> subprocess.CompletedProcess:
        args = tuple(str(a) for a in args)
        if not own_process and "--verbose" not in args:
            return inproc.run(list(args), cwd=cwd or cli_workdir, env=_cli_env(env, unset))
        cmd = [sys.executable, "-m", "ragsweep.cli", *args]
        return procwait.run(cmd, cwd=cwd or cli_workdir, env=_cli_env(env, unset), stall=timeout)

    return _run


@pytest.fixture(scope="session")
def popen_cli(cli_workdir):
    """``popen_cli(*args, log_dir=...)`` starts ``python -m ragsweep.cli ARGS`` in the background (output to files)."""

    def _start(*args, log_dir: Path, env: dict | None = None) -> subprocess.Popen:
        cmd = [sys.executable, "-m", "ragsweep.cli", *[str(a) for a in args]]
        out = open(log_dir / "stdout.txt", "w", encoding="utf-8")  # noqa: SIM115 - closed by the caller's wait
        err = open(log_dir / "stderr.txt", "w", encoding="utf-8")  # noqa: SIM115
        try:
            return subprocess.Popen(cmd, cwd=cli_workdir, env=_cli_env(env), stdout=out, stderr=err)
        finally:
            out.close()
            err.close()

    return _start


def describe(proc: subprocess.CompletedProcess) -> str:
    """Exit status and output tails of a CLI call, for assertion messages."""
    return (
        f"exit {proc.returncode}\n--- stdout (tail) ---\n{proc.stdout[-3000:]}\n"
        f"--- stderr (tail) ---\n{proc.stderr[-3000:]}"
    )


@pytest.fixture(scope="session")
def describe_proc():
    return describe


def load_run(run_dir: Path, proc: subprocess.CompletedProcess | None = None) -> Run:
    import pandas as pd

    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    records = pd.read_parquet(run_dir / "records.parquet")
    full = pd.read_csv(run_dir / "summary.csv")
    # summary.csv has one row per (configuration, split); most tests look at all questions
    summary = full[full["split"] == "all"].reset_index(drop=True) if "split" in full.columns else full
    return Run(
        run_dir,
        manifest,
        records,
        summary,
        proc.stdout if proc else "",
        proc.stderr if proc else "",
        extra={"summary_by_split": full},
    )


@pytest.fixture(scope="session")
def read_run():
    """``read_run(run_dir, proc=None)`` loads manifest.json, records.parquet and summary.csv into a ``Run``."""
    return load_run


@pytest.fixture(scope="session")
def base_run(make_spec, shared_cache, run_cli) -> Run:
    """The reference sweep (BASE_SPEC, ``--limit 12``) on the shared cache, run once per session."""
    spec = make_spec("itest")
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", BASE_LIMIT)
    assert proc.returncode == 0, describe(proc)
    run = load_run(spec.run_dir, proc)
    run.extra["spec"] = spec
    return run


def seed_cache(dest: Path, source: Path, *, chunks: bool = True, keep_chunks_of=None) -> Path:
    """Fill the new cache ``dest`` with the vectors and BERTScores of the cache ``source`` (SQLite's backup: a
    consistent copy) and, with ``chunks``, its splitters' chunks. A vector is a function of its text, a BERTScore
    of its pair and chunks of the corpus and the splitter's settings, so a run on the copy gives what it would on
    an empty cache, without computing them again; it still indexes and answers.
    ``keep_chunks_of(chunk_id)``: the chunks whose vectors are left out (to be embedded by the run)."""
    import shutil
    import sqlite3

    from ragsweep.embeddings.cache import text_key

    dest.mkdir(parents=True, exist_ok=True)
    if chunks and (source / "chunks").is_dir():
        shutil.copytree(source / "chunks", dest / "chunks")
    for name in ("embeddings.sqlite", "bertscore.sqlite"):
        if not (source / name).is_file():
            continue
        with sqlite3.connect(source / name) as src, sqlite3.connect(dest / name) as dst:
            src.backup(dst)
        src.close()
        dst.close()
    if keep_chunks_of is not None:
        texts = {
            c[4]
            for f in (source / "chunks").glob("*.json")
            for c in json.loads(f.read_text(encoding="utf-8"))
            if keep_chunks_of(c[0])
        }
        with sqlite3.connect(dest / "embeddings.sqlite") as db:
            db.executemany("DELETE FROM embedding WHERE key = ?", [(text_key(t, "text"),) for t in texts])
            assert db.total_changes == len(texts) > 0, "the vectors to leave out are not the chunks' texts"
        db.close()
    return dest


@pytest.fixture
def seeded_cache(base_run, shared_cache, tmp_path) -> Path:
    """A cache of the test's own holding the reference sweep's vectors and BERTScores (``seed_cache``)."""
    return seed_cache(tmp_path / "seeded-cache", shared_cache)


# The run the report, plot and notebook tests look at: every demo question (all seven question types),
# every retriever kind (BM25, vector, fusion, knowledge graph, hybrid_kg), answers by an LLM and stage-2
# judges (correctness, faithfulness, relevancy) from the scripted OpenAI-compatible server. It has its own
# cache directory (seeded with the reference sweep's vectors and BERTScores): it embeds all 107 questions, which
# would change what other tests find in the shared cache.
REPORT_SPLITTER = SENTENCE256  # the reference sweep's (its vectors are in the seeded cache); top_k 4, not its ids
REPORT_RETRIEVERS = [
    {"kind": "bm25"},
    {"kind": "vector"},
    {"kind": "fusion"},
    {"kind": "knowledge_graph"},
    {"kind": "hybrid_kg"},
]
REPORT_KEY = "sk-report-SECRET-5f2a9c0e"


@pytest.fixture(scope="session")
def report_run(make_spec, run_cli, tmp_path_factory, base_run, shared_cache) -> Run:
    """A finished stage-2 run over all 107 demo questions (5 configurations; the server is stopped afterwards)."""
    from fake_openai import FakeOpenAI

    fake = FakeOpenAI(api_key=REPORT_KEY).start()
    try:
        spec = make_spec(
            "report",
            splitters=[REPORT_SPLITTER],
            retrievers=REPORT_RETRIEVERS,
            top_k=[4],
            generator={"kind": "llm"},
            llm={"model": "report-model", "base_url": fake.base_url, "api_key_env": "REPORT_KEY", "concurrency": 8},
            prices={"report-model": {"input": 1.0, "output": 2.0}},
            stage2={"top_n": 2, "max_configs": 3},
        )
        cache = seed_cache(tmp_path_factory.mktemp("report-cache"), shared_cache)
        proc = run_cli("run", spec.path, "--cache", cache, env={"REPORT_KEY": REPORT_KEY}, timeout=400)
        assert proc.returncode == 0, describe(proc)
    finally:
        fake.stop()
    run = load_run(spec.run_dir, proc)
    run.extra["spec"] = spec
    return run


def sigkill_when(
    proc: subprocess.Popen, progress, target: int, *, timeout: float, what: str, stderr_path: Path, poll: float = 0.02
) -> float:
    """Poll ``progress()`` until it reaches ``target``, then ``kill -9`` the process and reap it.

    Fails the test if the process exits first or the target is not reached in ``timeout`` seconds.
    Returns the wall-clock time of the kill.
    """
    import signal
    import time

    try:
        deadline = time.monotonic() + procwait.scaled(timeout)
        seen = progress()
        while seen < target:
            if proc.poll() is not None:
                pytest.fail(
                    f"the run exited (code {proc.returncode}) with {seen} {what}, before it could be "
                    f"killed. stderr: {stderr_path.read_text()[-2000:]}"
                )
            if time.monotonic() > deadline:
                pytest.fail(f"only {seen} {what} within {procwait.scaled(timeout):g} s (wanted {target})")
            time.sleep(poll)
            seen = progress()
        t_kill = time.time()
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, f"the run finished before it was killed ({what}: {seen})"
    return t_kill


@pytest.fixture(scope="session")
def kill_midway():
    """``kill_midway(proc, progress, target, timeout=, what=, stderr_path=)``: see ``sigkill_when``."""
    return sigkill_when


def free_port() -> int:
    """A loopback TCP port that nothing listens on (bound and released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def get_free_port():
    return free_port


def unavailable(require_var: str, what: str, reason: str, start: str) -> NoReturn:
    """A service a test needs is missing: an error when ``require_var`` is 1 (``.ci/run`` sets it), else a skip."""
    if os.environ.get(require_var) == "1":
        pytest.fail(f"{require_var}=1 but {what}: {reason}")
    pytest.skip(f"{what} ({reason}); {start}")


@pytest.fixture(scope="session")
def neo4j_server():
    """The Neo4j server of ``scripts/neo4j.sh`` (``.ci/run`` starts it): a Neo4jSpec whose credential
    variables are set. Skipped when no server answers, unless RAGSWEEP_REQUIRE_NEO4J=1 (``.ci/run``)."""
    from ragsweep.config import Neo4jSpec
    from ragsweep.errors import RagsweepError
    from ragsweep.graphs.neo4j_store import preflight

    os.environ.setdefault("NEO4J_USER", "neo4j")
    os.environ.setdefault("NEO4J_PASSWORD", "ragsweep-test")
    spec = Neo4jSpec(url=os.environ.get("NEO4J_URL", "bolt://127.0.0.1:7687"), timeout=10)
    try:
        preflight(spec)
    except RagsweepError as exc:
        unavailable("RAGSWEEP_REQUIRE_NEO4J", "no Neo4j server", str(exc), "start one with scripts/neo4j.sh start")
    return spec


@dataclass
class LLMServer:
    """The real llama.cpp server of ``scripts/llm-server.sh``: where it answers, the model alias, its n_ctx."""

    base_url: str
    model: str
    n_ctx: int
    log: Path | None

    def llm(self, **overrides) -> dict:
        """An ``llm:`` spec section for it (no key, its context window)."""
        return {
            "model": self.model,
            "base_url": self.base_url,
            "api_key_env": None,
            "context_window": self.n_ctx,
            **overrides,
        }

    def generations(self) -> int:
        """Generations the server has computed since it started (llama.cpp prints its timings once per
        generation; abandoned requests included)."""
        if self.log is None or not self.log.is_file():
            return -1
        import re

        return len(
            re.findall(r"llama_perf_context_print: +total time", self.log.read_text(encoding="utf-8", errors="replace"))
        )


def _real_server(prefix: str, default_url: str, default_model: str, log_name: str, how: str) -> LLMServer:
    """One server of ``scripts/llm-server.sh``, from what its ``env`` command exports under ``prefix``."""
    import urllib.request

    base = os.environ.get(f"{prefix}_BASE_URL", default_url)
    try:
        urllib.request.urlopen(base + "/models", timeout=10).read()
    except OSError as exc:
        unavailable("RAGSWEEP_REQUIRE_LLM_SERVER", f"no LLM server answers at {base}", str(exc), how)
    log = os.environ.get(f"{prefix}_SERVER_LOG")
    default_log = Path(__file__).resolve().parent.parent / ".llm-server" / "logs" / log_name
    return LLMServer(
        base,
        os.environ.get(f"{prefix}_MODEL", default_model),
        int(os.environ.get(f"{prefix}_N_CTX", "2048")),
        Path(log) if log else (default_log if default_log.is_file() else None),
    )


@pytest.fixture(scope="session")
def llm_server() -> LLMServer:
    """The llama.cpp server of ``scripts/llm-server.sh`` serving SmolLM2-135M-Instruct (``.ci/run`` starts it;
    ``eval "$(scripts/llm-server.sh env)"`` points here). Skipped when none answers, unless
    RAGSWEEP_REQUIRE_LLM_SERVER=1 (``.ci/run``)."""
    return _real_server(
        "RAGSWEEP_LLM", "http://127.0.0.1:8089/v1", "smollm2-135m-instruct", "server.log", "scripts/llm-server.sh start"
    )


@pytest.fixture(scope="session")
def gemma_server() -> LLMServer:
    """The second server of ``scripts/llm-server.sh``: Gemma 3 270M, a base model (``LLM_SERVER_MODEL=gemma3``)."""
    return _real_server(
        "RAGSWEEP_GEMMA",
        "http://127.0.0.1:8090/v1",
        "gemma-3-270m",
        "gemma3.log",
        "LLM_SERVER_MODEL=gemma3 scripts/llm-server.sh start",
    )


@pytest.fixture(scope="session")
def phoenix_url() -> str:
    """The Phoenix server of ``scripts/phoenix-server.sh`` (``eval "$(scripts/phoenix-server.sh env)"`` points here).
    Skipped when none answers, unless RAGSWEEP_REQUIRE_PHOENIX=1 (``.ci/run``)."""
    import httpx

    url = os.environ.get("RAGSWEEP_PHOENIX_URL", "http://127.0.0.1:6006")
    try:
        httpx.get(url + "/healthz", timeout=10).raise_for_status()
    except httpx.HTTPError as exc:
        unavailable(
            "RAGSWEEP_REQUIRE_PHOENIX",
            f"no Phoenix server answers at {url}",
            str(exc),
            "scripts/phoenix-server.sh start",
        )
    return url
