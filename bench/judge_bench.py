"""Benchmark: LLM-judge throughput of ragsweep's stage 2 versus LlamaIndex's BatchEvalRunner.

A local OpenAI-compatible server (tests/fake_openai.py, in its own process) answers every call
after a fixed latency (default 200 ms), like a remote API. The same judgements are made by:
  - LlamaIndex ``BatchEvalRunner`` with its defaults (workers=2), OpenAILike LLM;
  - ``BatchEvalRunner`` with workers = the concurrency ceiling (the fair, tuned baseline);
  - ragsweep's stage-2 judging (``pipelines.stages.judge.judge_all``: engine + worker pool) with
    ``llm.concurrency`` = the same ceiling, on an empty LLM cache (no cache hits).
Judges: Correctness, Faithfulness, Relevancy (LlamaIndex's evaluators, default prompts) on
distinct (question, answer, contexts, reference) items built from the demo dataset. Prints judge
calls per second (server-side count / wall time), medians of ``--repeat`` runs, and ratios.

RagEvaluatorPack (llama-index-packs-rag-evaluator 0.5) needs llama_index.core.llama_dataset,
which llama-index-core 0.14 no longer has, so BatchEvalRunner is the baseline.

Usage: python bench/judge_bench.py [--items 80] [--latency-ms 200] [--concurrency 32] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
JUDGES = ["correctness", "faithfulness", "relevancy"]


def start_server(latency_ms: int) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "fake_openai.py"), "--port", "0", "--latency-ms", str(latency_ms)],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline().strip()
    if not line.startswith("listening on "):
        raise SystemExit(f"fake server did not start: {line!r}")
    return proc, line.removeprefix("listening on ")


def server_calls(base_url: str) -> int:
    return json.loads(urllib.request.urlopen(f"{base_url}/_stats", timeout=10).read())["calls"]


def make_items(n: int, salt: str) -> list[dict]:
    """Distinct judge inputs: demo questions, answers from their gold evidence, contexts around it."""
    from ragsweep.config import DatasetSpec
    from ragsweep.datasets.load import load_dataset

    ds = load_dataset(DatasetSpec())
    docs = {d.doc_id: d.text for d in ds.documents}
    qs = [q for q in ds.questions if q.evidence and q.reference_answer]
    items = []
    for i in range(n):
        q = qs[i % len(qs)]
        e = q.evidence[0]
        text = docs[e.doc_id]
        context = text[max(0, e.start - 600) : e.end + 600]
        answer = f"{text[e.start : e.end].strip()} [{salt} {i}]"  # distinct per item and per run: no cache hits
        items.append({"query": q.question, "answer": answer, "contexts": [context], "reference": q.reference_answer})
    return items


def run_batch_eval_runner(base_url: str, items: list[dict], workers: int | None) -> float:
    from llama_index.core.evaluation import (
        BatchEvalRunner,
        CorrectnessEvaluator,
        FaithfulnessEvaluator,
        RelevancyEvaluator,
    )
    from llama_index.llms.openai_like import OpenAILike

    llm = OpenAILike(
        model="fake-model",
        api_base=base_url,
        api_key="not-needed",
        is_chat_model=True,
        context_window=8192,
        max_tokens=512,
        temperature=0.0,
    )
    evaluators = {
        "correctness": CorrectnessEvaluator(llm=llm),
        "faithfulness": FaithfulnessEvaluator(llm=llm),
        "relevancy": RelevancyEvaluator(llm=llm),
    }
    runner = BatchEvalRunner(evaluators) if workers is None else BatchEvalRunner(evaluators, workers=workers)

    async def main() -> float:
        t0 = time.perf_counter()
        await runner.aevaluate_response_strs(
            queries=[i["query"] for i in items],
            response_strs=[i["answer"] for i in items],
            contexts_list=[i["contexts"] for i in items],
            reference=[i["reference"] for i in items],
        )
        wall = time.perf_counter() - t0
        await llm._get_aclient().close()  # inside the loop, so its connections close cleanly
        return wall

    return asyncio.run(main())


def run_ragsweep(base_url: str, items: list[dict], concurrency: int) -> float:
    from ragsweep.config import parse_spec
    from ragsweep.datasets.types import Question
    from ragsweep.llm.clients import LLMClients
    from ragsweep.pipelines.journal import Journal
    from ragsweep.pipelines.progress import Progress
    from ragsweep.pipelines.stages.judge import judge_all
    from ragsweep.pipelines.stats import SweepStats

    spec = parse_spec(
        {
            "splitters": [{"kind": "token"}],
            "retrievers": [{"kind": "bm25"}],
            "llm": {"model": "fake-model", "base_url": base_url, "api_key_env": None, "concurrency": concurrency},
            "stage2": {"judges": JUDGES},
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        clients = LLMClients(spec, Path(tmp) / "llm_calls.sqlite", run_id="bench")
        journal = Journal(Path(tmp) / "journal.sqlite")
        try:
            llm = clients.get(spec.llm)
            docs, answers, todo = {}, {}, []
            for n, it in enumerate(items):
                doc_id = f"d{n}"
                docs[doc_id] = it["contexts"][0]
                config = SimpleNamespace(config_hash=f"h{n}", config_id=f"c{n}")
                q = Question(qid=f"q{n}", question=it["query"], reference_answer=it["reference"])
                answers[(config.config_hash, q.qid)] = {
                    "answer": it["answer"],
                    "sources": [{"doc_id": doc_id, "start": 0, "end": len(docs[doc_id])}],
                }
                todo += [(config, q, j) for j in JUDGES]
            keys = {j: "bench" for j in JUDGES}
            bars = Progress(enabled=False)
            t0 = time.perf_counter()
            stop = asyncio.run(
                judge_all(
                    spec, todo, answers, docs, llm, keys, journal, SweepStats(), bars, bars.add("judging", len(todo))
                )
            )
            wall = time.perf_counter() - t0
            if stop is not None:
                raise SystemExit(f"ragsweep judging stopped: {stop}")
            calls = clients.counters()["llm_calls_made"]
            if calls != len(todo):
                raise SystemExit(f"ragsweep made {calls} calls for {len(todo)} judgements")
            return wall
        finally:
            journal.close()
            clients.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=80, help="answers to judge (x3 judges = judge calls)")
    ap.add_argument("--latency-ms", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=32, help="the concurrency ceiling")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    proc, base_url = start_server(args.latency_ms)
    try:
        runs = {
            "BatchEvalRunner (defaults: workers=2)": lambda items: run_batch_eval_runner(base_url, items, None),
            f"BatchEvalRunner (workers={args.concurrency})": lambda items: run_batch_eval_runner(
                base_url, items, args.concurrency
            ),
            f"ragsweep stage 2 (concurrency={args.concurrency})": lambda items: run_ragsweep(
                base_url, items, args.concurrency
            ),
        }
        results: dict[str, list[float]] = {k: [] for k in runs}
        for r in range(args.repeat):
            for name, fn in runs.items():
                items = make_items(args.items, f"{name} run {r}")
                before = server_calls(base_url)
                wall = fn(items)
                calls = server_calls(base_url) - before
                results[name].append(calls / wall)
                print(
                    f"run {r + 1}: {name}: {calls} judge calls in {wall:.2f} s = {calls / wall:.1f} calls/s", flush=True
                )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"\n{args.items} answers x {len(JUDGES)} judges, {args.latency_ms} ms per call, medians of {args.repeat}:")
    base = statistics.median(results[next(iter(runs))])
    for name, vals in results.items():
        med = statistics.median(vals)
        print(
            f"  {name:45s} {med:7.1f} judge calls/s  ({med / base:5.1f}x the default BatchEvalRunner; "
            f"runs: {', '.join(f'{v:.1f}' for v in vals)})"
        )
    ideal = args.concurrency * 1000 / args.latency_ms
    print(f"  ceiling at concurrency {args.concurrency}: {ideal:.0f} calls/s")


if __name__ == "__main__":
    main()
