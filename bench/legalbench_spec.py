"""The sweep the LegalBench-RAG benchmarks run: 3 splitters x {bm25, vector, fusion} x ``top_k``, bundled MiniLM
(on PyTorch by default, or on ONNX Runtime for embeddings and BERTScore alike)."""

from __future__ import annotations

from pathlib import Path

_SPEC = """\
name: bench-{subset}
seed: 0
dataset:
  corpus: {{format: legalbench, path: {data}, subset: {subset}}}
  questions: {{format: legalbench, path: {data}, subset: {subset}}}
splitters:
  - {{kind: token, chunk_size: 256, chunk_overlap: 32}}
  - {{kind: sentence, chunk_size: 512, chunk_overlap: 64}}
  - {{kind: recursive, chunk_size: 1500, chunk_overlap: 150}}
embeddings:
  - {{kind: sentence_transformers, model: minilm, batch_size: 32, backend: {backend}}}
retrievers:
  - {{kind: bm25}}
  - {{kind: vector}}
  - {{kind: fusion, mode: reciprocal_rerank}}
top_k: {top_k}
output_dir: {out}
scoring:
  bertscore: {{backend: {backend}}}
"""


def sweep_spec(data: str | Path, subset: str, top_k: list[int], out: Path, backend: str = "torch") -> str:
    """The spec's YAML text (run directory ``out/bench-SUBSET``); ``backend`` runs the embeddings and the
    BERTScore encoder (torch, onnx, onnx-int8)."""
    return _SPEC.format(data=Path(data).resolve(), subset=subset, top_k=list(top_k), out=out, backend=backend)
