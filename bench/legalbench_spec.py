"""The sweeps the LegalBench-RAG benchmarks run: 3 splitters x {bm25, vector, fusion} x ``top_k``, bundled MiniLM
(on PyTorch by default, or on ONNX Runtime for embeddings and BERTScore alike); and the 216-configuration grid
the search benchmark searches."""

from __future__ import annotations

from pathlib import Path

_HEAD = """\
name: {name}
seed: 0
dataset:
  corpus: {{format: legalbench, path: {data}, subset: {subset}}}
  questions: {{format: legalbench, path: {data}, subset: {subset}}}
splitters:
  - {{kind: token, chunk_size: 256, chunk_overlap: 32}}
  - {{kind: sentence, chunk_size: 512, chunk_overlap: 64}}
  - {{kind: recursive, chunk_size: 1500, chunk_overlap: 150}}
"""
_SPEC = (
    _HEAD
    + """\
embeddings:
  - {{kind: sentence_transformers, model: minilm, batch_size: 32{backend}}}
retrievers:
  - {{kind: bm25}}
  - {{kind: vector}}
  - {{kind: fusion, mode: reciprocal_rerank}}
top_k: {top_k}
output_dir: {out}
scoring:
  bertscore: {{baseline: auto{backend}}}
"""
)


def sweep_spec(data: str | Path, subset: str, top_k: list[int], out: Path, backend: str | None = None) -> str:
    """The spec's YAML text (run directory ``out/bench-SUBSET``); ``backend`` runs the embeddings and the
    BERTScore encoder (torch, onnx, onnx-int8; None or "default": left unset, the machine's default)."""
    chosen = "" if backend in (None, "default") else f", backend: {backend}"
    return _SPEC.format(
        name=f"bench-{subset}", data=Path(data).resolve(), subset=subset, top_k=list(top_k), out=out, backend=chosen
    )


_SEARCH = (
    _HEAD
    + """\
embeddings:
  - {{kind: sentence_transformers, model: minilm, batch_size: 32}}
  - {{kind: sentence_transformers, model: minilm, batch_size: 32, backend: onnx-int8, name: minilm-int8}}
retrievers:
  - {{kind: bm25}}
  - {{kind: vector}}
  - {{kind: fusion, mode: reciprocal_rerank}}
  - {{kind: fusion, mode: relative_score, weights: [0.3, 0.7], name: fusion-w37}}
query_transforms: [{{kind: none}}, {{kind: rm3}}]
rerankers: [{{kind: none}}, {{kind: late_interaction, candidates: 20}}]
top_k: [3, 5, 10]
scoring: {{metric: mrr}}
output_dir: {out}
"""
)


def search_grid_spec(data: str | Path, subset: str, out: Path) -> str:
    """The search benchmark's grid: the same 3 splitters x {bm25, vector and RRF fusion and weighted relative-score
    fusion on MiniLM torch and ONNX int8} x {none, rm3} x {none, maxsim} x top_k {3, 5, 10} = 216 configurations,
    selected by MRR (run directory ``out/search-SUBSET``)."""
    return _SEARCH.format(name=f"search-{subset}", data=Path(data).resolve(), subset=subset, out=out)
