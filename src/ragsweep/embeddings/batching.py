"""Batches that cannot change a vector: each text's vector is a function of the text alone.

Three things make a vector computed in a batch depend on the batch's other texts, and so on what
the cache already held, how a Ray task sliced the work, or the batch size:
- padding: every text is padded to the batch's longest, and the attention and pooling reductions
  then run over more positions (a change in the last bits). Texts are batched only with texts of
  the same token count, so nothing is padded.
- kernels chosen by shape: CPU matrix kernels (oneDNN, MKL) take other code paths for very few
  rows (under about 12 tokens in all), with other rounding, and other thread splits; a batch is
  filled with copies of its first text up to ``MIN_TOKENS`` rows x tokens, where every row gets the
  same result whatever the number of rows or threads.
- dynamic int8 quantization scales activations per tensor, i.e. by the whole batch: such a model
  embeds one text per call.
``tests/test_determinism.py`` checks all three on the real kernels (bitwise). A remote API (OpenAI)
batches as it always did: its server decides how it computes. On a GPU, cuBLAS may also pick
kernels by shape; the guarantee is measured on CPUs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

MIN_TOKENS = 32  # rows x tokens of a batch, at least: below it CPU kernels round differently
# rows x tokens of a batch, at most: bounds the attention scores' memory (64 rows of 512 tokens would
# hold 0.8 GB per layer), also faster on a CPU (BENCHMARKS.md, "Stage 1 at the floor")
MAX_TOKENS = 512

T = TypeVar("T")  # a text, or a tokenized row
B = TypeVar("B")  # a batch
R = TypeVar("R")  # what is computed of a batch


def _sentence_transformer(model: Any):
    """The SentenceTransformer inside LlamaIndex's HuggingFaceEmbedding, if ``model`` is one."""
    st = getattr(model, "_model", None)
    return st if st is not None and hasattr(st, "encode") and hasattr(st, "tokenizer") else None


def _remote(model: Any) -> bool:
    return type(model).__name__.startswith("OpenAI")


def _st_lengths(st, texts: list[str], role: str) -> list[int]:
    """Token counts of ``texts`` as ``SentenceTransformer.encode`` sees them (prompt added, truncated)."""
    prompt = (getattr(st, "prompts", None) or {}).get(role) or None
    out: list[int] = []
    for i in range(0, len(texts), 256):
        part = texts[i : i + 256]
        if hasattr(st, "preprocess"):  # sentence-transformers >= 5
            features = st.preprocess(part, prompt=prompt)
        else:
            features = st.tokenize([(prompt or "") + t for t in part])
        out.extend(int(n) for n in features["attention_mask"].sum(dim=1).tolist())
    return out


def batch_keys(model: Any, texts: list[str], role: str) -> list[object]:
    """A key per text (``role``: ``text`` or ``query``): texts may share a batch only when their keys are
    equal. A token count (int), ``("solo", i)`` for a text that must be embedded alone, or None (remote)."""
    if hasattr(model, "batch_keys"):  # ragsweep's ONNX Runtime embedding knows its own rules
        return list(model.batch_keys(texts, role))
    st = _sentence_transformer(model)
    if st is not None:
        try:
            return list(_st_lengths(st, texts, role))
        except Exception:  # noqa: BLE001 - an unusual tokenizer: one text per call is always safe
            pass
    if _remote(model):
        return [None] * len(texts)
    return [("solo", i) for i in range(len(texts))]


def equal_key_batches(keys: list[object], size: int, max_tokens: int | None = MAX_TOKENS) -> list[list[int]]:
    """Indices into ``keys`` grouped by key (longest first where keys are token counts), cut into
    batches of at most ``size`` texts and (token-count keys) ``max_tokens`` tokens, one text at
    least; the grouping depends only on the keys, never on arrival order."""
    groups: dict[object, list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        groups[key].append(i)
    order = sorted(groups, key=lambda k: -k if isinstance(k, int) else 0)
    out = []
    for k in order:
        step = max(1, size)
        if max_tokens and isinstance(k, int) and k > 0:
            step = max(1, min(step, max_tokens // k))
        out += [groups[k][i : i + step] for i in range(0, len(groups[k]), step)]
    return out


def in_parallel(fn: Callable[[B], R], batches: list[B], workers: int) -> Iterator[tuple[B, R]]:
    """(batch, ``fn(batch)``) for each batch, in order, with ``workers`` calls at a time.

    ONNX Runtime runs calls of one session concurrently; a small model's single call cannot keep
    several cores busy (two one-thread calls at once do 1.9x the work of one two-thread call on
    short texts, BENCHMARKS.md), and a one-thread call gives the same result on any core, so this
    changes no value. At most ``4 * workers`` calls are in flight, so results never pile up."""
    if workers <= 1 or len(batches) <= 1:
        for batch in batches:
            yield batch, fn(batch)
        return
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    ahead = 4 * workers  # calls in flight while the caller consumes finished ones
    pool = ThreadPoolExecutor(workers)
    try:
        flight: deque = deque()
        for batch in batches:
            flight.append((batch, pool.submit(fn, batch)))
            if len(flight) >= ahead:
                done, future = flight.popleft()
                yield done, future.result()
        while flight:
            done, future = flight.popleft()
            yield done, future.result()
    finally:  # a failed call (or a consumer that stops) cancels the calls not yet started
        pool.shutdown(wait=True, cancel_futures=True)


def filled(texts: list[T], key: object) -> list[T]:
    """``texts`` (one key, a token count) with copies of the first added up to ``MIN_TOKENS``."""
    if not isinstance(key, int) or key <= 0:
        return texts
    return texts + [texts[0]] * max(0, math.ceil(MIN_TOKENS / key) - len(texts))


def encode(model: Any, texts: list[str], role: str, key: object) -> list[list[float]]:
    """Vectors of ``texts``, which share ``key``, each as it would be alone."""
    if hasattr(model, "embed_batch"):
        return model.embed_batch(texts, role)
    st = _sentence_transformer(model)
    if st is not None:
        inputs = filled(texts, key)
        vecs = st.encode(
            inputs,
            batch_size=len(inputs),
            prompt_name=role,
            show_progress_bar=False,
            normalize_embeddings=bool(getattr(model, "normalize", True)),
            convert_to_numpy=True,
        )
        return vecs[: len(texts)].tolist()
    if role == "text" and (_remote(model) or len(texts) > 1):
        return model.get_text_embedding_batch(texts)
    one = model.get_query_embedding if role == "query" else model.get_text_embedding
    return [one(t) for t in texts]
