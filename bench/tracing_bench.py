"""What tracing costs the answering path (issue 42): one configuration of a finished run opened as a live pipeline
(``load_pipeline``: the sweep's own ``answer_question``), asked every demo question, with tracing off and on.

Prints, per mode, the median of ``--repeat`` passes over the 107 demo questions (ms per question) and, with
tracing on, what sending the buffered spans took at the end (``close``). Off, each answered question costs one
call of ``tracing.answered`` that checks a module global: its cost is timed alone (ns per call) and set against a
question's time. ``--otlp``: a collector for the "on" passes (``scripts/phoenix-server.sh start``); without it only
"off" is timed.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/tracing_bench.py RUN CONFIG_ID --repeat 5 \\
        --otlp http://127.0.0.1:6006/v1/traces
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import timeit
from pathlib import Path

QUESTIONS = Path(__file__).resolve().parents[1] / "src" / "ragsweep" / "datasets" / "demo" / "questions.jsonl"


def _questions() -> list[str]:
    return [json.loads(line)["question"] for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line]


def _passes(run: Path, config_id: str, cache: str | None, repeat: int) -> tuple[list[float], float]:
    """Seconds per pass over the questions (after one warm pass), and the close (the spans' flush)."""
    import ragsweep

    questions = _questions()
    pipeline = ragsweep.load_pipeline(run, config_id, cache=cache)
    pipeline.ask_many(questions)  # warm: the embedding model, the index, the exporter's connection
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        pipeline.ask_many(questions)
        times.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    pipeline.close()
    return times, time.perf_counter() - t0


def _hook_ns() -> float:
    """One off hook: ``tracing.answered`` with no tracer (the call and the check of the module global)."""
    from ragsweep import tracing

    assert not tracing.active()
    n = 1_000_000
    return min(timeit.repeat(lambda: tracing.answered(None, None, None, None), number=n, repeat=5)) / n * 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("config_id")
    ap.add_argument("--cache", default=None, help="the run's cache, if it moved")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--otlp", default=None, help="an OTLP/HTTP traces endpoint for the 'on' passes")
    args = ap.parse_args()
    for k in [k for k in os.environ if k.startswith("OTEL_EXPORTER_OTLP")]:
        del os.environ[k]
    n = len(_questions())
    off, _ = _passes(args.run, args.config_id, args.cache, args.repeat)
    per_q = statistics.median(off) / n * 1e3
    print(
        f"off: {per_q:.3f} ms/question (median of {args.repeat} passes of {n}; passes {[round(t, 3) for t in off]} s)"
    )
    hook = _hook_ns()
    print(f"off: the hook {hook:.0f} ns/call, one call per question: {hook / 1e6 / per_q * 100:.4f} % of a question")
    if args.otlp:
        os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = args.otlp
        on, close = _passes(args.run, args.config_id, args.cache, args.repeat)
        on_q = statistics.median(on) / n * 1e3
        print(f"on:  {on_q:.3f} ms/question ({(on_q / per_q - 1) * 100:+.1f} %); close (flush) {close:.3f} s")


if __name__ == "__main__":
    main()
