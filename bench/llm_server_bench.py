"""Benchmark: ragsweep against a real LLM server that computes one request at a time.

The server is scripts/llm-server.sh's: llama.cpp's server through llama-cpp-python, serving SmolLM2-135M-Instruct
(Q4_1, from PyPI) on loopback with n_ctx 2048. The model is far too small to answer or judge well: these figures
are about serving (queues, waits, repeated work), and the judge table says what this model's judges are worth,
whatever that is. Measured:

1. the server alone: generation tokens/s and prompt tokens/s (llama.cpp's own timing lines), over direct requests;
2. a 5-configuration LLM spec cut from specs/demo-llm.yaml (sentence chunks; bm25, vector, fusion, fusion with two
   LLM query rewrites, fusion reranked by the LLM; LLM answers; stage 2: three judges on the configuration stage 1
   selects), each time from an empty LLM cache, with
   - ``concurrency: 1``;
   - ``concurrency: 8, timeout: 60`` adaptive (the default since the capacity work);
   - ``concurrency: 8, timeout: 60, adaptive_concurrency: false`` (what ragsweep did before), stopped after
     ``--fixed-cap`` seconds if it has not finished;
   wall time, calls per minute, calls ragsweep made against generations the server computed (its log holds one
   timing block per generation, abandoned requests included), timeouts and waits;
3. the judge meta-evaluation on the demo's labelled set (``ragsweep judges evaluate demo``): this model's
   faithfulness and correctness judges beside QuIP and cosine.

Usage: scripts/llm-server.sh start && eval "$(scripts/llm-server.sh env)"
       .venv/bin/python bench/llm_server_bench.py [--limit 12] [--max-tokens 256] [--timeout 60] [--fixed-cap 900]
                                                  [--skip speed,sweeps,fixed,judges] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "ragsweep.cli"]


def server() -> dict:
    base = os.environ.get("RAGSWEEP_LLM_BASE_URL", "http://127.0.0.1:8089/v1")
    log = Path(os.environ.get("RAGSWEEP_LLM_SERVER_LOG", ROOT / ".llm-server" / "logs" / "server.log"))
    try:
        urllib.request.urlopen(base + "/models", timeout=10).read()
    except OSError as exc:
        raise SystemExit(
            f'no LLM server at {base} ({exc}): scripts/llm-server.sh start; eval "$(scripts/llm-server.sh env)"'
        )
    return {
        "base_url": base,
        "model": os.environ.get("RAGSWEEP_LLM_MODEL", "smollm2-135m-instruct"),
        "n_ctx": int(os.environ.get("RAGSWEEP_LLM_N_CTX", "2048")),
        "log": log,
    }


def generations(log: Path) -> int:
    """llama.cpp prints one timing block per generation (abandoned requests included)."""
    return len(re.findall(r"llama_perf_context_print: +total time", log.read_text(encoding="utf-8", errors="replace")))


def server_speed(srv: dict, probes: int) -> dict:
    """Tokens/s of the server on direct requests of different sizes (llama.cpp's timing lines)."""
    start = len(srv["log"].read_text(encoding="utf-8", errors="replace"))
    for i in range(probes):
        body = {
            "model": srv["model"],
            "max_tokens": 128,
            "temperature": 0,
            "seed": 0,
            "messages": [
                {
                    "role": "user",
                    "content": f"Request {i}. " + "Summarise the duties of a landlord under a lease. " * (1 + 8 * i),
                }
            ],
        }
        req = urllib.request.Request(
            srv["base_url"] + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(req, timeout=300).read()
    text = srv["log"].read_text(encoding="utf-8", errors="replace")[start:]
    gen = [float(x) for x in re.findall(r"eval time =.*?runs.*?([\d.]+) tokens per second", text)]
    prompt = [
        float(x) for x in re.findall(r"prompt eval time =.*?tokens.*?([\d.]+) tokens per second", text) if x != "inf"
    ]
    return {
        "generation_tokens_per_s": statistics.median(gen) if gen else None,
        "prompt_tokens_per_s": statistics.median(prompt) if prompt else None,
        "requests": probes,
    }


def five_config_spec(srv: dict, name: str, out: Path, **llm) -> Path:
    spec = {
        "name": name,
        "seed": 0,
        "output_dir": str(out),
        "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
        "splitters": [{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
        "embeddings": [{"kind": "sentence_transformers", "model": "minilm"}],
        "retrievers": [
            {"kind": "bm25"},
            {"kind": "vector"},
            {"kind": "fusion", "mode": "reciprocal_rerank"},
            {"kind": "fusion", "mode": "reciprocal_rerank", "num_queries": 3, "name": "fusion_q3"},
        ],
        "rerankers": [{"kind": "none"}, {"kind": "llm", "candidates": 6, "apply_to": ["fusion"]}],
        "top_k": [3],
        "generator": {"kind": "llm", "response_mode": "compact"},
        "llm": {
            "model": srv["model"],
            "base_url": srv["base_url"],
            "api_key_env": None,
            "temperature": 0,
            "context_window": srv["n_ctx"],
            **llm,
        },
        "prices": {srv["model"]: {"input": 0.0, "output": 0.0}},
        "split": {"validation_fraction": 0.5, "stratify": True},
        "stage2": {"judges": ["correctness", "faithfulness", "relevancy"], "top_n": 1},
        "scoring": {"bootstrap_samples": 500},
    }
    path = out / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return path


def cache_calls(cache: Path) -> int:
    db = cache / "llm_calls.sqlite"
    if not db.is_file():
        return 0
    con = sqlite3.connect(str(db))
    try:
        return con.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    finally:
        con.close()


def sweep(srv: dict, work: Path, name: str, limit: int, cap: float | None, **llm) -> dict:
    """One run of the 5-configuration spec from an empty LLM cache (a fresh cache directory)."""
    out = work / name
    out.mkdir(parents=True, exist_ok=True)
    spec = five_config_spec(srv, name, out, **llm)
    cache = out / "cache"
    before = generations(srv["log"])
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            [*CLI, "run", str(spec), "--cache", str(cache), "--limit", str(limit)],
            capture_output=True,
            text=True,
            timeout=cap,
            env={**os.environ, "COLUMNS": "200"},
        )
        finished, rc, stdout = True, proc.returncode, proc.stdout
    except subprocess.TimeoutExpired as exc:
        finished, rc, stdout = False, None, exc.stdout or ""
        if isinstance(stdout, bytes):
            stdout = stdout.decode("utf-8", "replace")
    wall = time.perf_counter() - t0
    time.sleep(2)  # the server may still be computing what a stopped run abandoned
    row = {
        "name": name,
        "settings": llm,
        "finished": finished,
        "exit_code": rc,
        "wall_s": round(wall, 1),
        "server_generations": generations(srv["log"]) - before,
    }
    manifest = out / name / "manifest.json"
    if finished and manifest.is_file():
        inv = json.loads(manifest.read_text())["invocations"][-1]
        (endpoint,) = inv["llm_endpoints"]
        row.update(
            calls=inv["llm_calls_made"],
            timeouts=endpoint["timeouts"],
            retries=inv["llm_retries"],
            capacity=endpoint.get("capacity"),
            stage_s={
                k: v
                for k, v in inv["timings_s"].items()
                if k in ("answering", "query_rewrites", "generation", "stage2", "total")
            },
            failed=inv["failed"],
            judgements_failed=inv.get("judgements_failed"),
        )
    else:
        row.update(calls=cache_calls(cache), timeouts=None)
    row["calls_per_min"] = round(60 * row["calls"] / wall, 1) if wall else None
    row["extra_generations_pct"] = (
        round(100 * (row["server_generations"] - row["calls"]) / row["calls"], 1) if row["calls"] else None
    )
    lines = [ln for ln in stdout.splitlines() if ln.startswith("LLM http")]
    row["endpoint_line"] = lines[-1] if lines else None
    print(json.dumps({k: v for k, v in row.items() if k != "capacity"}), flush=True)
    return row


def judge_table(srv: dict, work: Path) -> dict:
    """``ragsweep judges evaluate demo`` with this model's LLM judges beside QuIP and cosine."""
    spec = five_config_spec(srv, "judges", work, max_tokens=64)  # a judge's verdict is short
    out = work / "judges.json"
    proc = subprocess.run(
        [
            *CLI,
            "judges",
            "evaluate",
            "demo",
            "--spec",
            str(spec),
            "--detectors",
            "quip,cosine,llm_faithfulness,llm_correctness",
            "--cache",
            str(work / "judge-cache"),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    print(proc.stdout[-6000:], flush=True)
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
    return {
        "exit_code": proc.returncode,
        "table": proc.stdout,
        "rows": json.loads(out.read_text()) if out.is_file() else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=12, help="demo questions per run (5 configurations each)")
    ap.add_argument("--fixed-cap", type=float, default=900, help="seconds before the fixed-concurrency run is stopped")
    ap.add_argument("--max-tokens", type=int, default=256, help="llm.max_tokens (specs/demo-llm.yaml: 256)")
    ap.add_argument("--timeout", type=float, default=60, help="llm.timeout, seconds")
    ap.add_argument("--probes", type=int, default=4, help="direct requests for the server's tokens/s")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: speed, sweeps, fixed, judges")
    ap.add_argument("--work", type=Path, default=None, help="work directory (default: a temporary one)")
    ap.add_argument("--json", type=Path, default=None, help="write every figure here")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    srv = server()
    work = args.work or Path(tempfile.mkdtemp(prefix="llm-server-bench-"))
    out: dict = {"server": {k: str(v) for k, v in srv.items()}, "limit": args.limit}
    if "speed" not in skip:
        out["speed"] = server_speed(srv, args.probes)
        print(json.dumps(out["speed"]), flush=True)
    if "sweeps" not in skip:
        llm = {"max_tokens": args.max_tokens, "timeout": args.timeout}
        runs = [
            sweep(srv, work, "c1", args.limit, None, concurrency=1, **llm),
            sweep(srv, work, "c8-adaptive", args.limit, None, concurrency=8, **llm),
        ]
        if "fixed" not in skip:
            runs.append(
                sweep(
                    srv, work, "c8-fixed", args.limit, args.fixed_cap, concurrency=8, adaptive_concurrency=False, **llm
                )
            )
        out["sweeps"] = runs
        base, adaptive = runs[0], runs[1]
        out["adaptive_over_c1_wall"] = round(adaptive["wall_s"] / base["wall_s"], 3)
        print(
            f"adaptive concurrency 8 / concurrency 1 wall time: {out['adaptive_over_c1_wall']}; extra "
            f"generations: {adaptive['extra_generations_pct']} %",
            flush=True,
        )
    if "judges" not in skip:
        out["judges"] = judge_table(srv, work)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
