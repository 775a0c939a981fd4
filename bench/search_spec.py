"""The grid the search benchmark searches: 216 configurations of LegalBench-RAG's offline axes."""

from __future__ import annotations

from pathlib import Path

_SPEC = """\
name: search-{subset}
seed: 0
dataset:
  corpus: {{format: legalbench, path: {data}, subset: {subset}}}
  questions: {{format: legalbench, path: {data}, subset: {subset}}}
splitters:
  - {{kind: token, chunk_size: 256, chunk_overlap: 32}}
  - {{kind: sentence, chunk_size: 512, chunk_overlap: 64}}
  - {{kind: recursive, chunk_size: 1500, chunk_overlap: 150}}
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


def search_grid_spec(data: str | Path, subset: str, out: Path) -> str:
    """3 splitters x {bm25, vector and RRF fusion and weighted relative-score fusion on MiniLM torch and ONNX
    int8} x {none, rm3} x {none, maxsim} x top_k {3, 5, 10} = 216 configurations, selected by MRR."""
    return _SPEC.format(data=Path(data).resolve(), subset=subset, out=out)
