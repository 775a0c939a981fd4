"""Benchmark: the embedding backends (torch, onnx, onnx-int8) on LegalBench-RAG contractnli.

(a) Throughput: the bundled all-MiniLM-L6-v2 embeds the contractnli chunks of one splitter
    (sentence splitter, 512 tokens, overlap 64; MiniLM truncates at 256 word pieces), batch 32,
    all cores, model loaded and warm, no embedding cache: only model compute is timed. In one
    process the backends take turns batch by batch (the order rotating); medians of ``--repeat``
    passes over all chunks. Questions are embedded one at a time, the backends taking turns by blocks.
    Load times are whole processes (imports included): the first load of an ONNX backend exports
    into an empty cache, a later one reuses the export.
(b) Retrieval quality: exact cosine top-10 over those chunks (numpy, not Chroma, so only the
    embedding differs) for every contractnli question; hit@k, MRR@k, nDCG@k and span recall@k
    (ragsweep.metrics) at k 5 and 10, and each ONNX backend minus torch with a paired
    bootstrap 95% CI (ragsweep.evaluation.significance.paired_difference).

Tolerance: a backend keeps quality when, for every metric and k, |mean difference| <= 0.01 and
its paired 95% CI lies within [-0.02, 0.02] (an equivalence test: it must rule out a loss of
0.02, not merely fail to show one). 0.02 is below the half-width of every mean's own 95% CI over
these questions (0.02-0.03), i.e. below what a sweep over them can resolve between configurations.

Usage: python bench/embed_bench.py [--data ../shared/datasets/legalbench-rag] [--repeat 3] [--json FILE]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from legalbench_args import parse_args

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ("torch", "onnx", "onnx-int8")
KS = (5, 10)
TOLERANCE, CI_BOUND = 0.01, 0.02

LOAD = r"""
import json, sys, time
t0 = time.perf_counter()
from ragsweep.config import HFEmbeddingSpec
from ragsweep.embeddings.factory import load_model
load_model(HFEmbeddingSpec(backend=sys.argv[1]), sys.argv[2]).get_text_embedding("first vector")
print(json.dumps(time.perf_counter() - t0))
"""


def _load_seconds(backend: str, cache_root: Path) -> float:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", LOAD, backend, str(cache_root)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def load_times(work: Path) -> dict[str, dict[str, float]]:
    """Seconds from process start to the first vector: with an empty cache (export) and with the export reused."""
    out = {}
    for backend in BACKENDS:
        root = work / f"load-{backend}"
        out[backend] = {"first": _load_seconds(backend, root), "later": _load_seconds(backend, root)}
    return out


def _rotated(i: int) -> tuple[str, ...]:
    return BACKENDS[i % 3 :] + BACKENDS[: i % 3]


def embed_chunks(models: dict, texts: list[str], repeat: int) -> tuple[dict[str, list[float]], dict[str, np.ndarray]]:
    """Seconds each backend spends embedding all ``texts``, per repeat, and the vectors.

    The backends take turns batch by batch (the order rotating), so a slow spell of a shared
    machine falls on all of them alike instead of on whichever ran then.
    """
    seconds = {b: [0.0] * repeat for b in BACKENDS}
    vecs: dict[str, list] = {b: [] for b in BACKENDS}
    step = 32
    for r in range(repeat):
        for i, lo in enumerate(range(0, len(texts), step)):
            for b in _rotated(r + i):
                t0 = time.perf_counter()
                out = models[b].get_text_embedding_batch(texts[lo : lo + step])
                seconds[b][r] += time.perf_counter() - t0
                if r == 0:
                    vecs[b].extend(out)
    return seconds, {b: np.asarray(v, dtype=np.float32) for b, v in vecs.items()}


def embed_questions(
    models: dict, questions: list[str], block: int = 100
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Each question's vector by each backend, one at a time as a query engine embeds them, and each
    backend's median milliseconds per question. The backends take turns by blocks of questions:
    turns per question would charge each call with the previous backend's idle threads (ONNX
    Runtime's spin for a while after a run), which a sweep using one backend never pays."""
    ms: dict[str, list[float]] = {b: [] for b in BACKENDS}
    vecs: dict[str, list] = {b: [] for b in BACKENDS}
    for i, lo in enumerate(range(0, len(questions), block)):
        for b in _rotated(i):
            for q in questions[lo : lo + block]:
                t0 = time.perf_counter()
                vecs[b].append(models[b].get_query_embedding(q))
                ms[b].append((time.perf_counter() - t0) * 1000)
    return (
        {b: np.asarray(v, dtype=np.float32) for b, v in vecs.items()},
        {b: statistics.median(v) for b, v in ms.items()},
    )


