"""Sentence-transformers embeddings computed by ONNX Runtime instead of PyTorch.

On a CPU, ONNX Runtime runs a small encoder such as MiniLM faster than PyTorch eager mode (fused
attention and layer norms, no Python between layers), and its int8 variant faster again. Only
the transformer runs in ONNX Runtime; tokenization (the model's fast tokenizer, read with the
``tokenizers`` library so that PyTorch is never imported, truncated at the model's
``max_seq_length``), pooling and normalisation follow the model's own sentence-transformers
configuration, and prefixes are applied as the PyTorch path applies them, so the vectors match
that backend's (tests/test_onnx_embeddings.py checks cosine >= 0.9999 for fp32).
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import Field, PrivateAttr

from ragsweep.embeddings.st_layout import SentenceLayout, l2_normalize, pool

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


class OnnxEmbedding(BaseEmbedding):
    """A LlamaIndex embedding over an exported transformer (``onnx_export``) and the model's layout."""

    query_instruction: str = Field("", description="prepended to every query")
    text_instruction: str = Field("", description="prepended to every text")
    max_length: int = Field(gt=0, description="tokens; longer inputs are truncated")
    normalize: bool = Field(True, description="unit vectors, as HuggingFaceEmbedding(normalize=True) returns")
    per_text: bool = Field(False, description="one text per call (dynamic int8: scales are per batch)")
    concurrent_calls: int = Field(1, description="calls run at once, each on one thread (CPU)")
    _session: Any = PrivateAttr()
    _tokenizer: Any = PrivateAttr()
    _layout: SentenceLayout = PrivateAttr()
    _inputs: list[str] = PrivateAttr()
    _tokenizer_lock: Any = PrivateAttr()

    def __init__(self, onnx_file: Path, layout: SentenceLayout, providers: list, threads: int, **kw: Any) -> None:
        import onnxruntime as ort

        from ragsweep.embeddings.fast_tokenizer import FastTokenizer, max_positions

        tokenizer: FastTokenizer | PreTrainedTokenizerBase
        if FastTokenizer.available(layout.transformer_dir):  # no transformers, hence no PyTorch, in this process
            tokenizer = FastTokenizer(layout.transformer_dir)
            limit = tokenizer.model_max_length
        else:
            from transformers import AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(layout.transformer_dir)
            limit = tokenizer.model_max_length
        max_length = layout.max_seq_length
        if max_length is None:  # sentence-transformers' fallback: the tokenizer's limit, capped by the positions
            positions = max_positions(layout.transformer_dir)
            max_length = min(x for x in (limit, positions) if x) if (limit or positions) else 512
        cpu_only = all((p if isinstance(p, str) else p[0]) == "CPUExecutionProvider" for p in providers)
        calls = threads if cpu_only else 1  # on a CPU: one thread per call, as many calls as threads
        super().__init__(max_length=max_length, concurrent_calls=calls, **kw)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1 if calls > 1 else threads
        self._session = ort.InferenceSession(str(onnx_file), options, providers=providers)
        self._tokenizer = tokenizer
        self._tokenizer_lock = threading.Lock()
        self._layout = layout
        self._inputs = [i.name for i in self._session.get_inputs()]

    def _encode(self, texts: list[str], max_length: int | None = None) -> list[tuple[list[int], list[int]]]:
        """(token ids, type ids) of each text, special tokens added, truncated at ``max_length``."""
        from ragsweep.embeddings.fast_tokenizer import FastTokenizer

        if isinstance(self._tokenizer, FastTokenizer):
            return self._tokenizer.encode(texts, max_length)
        with self._tokenizer_lock:  # transformers sets the backend's truncation on every call: one at a time
            enc = self._tokenizer(list(texts), truncation=max_length is not None, max_length=max_length)
        types = enc.get("token_type_ids") or [[0] * len(ids) for ids in enc["input_ids"]]
        return list(zip(enc["input_ids"], types))

    @classmethod
    def class_name(cls) -> str:
        return "OnnxEmbedding"

    @property
    def providers(self) -> list[str]:
        """The execution providers the session actually uses (CUDA only when it could be loaded)."""
        return self._session.get_providers()

    def _prompt_tokens(self, prompt: str) -> int:
        """Tokens the prompt occupies at the start of each input (without the trailing special token),
        which sentence-transformers drops from pooling when the model's pooling says include_prompt false."""
        return len(self._encode([prompt])[0][0]) - 1

    def _inputs_for(self, texts: list[str], prompt: str) -> list[str]:
        inputs = [prompt + t for t in texts]
        return [t.lower() for t in inputs] if self._layout.do_lower_case else inputs

    def _prompt(self, role: str) -> str:
        return self.query_instruction if role == "query" else self.text_instruction

    def batch_keys(self, texts: list[str], role: str) -> list[object]:
        """Which texts may share a batch (``embeddings.batching``): those of one token count; none for a
        dynamically quantized model, whose activation scales are taken over the whole batch."""
        if self.per_text:
            return [("solo", i) for i in range(len(texts))]
        return [len(ids) for ids, _ in self._encode(self._inputs_for(texts, self._prompt(role)), self.max_length)]

    def embed_batch(self, texts: list[str], role: str) -> list[list[float]]:
        """Vectors of texts that share a batch key, in one call (filled as ``batching.filled`` says)."""
        from ragsweep.embeddings.batching import filled

        prompt = self._prompt(role)
        rows = self._encode(self._inputs_for(texts, prompt), self.max_length)
        if not self.per_text:
            rows = filled(rows, len(rows[0][0]))
        return self._run(rows, prompt)[: len(texts)].tolist()

    def _embed(self, texts: list[str], role: str) -> list[list[float]]:
        from ragsweep.embeddings.batching import equal_key_batches, in_parallel

        keys = self.batch_keys(texts, role)
        out: list[list[float]] = [[] for _ in texts]
        batches = equal_key_batches(keys, self.embed_batch_size)
        for idx, vecs in in_parallel(
            lambda ix: self.embed_batch([texts[i] for i in ix], role), batches, self.concurrent_calls
        ):
            for i, vec in zip(idx, vecs):
                out[i] = vec
        return out

    def _run(self, rows: list[tuple[list[int], list[int]]], prompt: str) -> np.ndarray:
        """Pooled vectors of tokenized rows (padded to the longest, masked; equal lengths in practice)."""
        width = max(len(ids) for ids, _ in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros_like(ids)
        for i, (row, row_types) in enumerate(rows):
            ids[i, : len(row)], types[i, : len(row)], mask[i, : len(row)] = row, row_types, 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = self._session.run(None, {name: feed[name] for name in self._inputs})[0]
        if prompt and not self._layout.include_prompt:
            mask = mask.copy()
            mask[:, : self._prompt_tokens(prompt)] = 0
        vecs = pool(np.asarray(hidden, dtype=np.float32), mask, self._layout.pooling)
        return l2_normalize(vecs) if self._layout.normalize or self.normalize else vecs

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embed([query], "query")[0]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embed([text], "text")[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts, "text")

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embedding(text)


def default_instructions(model_name: str) -> tuple[str, str]:
    """The (query, text) prefixes HuggingFaceEmbedding adds when none is configured (BGE and Instructor
    hub ids get theirs), so both backends embed the same strings.

    Read from llama-index's ``utils`` module by file: importing its package would import
    sentence-transformers, seconds the ONNX path does not otherwise spend.
    """
    package = importlib.util.find_spec("llama_index.embeddings.huggingface")
    assert package is not None and package.submodule_search_locations
    path = Path(next(iter(package.submodule_search_locations))) / "utils.py"
    spec = importlib.util.spec_from_file_location("_ragsweep_hf_embedding_utils", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.get_query_instruct_for_model_name(model_name), module.get_text_instruct_for_model_name(model_name)
