"""Hand freed memory back to the operating system between a sweep's stages.

A stage that is done (embedding, BERTScore) drops its models and buffers, but glibc keeps the freed
heap for reuse, so the process's resident memory stays at the stage's peak and the next stage's
peak is added on top. ``malloc_trim`` returns what is free. With the models released after their
stage, it lowered the privacy_qa sweep's peak (torch backend) by about 200 MB in one session
(BENCHMARKS.md, "Stage 1 at the floor").
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc


@functools.cache
def _libc():
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None  # glibc only


def give_back() -> None:
    """Collect garbage, then return the free heap to the OS where the C library can (glibc)."""
    gc.collect()
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
