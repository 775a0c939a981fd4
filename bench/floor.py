"""A sweep's model-compute floor: what its models must compute, measured with the models loaded and warm.

For a finished run directory: embed every distinct chunk text its splitters make (and, apart, every distinct
question, one at a time as a sweep measures them), then BERTScore every distinct (answer, reference) pair of its
records and the corpus baseline's random sentence pairs, on the run's own backends, through the code paths the
sweep uses (``embeddings.batching``: unpadded batches of equal length, as many calls at once as the model takes;
``BERTScoreRunner`` on an empty pair cache). Nothing is cached or written, so this is compute alone: the
sweep's cold time over this floor is what the rest (start-up, chunking, Chroma, answering, the journal) costs.

Usage: python bench/floor.py RUN_DIR --cache CACHE_DIR [--json FILE]   (CACHE_DIR: where the run's ONNX exports are)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path


def _chunk_texts(spec, dataset) -> list[str]:
    from ragsweep.splitters.build import make_parser, split_corpus

    texts: dict[str, None] = {}
    for splitter in spec.splitters:
        for c in split_corpus(dataset.documents, make_parser(splitter), splitter.label()):
            texts.setdefault(c.index_text, None)
    return list(texts)


def _embed(model, texts: list[str], role: str, batch_size: int) -> float:
    from ragsweep.embeddings.batching import batch_keys, encode, equal_key_batches, in_parallel

    t0 = time.perf_counter()
    keys = batch_keys(model, texts, role)
    batches = equal_key_batches(keys, batch_size)
    for _ in in_parallel(
        lambda ix: encode(model, [texts[i] for i in ix], role, keys[ix[0]]),
        batches,
        getattr(model, "concurrent_calls", 1),
    ):
        pass
    return time.perf_counter() - t0


def floor(run_dir: Path, cache_root: Path) -> dict:
    import pandas as pd

    from ragsweep.config import parse_spec
    from ragsweep.datasets.load import load_dataset
    from ragsweep.embeddings.factory import load_model
    from ragsweep.evaluation.bertscore import BERTScoreRunner
    from ragsweep.pipelines.extractive import sentences

    manifest = json.loads((run_dir / "manifest.json").read_text())
    spec = parse_spec(manifest["spec"], str(run_dir / "manifest.json"))
    dataset = load_dataset(spec.dataset)
    out: dict = {"backends": manifest.get("backends")}
    texts = _chunk_texts(spec, dataset)
    questions = list(dict.fromkeys(q.question for q in dataset.questions))
    for emb in spec.embeddings:
        t0 = time.perf_counter()
        model = load_model(emb, cache_root)
        _embed(model, texts[:64], "text", emb.batch_size)  # warm: the first calls allocate
        load = time.perf_counter() - t0
        chunks_s = _embed(model, texts, "text", emb.batch_size)
        t0 = time.perf_counter()
        for q in questions:
            model.get_query_embedding(q)
        out.setdefault("embeddings", {})[emb.label()] = {
            "backend": emb.backend,
            "load_and_warm_s": load,
            "chunk_texts": len(texts),
            "chunks_s": chunks_s,
            "questions": len(questions),
            "questions_s": time.perf_counter() - t0,
        }
        del model
    records = pd.read_parquet(run_dir / "records.parquet", columns=["answer", "qid"])
    refs = {q.qid: q.reference_answer or "" for q in dataset.questions}
    pairs = list(
        dict.fromkeys(
            (a, refs[q]) for a, q in zip(records["answer"], records["qid"]) if a and a.strip() and refs[q].strip()
        )
    )
    with tempfile.TemporaryDirectory() as tmp:
        runner = BERTScoreRunner(spec.scoring.bertscore, Path(tmp) / "pairs.sqlite", export_root=cache_root)
        t0 = time.perf_counter()
        runner.score([("the warm-up", "a warm-up pair"), ("two", "three")])
        load = time.perf_counter() - t0
        t0 = time.perf_counter()
        runner.score(pairs)
        pairs_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        base = runner.baseline(
            lambda: [s for d in dataset.documents for s in sentences(d.text)], dataset.corpus_fingerprint(), spec.seed
        )
        baseline_s = time.perf_counter() - t0
        runner.close()
    out["bertscore"] = {
        "backend": spec.scoring.bertscore.backend,
        "load_and_warm_s": load,
        "pairs": len(pairs),
        "pairs_s": pairs_s,
        "baseline": base.source,
        "baseline_s": baseline_s,
    }
    out["floor_s"] = sum(e["chunks_s"] for e in out["embeddings"].values()) + out["bertscore"]["pairs_s"] + baseline_s
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--json")
    args = ap.parse_args()
    out = floor(args.run_dir, args.cache)
    print(json.dumps(out, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    sys.exit(main())
