#!/usr/bin/env python3
"""What LLM-written chunk contexts (``context: llm``) would cost on LegalBench-RAG, from ``ragsweep run --dry-run``'s
estimate: calls, prompt and completion tokens, dollars at a stated price, and how much of the prompts is a prefix
shared with an earlier prompt (the document window), which endpoints with prompt caching compute and bill once.

No LLM is called (this machine has none): the figures are the dry run's, so completion tokens are the upper
bound ``max_tokens`` per call. Usage::

    .venv/bin/python bench/context_cost_bench.py [--subsets privacy_qa,contractnli] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from legalbench_args import DEFAULT_DATA  # noqa: E402

# gpt-4o-mini's list price (USD per million tokens; cached input at half price), as an example
PRICE = {"input": 0.15, "output": 0.60}
CACHED_INPUT = 0.075
MIN_CACHED_PREFIX = 1024  # OpenAI caches prompt prefixes of 1024 tokens or more
WINDOWS = (2000, 6000, 100_000)  # document_tokens: a small window, the default, whole documents


def spec_for(data: str, subset: str, document_tokens: int):
    from ragsweep.config import parse_spec

    return parse_spec(
        {
            "name": f"ctxcost-{subset}",
            "dataset": {
                "corpus": {"format": "legalbench", "path": data, "subset": subset},
                "questions": {"format": "legalbench", "path": data, "subset": subset},
            },
            "splitters": [
                {
                    "kind": "sentence",
                    "chunk_size": 512,
                    "chunk_overlap": 64,
                    "context": {"kind": "llm", "document_tokens": document_tokens},
                }
            ],
            "retrievers": [{"kind": "bm25"}],
            "llm": {"model": "gpt-4o-mini", "api_key_env": None, "context_window": 128_000},
            "prices": {"gpt-4o-mini": PRICE},
        }
    )


def measure(data: str, subset: str, document_tokens: int, work: Path) -> dict:
    from ragsweep.datasets.load import load_dataset
    from ragsweep.llm.tokens import count_tokens
    from ragsweep.pipelines.estimate import estimate_run
    from ragsweep.pipelines.grid import expand
    from ragsweep.pipelines.stages.chunk_context import keys
    from ragsweep.splitters.build import make_parser, split_corpus
    from ragsweep.splitters.situate import render_window

    spec = spec_for(data, subset, document_tokens)
    t0 = time.perf_counter()
    [est] = [
        e for e in estimate_run(spec, run_dir=work / "run", cache_dir=work / "cache") if e.stage == "chunk_context"
    ]
    seconds = time.perf_counter() - t0
    dataset = load_dataset(spec.dataset)
    [config] = expand(spec)
    chunks = split_corpus(dataset.documents, make_parser(config.splitter, None), config.chunk_key)
    ks, windowed = keys(chunks, dataset.documents, config.splitter.context)
    texts = {d.doc_id: d.text for d in dataset.documents}
    # a window sent again (the next chunk of the same document or block) is a cacheable prefix
    sizes: dict[tuple, int] = {}
    shared = 0
    for doc_id, bounds, _ in dict.fromkeys(ks):
        w = (doc_id, bounds)
        if w in sizes:
            shared += sizes[w] if sizes[w] >= MIN_CACHED_PREFIX else 0
        else:
            sizes[w] = count_tokens(render_window(texts[doc_id], bounds))
    cost = est.cost_usd or 0.0
    cached_cost = cost - shared * (PRICE["input"] - CACHED_INPUT) / 1e6
    return {
        "subset": subset,
        "document_tokens": document_tokens,
        "documents": len(dataset.documents),
        "chunks": len(chunks),
        "calls": est.calls,
        "windowed_chunks": windowed,
        "distinct_windows": len(sizes),
        "prompt_tokens": est.prompt_tokens,
        "completion_tokens_max": est.completion_tokens,
        "shared_prefix_tokens": shared,
        "usd": round(cost, 4),
        "usd_with_prompt_caching": round(cached_cost, 4),
        "dry_run_s": round(seconds, 2),
    }


def main() -> None:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--subsets", default="privacy_qa,contractnli")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ctxcost-") as tmp:
        for subset in [s for s in args.subsets.split(",") if s]:
            if not Path(args.data, "benchmarks", f"{subset}.json").is_file():
                sys.exit(
                    f"{args.data}: LegalBench-RAG subset {subset} not found (expects benchmarks/{subset}.json); "
                    "check --subsets, or pass --data"
                )
            for n in WINDOWS:
                rows.append(measure(args.data, subset, n, Path(tmp) / f"{subset}-{n}"))
    head = (
        "subset",
        "document_tokens",
        "documents",
        "chunks",
        "calls",
        "windowed_chunks",
        "prompt_tokens",
        "completion_tokens_max",
        "shared_prefix_tokens",
        "usd",
        "usd_with_prompt_caching",
        "dry_run_s",
    )
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(f"{r[h]:,}" if isinstance(r[h], int) else str(r[h]) for h in head) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps({"price": PRICE, "cached_input": CACHED_INPUT, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
