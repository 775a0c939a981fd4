"""Stage: the ONNX exports a plan's models need, made before anything else in this process.

An export runs in a child process that imports PyTorch and traces the model (about 1.3 GB resident
at its peak for MiniLM on the CUDA build of PyTorch). Made when the embedding stage first loads its
model, it stacks on a parent that has already chunked the corpus and imported LlamaIndex and Chroma
(about 340 MB); made first (before the run's first output is written with pandas), on a parent of
about 60 MB, it lowers an empty cache's peak by about 300 MB (BENCHMARKS.md, "Stage 1 at the
floor"). The local executor's runs only: Ray workers export on their own machines. Exports are
made once per cache and model, for the models of configurations with questions pending, even
when their vectors or scores turn out to be cached (a cache that has vectors has its exports,
unless that folder was deleted).

A model that cannot be exported is left alone here: the stage that loads it gets the same reason
(the run remembers the failure, ``onnx_export.failures_remembered``: no second try) and reports it
against its own configurations (``indexing failed: ...``), so one bad model never stops the others.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from ragsweep.config import HFEmbeddingSpec, SweepSpec
from ragsweep.pipelines.plan import SweepPlan


def export_models(spec: SweepSpec, cache_root: Path, plan: SweepPlan, scoring: bool, say=None) -> None:
    """Export every ONNX model this process will load for ``plan``: the embeddings (and semantic
    splitters' chunk embeddings) of its configurations with questions pending, and the BERTScore
    encoder when ``scoring`` (answers are pending or unscored). A model whose export exists is not
    touched (no hub lookup, nothing imported). ``say``: where a progress line goes when one is made."""
    if not plan.groups and not scoring:  # a no-op re-run imports nothing
        return
    from ragsweep.embeddings.onnx_export import announced

    with announced(say or (lambda _line: None)):
        _export_all(spec, cache_root, plan, scoring)


def _export_all(spec: SweepSpec, cache_root: Path, plan: SweepPlan, scoring: bool) -> None:
    from ragsweep.embeddings.factory import onnx_export_file, onnx_export_of
    from ragsweep.evaluation.bertscore import ensure_export

    models: dict[str, HFEmbeddingSpec] = {}
    for group in plan.groups.values():
        for c in group.configs:
            for emb in (c.chunk_embedding, c.embedding):
                if emb is not None and emb.exported_to_onnx:
                    models.setdefault(emb.label(), cast(HFEmbeddingSpec, emb))
    for emb in models.values():
        if not onnx_export_file(emb, cache_root).is_file():
            _quietly(onnx_export_of, emb, cache_root)
    if scoring:
        _quietly(ensure_export, spec.scoring.bertscore, cache_root)


def _quietly(export, *args) -> None:
    try:
        export(*args)
    except Exception:  # noqa: BLE001 - the stage that loads the model reports it against its configurations
        return