def metrics_per_question(order: np.ndarray, chunks, questions, k: int) -> dict[str, np.ndarray]:
    from ragsweep.metrics import hit_at_k, ndcg_at_k, reciprocal_rank, span_recall_at_k

    fns = {"hit": hit_at_k, "mrr": reciprocal_rank, "ndcg": ndcg_at_k, "span_recall": span_recall_at_k}
    out: dict[str, list[float]] = {name: [] for name in fns}
    for row, q in zip(order, questions):
        retrieved = [(chunks[i].doc_id, chunks[i].start, chunks[i].end) for i in row[:k]]
        for name, fn in fns.items():
            out[name].append(fn(retrieved, q.evidence, k))
    return {name: np.asarray(v, dtype=float) for name, v in out.items()}


def main() -> None:
    args = parse_args(__doc__.splitlines()[0], "contractnli")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from ragsweep.config import (
        DatasetSpec,
        HFEmbeddingSpec,
        LegalBenchCorpus,
        LegalBenchQuestions,
        SentenceSplitterSpec,
    )
    from ragsweep.datasets.load import load_dataset
    from ragsweep.embeddings.device import available_cores
    from ragsweep.embeddings.factory import load_model
    from ragsweep.evaluation.bootstrap import bootstrap_ci
    from ragsweep.evaluation.significance import paired_difference
    from ragsweep.splitters.build import make_parser, split_corpus

    data = Path(args.data).resolve()
    ds = load_dataset(
        DatasetSpec(
            corpus=LegalBenchCorpus(format="legalbench", path=data, subset="contractnli"),
            questions=LegalBenchQuestions(format="legalbench", path=data, subset="contractnli"),
        )
    )
    splitter = SentenceSplitterSpec(kind="sentence", chunk_size=512, chunk_overlap=64)
    chunks = split_corpus(ds.documents, make_parser(splitter), splitter.label())
    # longest first, as CachedEmbedding batches them in a sweep (less padding per batch)
    chunks.sort(key=lambda c: len(c.text), reverse=True)
    texts = [c.text for c in chunks]
    questions = [q for q in ds.questions if q.evidence]

    with tempfile.TemporaryDirectory(prefix="ragsweep-embed-bench-") as tmp:
        work = Path(tmp)
        loads = load_times(work)
        models = {b: load_model(HFEmbeddingSpec(backend=b, batch_size=32), work / "cache") for b in BACKENDS}
        for m in models.values():
            m.get_text_embedding_batch(texts[:32])  # warm-up: the first batch pays one-off costs
        seconds, chunk_vecs = embed_chunks(models, texts, args.repeat)
        query_vecs, query_ms = embed_questions(models, [q.question for q in questions])

    import torch

    fig: dict = {
        "chunks": len(texts),
        "questions": len(questions),
        "cores": available_cores(),
        "torch_threads": torch.get_num_threads(),
        "repeat": args.repeat,
        "backends": {},
    }
    orders = {b: np.argsort(-(query_vecs[b] @ chunk_vecs[b].T), axis=1, kind="stable")[:, : max(KS)] for b in BACKENDS}
    per_q = {
        b: {f"{m}@{k}": v for k in KS for m, v in metrics_per_question(orders[b], chunks, questions, k).items()}
        for b in BACKENDS
    }
    for b in BACKENDS:
        cos = (chunk_vecs[b] * chunk_vecs["torch"]).sum(axis=1)
        med = statistics.median(seconds[b])
        row = fig["backends"][b] = {
            "seconds": seconds[b],
            "median_s": med,
            "chunks_per_s": len(texts) / med,
            # each pass's ratio is taken under one machine load; their median resists a noisy neighbour
            "speedup_vs_torch": statistics.median(t / s for t, s in zip(seconds["torch"], seconds[b])),
            "query_ms_median": query_ms[b],
            "load_first_s": loads[b]["first"],
            "load_later_s": loads[b]["later"],
            "chunk_cosine_vs_torch": {"min": float(cos.min()), "mean": float(cos.mean())},
            "top1_same_as_torch": float((orders[b][:, 0] == orders["torch"][:, 0]).mean()),
            "metrics": {},
        }
        for name, values in per_q[b].items():
            pair = paired_difference(values, per_q["torch"][name], n_resamples=2000, seed=0)
            holds = abs(pair.diff) <= TOLERANCE and -CI_BOUND <= pair.diff_lo and pair.diff_hi <= CI_BOUND
            mean, lo, hi = bootstrap_ci(values, 2000, 0.95, seed=0)
            row["metrics"][name] = {
                "mean": mean,
                "lo": lo,
                "hi": hi,
                "diff": pair.diff,
                "diff_lo": pair.diff_lo,
                "diff_hi": pair.diff_hi,
                "holds": bool(holds),
            }
        row["quality_holds"] = all(m["holds"] for m in row["metrics"].values())
    _print(fig)
    if args.json:
        Path(args.json).write_text(json.dumps(fig, indent=2))


