"""Hand freed memory back to the operating system between a sweep's stages.

A stage that is done (embedding, BERTScore) drops its models and buffers, but glibc keeps the freed
heap for reuse, so the process's resident memory stays at the stage's peak and the next stage's
peak is added on top. ``malloc_trim`` returns what is free. With the models released after their
stage, it lowered the privacy_qa sweep's peak (torch backend) by about 200 MB in one session
(BENCHMARKS.md, "Stage 1 at the floor").

A full collection looks at every object the process tracks, and a process that has imported PyTorch,
transformers and LlamaIndex tracks millions of them: about 0.4 s per collection in a fresh CLI, more in a
long-lived process (a notebook, a test session) that has run sweeps before. ``run_scope`` moves what exists
when a run starts (modules, libraries, the caller's data) out of the collector's sight for the run, so its
collections look at what the run made.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
from collections.abc import Iterator
from contextlib import contextmanager


@functools.cache
def _libc():
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None  # glibc only


@contextmanager
def run_scope() -> Iterator[None]:
    """Collections inside see only the objects made inside (``gc.freeze``). Nothing is lost: an object older
    than the run that becomes garbage is freed by its reference count as ever, or, in a reference cycle,
    collected after the run (``gc.unfreeze``)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def give_back() -> None:
    """Collect garbage, then return the free heap to the OS where the C library can (glibc)."""
    gc.collect()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
