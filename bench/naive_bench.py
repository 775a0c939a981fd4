"""The baseline ragsweep is measured against: the privacy_qa grid as a LlamaIndex user would run it.

Every one of the 27 configurations (3 splitters x {bm25, vector, fusion} x top_k {3, 5, 10}) is built
on its own, with LlamaIndex's own components and nothing shared or cached between configurations:
split the corpus, embed every chunk into an in-memory ``VectorStoreIndex`` (bundled MiniLM through
``HuggingFaceEmbedding``, loaded once), build ``BM25Retriever`` / ``QueryFusionRetriever``, answer
every question through a ``RetrieverQueryEngine`` (the same extractive synthesizer ragsweep uses,
since no LLM is available), then ``bert_score.score()`` of the configuration's answers (MiniLM layer
6). Prints the wall time, time per stage and each configuration's mean BERTScore F1 (so a run of
ragsweep can be checked against the same ranking).

Usage: python bench/naive_bench.py [--data ../shared/datasets/legalbench-rag] [--configs N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets" / "legalbench-rag"))
    ap.add_argument("--configs", type=int, default=None, help="run only the first N configurations")
    ap.add_argument("--json")
    args = ap.parse_args()
    t_start = time.perf_counter()
    timings: dict[str, float] = defaultdict(float)

    import tempfile

    import bert_score
    from legalbench_spec import sweep_spec
    from llama_index.core import Document, VectorStoreIndex
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    from llama_index.retrievers.bm25 import BM25Retriever

    from ragsweep.config import load_spec
    from ragsweep.datasets.load import load_dataset
    from ragsweep.embeddings.factory import bundled_minilm_dir
    from ragsweep.pipelines.extractive import ExtractiveSynthesizer
    from ragsweep.splitters.build import make_parser

    work = Path(tempfile.mkdtemp(prefix="ragsweep-naive-"))
    (work / "spec.yaml").write_text(sweep_spec(args.data, "privacy_qa", [3, 5, 10], work / "runs"), encoding="utf-8")
    spec = load_spec(work / "spec.yaml")
    t0 = time.perf_counter()
    dataset = load_dataset(spec.dataset)
    docs = [Document(text=d.text, doc_id=d.doc_id, metadata={"doc_id": d.doc_id}) for d in dataset.documents]
    questions = [q.question for q in dataset.questions]
    refs = [q.reference_answer or "" for q in dataset.questions]
    minilm = str(bundled_minilm_dir())
    embed_model = HuggingFaceEmbedding(model_name=minilm)
    timings["load"] += time.perf_counter() - t0

    grid = [(s, r, k) for s in spec.splitters for r in ("bm25", "vector", "fusion") for k in spec.top_k]
    results = {}
    for splitter, kind, k in grid[: args.configs]:
        name = f"{splitter.label()}-{kind}-k{k}"
        t0 = time.perf_counter()
        nodes = make_parser(splitter).get_nodes_from_documents(docs)
        timings["chunking"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        if kind in ("vector", "fusion"):
            vector = VectorStoreIndex(nodes, embed_model=embed_model).as_retriever(similarity_top_k=k)
        if kind in ("bm25", "fusion"):
            bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=k)
        timings["indexing"] += time.perf_counter() - t0
        retriever = {
            "bm25": lambda: bm25,
            "vector": lambda: vector,
            "fusion": lambda: QueryFusionRetriever(
                [vector, bm25],
                mode="reciprocal_rerank",
                similarity_top_k=k,
                num_queries=1,
                use_async=False,
                llm=MockLLM(),
            ),
        }[kind]()
        engine = RetrieverQueryEngine(retriever=retriever, response_synthesizer=ExtractiveSynthesizer(2))
        t0 = time.perf_counter()
        answers = [str(engine.query(q)) for q in questions]
        timings["answering"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        scored = [(a, r) for a, r in zip(answers, refs) if a.strip() and r.strip()]
        _, _, f1 = bert_score.score(
            [a for a, _ in scored], [r for _, r in scored], model_type=minilm, num_layers=6, batch_size=64, device="cpu"
        )
        timings["bertscore"] += time.perf_counter() - t0
        results[name] = float(f1.mean())
        print(f"  {name:32s} F1 {results[name]:.4f}  ({time.perf_counter() - t_start:7.1f} s so far)", flush=True)
    total = time.perf_counter() - t_start
    print(
        f"naive LlamaIndex loop: {len(results)} configurations x {len(questions)} questions in {total:.1f} s; "
        f"stages (s): {json.dumps({k: round(v, 1) for k, v in timings.items()})}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"seconds": total, "timings_s": timings, "mean_f1": results}, indent=2))


if __name__ == "__main__":
    main()