def _print(fig: dict) -> None:
    print(
        f"contractnli: {fig['chunks']} chunks (sentence splitter 512/64), {fig['questions']} questions; "
        f"{fig['cores']} cores (torch threads {fig['torch_threads']}); medians of {fig['repeat']}"
    )
    print(
        "\n| backend | chunks/s | speed-up vs torch (median of per-pass ratios) | passes (s) | query ms (median) "
        "| load, empty cache (s) | load, later (s) | chunk cosine vs torch (min / mean) | same top-1 as torch |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for b, r in fig["backends"].items():
        print(
            f"| {b} | {r['chunks_per_s']:.1f} | {r['speedup_vs_torch']:.2f}x | "
            f"{', '.join(f'{s:.1f}' for s in r['seconds'])} | {r['query_ms_median']:.1f} | {r['load_first_s']:.1f} | "
            f"{r['load_later_s']:.1f} | {r['chunk_cosine_vs_torch']['min']:.4f} / "
            f"{r['chunk_cosine_vs_torch']['mean']:.4f} | {r['top1_same_as_torch']:.1%} |"
        )
    names = list(fig["backends"]["torch"]["metrics"])
    print("\n| metric | torch [95% CI] | onnx | onnx - torch [95% CI] | onnx-int8 | onnx-int8 - torch [95% CI] |")
    print("|---|---|---|---|---|---|")
    for name in names:
        t = fig["backends"]["torch"]["metrics"][name]
        cells = [f"{t['mean']:.4f} [{t['lo']:.3f}, {t['hi']:.3f}]"]
        for b in BACKENDS[1:]:
            m = fig["backends"][b]["metrics"][name]
            mark = "" if m["holds"] else " ✘"
            cells += [f"{m['mean']:.4f}", f"{m['diff']:+.4f} [{m['diff_lo']:+.4f}, {m['diff_hi']:+.4f}]{mark}"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    for b in BACKENDS[1:]:
        verdict = "holds" if fig["backends"][b]["quality_holds"] else "does NOT hold"
        print(f"\n{b}: quality {verdict} (|diff| <= {TOLERANCE} and 95% CI within +-{CI_BOUND} for every metric)")


if __name__ == "__main__":
    main()
