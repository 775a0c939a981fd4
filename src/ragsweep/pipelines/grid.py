"""Expand a sweep spec into configurations with stable, readable ids.

A configuration is splitter x embedding x retriever x top_k, except that a retriever that needs
no embedding (BM25) is not multiplied by the embeddings. Ids read like
``sentence512-minilm-fusion-k5``; a hash of the resolved configuration guards the journal
against reusing results after a spec edit that keeps the id.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ragsweep.config import EmbeddingSpec, RetrieverSpec, SemanticSplitterSpec, SplitterSpec, SweepSpec
from ragsweep.llm.identity import llm_identity


@dataclass(frozen=True)
class Configuration:
    config_id: str
    splitter: SplitterSpec
    chunk_embedding: EmbeddingSpec | None
    embedding: EmbeddingSpec | None
    retriever: RetrieverSpec
    top_k: int
    generator: dict
    rewrite_llm: dict | None = None  # the LLM writing fusion query rewrites or extracting the graph

    @property
    def chunk_key(self) -> str:
        """What determines the chunks: the splitter and, for semantic chunking, its embedding."""
        emb = f"@{self.chunk_embedding.label()}" if self.chunk_embedding is not None else ""
        return self.splitter.label() + emb

    def chunk_identity(self) -> dict:
        """Everything that determines the chunks, and nothing else (names and batch sizes do not)."""
        from ragsweep.embeddings.factory import model_key

        splitter = self.splitter.model_dump(mode="json", exclude={"name", "embedding"})
        return {"splitter": splitter,
                "chunk_embedding": model_key(self.chunk_embedding) if self.chunk_embedding is not None else None}

    def identity(self) -> dict:
        """Everything that determines this configuration's results: hashed into ``config_hash``."""
        from ragsweep import __version__
        from ragsweep.embeddings.factory import model_key

        return {
            "ragsweep": __version__,
            **self.chunk_identity(),
            "embedding": model_key(self.embedding) if self.embedding is not None else None,
            "retriever": self.retriever.model_dump(mode="json", exclude={"name"}),
            "top_k": self.top_k,
            "generator": self.generator,
            **({"rewrite_llm": self.rewrite_llm} if self.rewrite_llm else {}),
        }

    def resolved(self) -> dict:
        from ragsweep import __version__

        return {
            "ragsweep": __version__,
            "config_id": self.config_id,
            "splitter": self.splitter.model_dump(mode="json"),
            "chunk_embedding": self.chunk_embedding.model_dump(mode="json") if self.chunk_embedding else None,
            "embedding": self.embedding.model_dump(mode="json") if self.embedding else None,
            "retriever": self.retriever.model_dump(mode="json"),
            "top_k": self.top_k,
            "generator": self.generator,
        }

    def labels(self) -> dict:
        """The columns naming this configuration in records, summary and the manifest."""
        return {"config_id": self.config_id, "config_hash": self.config_hash, "splitter": self.chunk_key,
                "embedding": self.embedding.label() if self.embedding is not None else None,
                "retriever": self.retriever.label(), "top_k": self.top_k}

    @cached_property
    def config_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()[:12]


def _chunk_embedding(splitter: SplitterSpec, embedding: EmbeddingSpec | None, spec: SweepSpec) -> EmbeddingSpec | None:
    """Semantic chunking uses the named embedding, else the configuration's, else the first one."""
    if not isinstance(splitter, SemanticSplitterSpec):
        return None
    if splitter.embedding is not None:
        return next(e for e in spec.embeddings if e.label() == splitter.embedding)
    return embedding if embedding is not None else spec.embeddings[0]


def generator_identity(spec: SweepSpec) -> dict:
    """The generator as it affects answers: for an LLM, the model settings and the prompt text."""
    import hashlib

    gen = spec.generator.model_dump(mode="json", exclude={"prompt_file"})
    if spec.generator.kind == "llm":
        assert spec.llm is not None
        gen["llm"] = llm_identity(spec.llm)
        if spec.generator.prompt_file is not None:
            text = Path(spec.generator.prompt_file).read_text(encoding="utf-8")
            gen["prompt_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    return gen


def expand(spec: SweepSpec) -> list[Configuration]:
    generator = generator_identity(spec)
    out: list[Configuration] = []
    for splitter in spec.splitters:
        for retriever in spec.retrievers:
            embeddings: list[EmbeddingSpec | None] = list(spec.embeddings) if retriever.needs_embedding else [None]
            for emb in embeddings:
                chunk_emb = _chunk_embedding(splitter, emb, spec)
                for k in spec.top_k:
                    parts = [splitter.label()] + ([emb.label()] if emb is not None else []) + [retriever.label(), f"k{k}"]
                    uses_llm = (getattr(retriever, "num_queries", 1) > 1
                                or getattr(retriever, "uses_llm", False))
                    rewrite = llm_identity(spec.llm) if uses_llm and spec.llm else None
                    out.append(Configuration("-".join(parts), splitter, chunk_emb, emb, retriever, k, generator,
                                             rewrite))
    return out
