"""Embedding models (``embeddings:``): sentence-transformers on torch or ONNX Runtime, or an OpenAI-compatible API."""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal, Union

from pydantic import Discriminator, Field, Tag, field_validator

from ragsweep.config import backend_default
from ragsweep.config.base import Strict, env_var_name

EMBEDDING_BACKENDS = ("torch", "onnx", "onnx-int8")


class HFEmbeddingSpec(backend_default.AutoBackend):
    """A sentence-transformers model: ``minilm`` (bundled, offline), a hub id, or a local path."""

    kind: Literal["sentence_transformers"] = "sentence_transformers"
    name: str | None = None
    model: str = Field("minilm", description="minilm (bundled all-MiniLM-L6-v2), a hub id or a local directory")
    # never None once parsed: an unset backend is resolved by ``AutoBackend`` (the default only marks it unset)
    backend: Literal["torch", "onnx", "onnx-int8"] = Field(
        None,  # type: ignore[arg-type]
        description="torch (PyTorch), onnx (ONNX Runtime, exported once into the cache) or onnx-int8 "
        "(ONNX Runtime, int8 weights: faster, vectors within cosine 0.98); unset: onnx-int8 on a machine without "
        "a GPU, torch with one (auto; RAGSWEEP_DEFAULT_BACKEND overrides)",
    )
    batch_size: int = Field(32, gt=0, description="texts embedded at once (vectors do not depend on it)")
    device: str | None = Field(None, description="cpu, cuda, cuda:1, ...; default: the GPU when torch sees one")
    query_prefix: str = Field("", description="prepended to each question before embedding (e5: 'query: ')")
    text_prefix: str = Field("", description="prepended to each chunk before embedding (e5: 'passage: ')")

    @field_validator("backend", mode="before")
    @classmethod
    def _known_backend(cls, v: object) -> object:
        if v is not None and v not in EMBEDDING_BACKENDS:
            raise ValueError(
                f"unknown backend {v!r}; use torch (PyTorch), onnx (ONNX Runtime), onnx-int8 "
                "(ONNX Runtime with int8 weights) or auto (leave it out: the machine's fastest)"
            )
        return v

    @property
    def exported_to_onnx(self) -> bool:
        """It runs on ONNX Runtime from an export of its weights (made once, before the run's work)."""
        return self.backend != "torch"

    def label(self) -> str:
        """The model's short name, with the backend a spec chose (an unset one adds nothing: ids stay put)."""
        if self.name:
            return self.name
        base = re.sub(r"[^A-Za-z0-9]+", "", self.model.rstrip("/").split("/")[-1]).lower() or "hf"
        return base if self.backend == "torch" or self._auto_backend else f"{base}-{self.backend}"


class OpenAIEmbeddingSpec(Strict):
    """OpenAI or any OpenAI-compatible embeddings endpoint; the key is read from ``api_key_env``."""

    kind: Literal["openai"]
    exported_to_onnx: ClassVar[bool] = False  # served by its endpoint
    name: str | None = None
    model: str = Field("text-embedding-3-small", description="the endpoint's embedding model")
    base_url: str | None = Field(None, description="an OpenAI-compatible endpoint; default: OpenAI's")
    api_key_env: str = Field("OPENAI_API_KEY", description="the environment variable holding the key (never the key)")
    dimensions: int | None = Field(None, description="shortened vectors (text-embedding-3 models)")
    batch_size: int = Field(64, gt=0, description="texts per request")
    timeout: float = Field(60.0, gt=0, description="seconds per request")
    max_retries: int = Field(3, ge=0, description="retries of a request that failed or timed out")

    _env_name = field_validator("api_key_env")(classmethod(lambda cls, v: env_var_name(v)))

    def label(self) -> str:
        return self.name or re.sub(r"[^A-Za-z0-9]+", "", self.model).lower()


def _embedding_kind(v: object) -> str | None:
    """``kind`` may be left out of an embedding entry: it then means sentence_transformers."""
    if isinstance(v, dict):
        return v.get("kind", "sentence_transformers")
    return getattr(v, "kind", None)


EmbeddingSpec = Annotated[
    Union[Annotated[HFEmbeddingSpec, Tag("sentence_transformers")], Annotated[OpenAIEmbeddingSpec, Tag("openai")]],
    Discriminator(_embedding_kind),
]
