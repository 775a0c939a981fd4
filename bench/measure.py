"""Whole-process measurements for the benchmarks: wall time and peak resident memory of a process tree."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bench_env(default_backend: bool = True) -> dict:
    """The environment a benchmarked ``ragsweep`` runs in: offline, tokenizers single-threaded, and allowed to
    write bytecode (an installed package has its ``.pyc``; where ``PYTHONDONTWRITEBYTECODE`` is set, as on CI
    machines, the editable ``src`` was compiled again at every start: about 0.5 s of each no-op re-run). With
    ``default_backend`` the backend is the machine's own (``RAGSWEEP_DEFAULT_BACKEND`` dropped)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if default_backend:
        env.pop("RAGSWEEP_DEFAULT_BACKEND", None)
    return env


def _rss(pid: int) -> tuple[int, int]:
    """Resident bytes of the process ``pid`` and of its whole tree (children: ONNX export, Ray)."""
    import psutil

    try:
        root = psutil.Process(pid)
        own = root.memory_info().rss
        children = root.children(recursive=True)
    except psutil.NoSuchProcess:
        return 0, 0
    total = own
    for p in children:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return own, total


def measured(cmd: list[str], env: dict) -> tuple[float, int]:
    """Wall seconds and peak process-tree RSS (bytes) of ``cmd``."""
    wall, tree, _ = measured_peaks(cmd, env)
    return wall, tree


def measured_peaks(cmd: list[str], env: dict) -> tuple[float, int, int]:
    """Wall seconds, peak process-tree RSS and peak RSS of the command's own process (bytes), sampled
    every 0.2 s: the tree peak counts short-lived children (a one-time ONNX export), the own peak not."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = [0, 0]

    def sample() -> None:
        while proc.poll() is None:
            own, tree = _rss(proc.pid)
            peak[0], peak[1] = max(peak[0], tree), max(peak[1], own)
            time.sleep(0.2)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    t.join()
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{err[-3000:]}")
    return wall, peak[0], peak[1]


def demo_llm_spec(name: str, llm: dict) -> dict:
    """A one-configuration sweep whose answers an LLM writes: BM25 top 3 over the demo corpus (``llm``: the spec's
    llm section). JSON is YAML: written as ``.json``, it is a spec file."""
    return {
        "name": name,
        "seed": 0,
        "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
        "splitters": [{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
        "retrievers": [{"kind": "bm25"}],
        "top_k": [3],
        "generator": {"kind": "llm"},
        "llm": llm,
    }
