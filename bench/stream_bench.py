"""Benchmark: how soon a served LLM answer's first words arrive, streamed, against the whole answer.

Sweeps one configuration whose answers an LLM writes (BM25 top 3 over the demo corpus, ``generator: llm``) against
an OpenAI-compatible server (default: scripts/llm-server.sh's llama.cpp server), exports it, serves it in this
process, and asks ``--questions`` questions never asked before (a suffix) twice each: streamed with the ``openai``
client (time to the first piece of text, time to the end, pieces) and whole (time to the reply). The second asking
of each question is answered from the LLM call cache, so each question is generated once: streamed for half the
questions, whole for the other half, alternately. Prints medians per mode.

Usage: python bench/stream_bench.py [--base-url http://127.0.0.1:8089/v1] [--model smollm2-135m-instruct]
                                    [--max-tokens 96] [--context-window 2048] [--questions 8]
                                    [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import bench_env, demo_llm_spec

QUESTIONS = [
    "Who may terminate the lease early?",
    "What must a processor do after a data breach?",
    "How long is the warranty on repaired goods?",
    "When is a deposit returned to the tenant?",
    "Who pays the costs of arbitration?",
    "Which court hears disputes under the agreement?",
    "What notice must the employer give before dismissal?",
    "May personal data be sent abroad?",
]


def _cli(*args: object) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ragsweep.cli", *map(str, args)], env=bench_env(), capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"ragsweep {args[0]} failed: {done.stderr.strip()[-500:]}")


def _exported(work: Path, base_url: str, model: str, max_tokens: int, context_window: int) -> Path:
    llm = {
        "model": model,
        "base_url": base_url,
        "api_key_env": None,
        "max_tokens": max_tokens,
        "timeout": 300,
        "context_window": context_window,
    }
    spec = demo_llm_spec("stream-bench", llm)
    path = work / "stream-bench.json"  # JSON is YAML
    path.write_text(json.dumps(spec))
    _cli("run", path, "--no-progress", "--limit", 1, "--out", work / "run", "--cache", work / "cache")
    _cli("export", work / "run", "--out", work / "chosen")
    return work / "chosen"


def _streamed(client, model: str, question: str) -> dict:
    t0, first, pieces = time.perf_counter(), None, 0
    for chunk in client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": question}], stream=True
    ):
        if chunk.choices and chunk.choices[0].delta.content:
            pieces += 1
            first = first if first is not None else time.perf_counter() - t0
    return {"first_s": first, "total_s": time.perf_counter() - t0, "pieces": pieces}


def _whole(client, model: str, question: str) -> dict:
    t0 = time.perf_counter()
    client.chat.completions.create(model=model, messages=[{"role": "user", "content": question}])
    total = time.perf_counter() - t0
    return {"first_s": total, "total_s": total, "pieces": 1}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base-url", default="http://127.0.0.1:8089/v1")
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--context-window", type=int, default=2048, help="the server's (scripts/llm-server.sh: 2048)")
    ap.add_argument("--questions", type=int, default=8)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import openai
    from served_app import running

    import ragsweep
    from ragsweep.serve import make_app

    with tempfile.TemporaryDirectory(prefix="stream-bench-") as tmp:
        folder = _exported(Path(tmp), args.base_url, args.model, args.max_tokens, args.context_window)
        pipeline = ragsweep.load_pipeline(folder)
        try:
            with running(make_app(pipeline)) as url:
                client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=600)
                model = pipeline.config_id
                tag = time.strftime("%H%M%S")
                modes: dict[str, list[dict]] = {"streamed": [], "whole": []}
                for i in range(args.questions):
                    question = f"{QUESTIONS[i % len(QUESTIONS)]} (bench {tag}-{i})"
                    mode = "streamed" if i % 2 == 0 else "whole"
                    modes[mode].append((_streamed if mode == "streamed" else _whole)(client, model, question))
                    cached = (_whole if mode == "streamed" else _streamed)(client, model, question)
                    modes.setdefault(f"{'whole' if mode == 'streamed' else 'streamed'} (cached)", []).append(cached)
        finally:
            pipeline.close()
    out = {}
    for mode, rows in modes.items():
        out[mode] = {k: statistics.median(r[k] for r in rows) for k in ("first_s", "total_s", "pieces")}
        print(
            f"{mode:18} n={len(rows)}  first text {out[mode]['first_s']:.3f} s  end {out[mode]['total_s']:.3f} s  "
            f"pieces {out[mode]['pieces']:.0f}"
        )
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
