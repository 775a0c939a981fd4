"""Shape-independent matrix products in PyTorch's MKL: Intel's Conditional Numerical Reproducibility.

PyTorch's x86 builds multiply with Intel MKL, which picks its sgemm kernel by the product's shape:
on an AVX-512 machine (Xeon with AMX) a 1536 x 384 product moved in the last bit for rows that came
in a batch of 64 or 128 instead of 768, so a text's vector, and a BERTScore, depended on the batch it
was computed in and on the thread count. MKL's strict CNR mode (Intel oneMKL Developer Reference,
"Obtaining Numerically Reproducible Results": ``MKL_CBWR=AUTO,STRICT``) keeps the fastest code path
for the CPU and makes every row independent of the shape and of the threads, at no cost measured here.
MKL reads the mode at its first call, so ``request`` sets it in the environment when ragsweep is
imported, before anything imports PyTorch (Ray workers inherit it); ``ensure_strict`` checks when a
PyTorch model is loaded, switches it on through MKL's service call if MKL has not run yet, and
warns once if it cannot.
"""

from __future__ import annotations

import functools
import os

MODE = "AUTO,STRICT"
_AUTO, _STRICT, _ALL = 2, 0x10000, -1  # mkl_service.h: MKL_CBWR_AUTO, MKL_CBWR_STRICT, MKL_CBWR_ALL (~0)


def request() -> None:
    """Ask MKL for strict reproducibility before it starts, unless the user chose a mode."""
    os.environ.setdefault("MKL_CBWR", MODE)


@functools.cache
def ensure_strict() -> bool:
    """Whether PyTorch's MKL runs in strict mode now (True too when this PyTorch has no MKL); warns once
    when it does not and cannot be switched any more. Call it after importing torch."""
    import ctypes
    import warnings

    lib = _torch_mkl()
    if lib is None:
        return True
    if lib.mkl_serv_cbwr_get(ctypes.c_int(_ALL)) & _STRICT:
        return True
    chosen = os.environ.get("MKL_CBWR", MODE)
    if chosen == MODE and lib.mkl_serv_cbwr_set(ctypes.c_int(_AUTO | _STRICT)) == 0:
        return True
    warnings.warn(
        f"PyTorch's MKL is not in strict reproducible mode (it ran before ragsweep was imported, or "
        f"MKL_CBWR={chosen!r} asks for another mode): a vector or BERTScore may differ in its last "
        f"bits with the batch it is computed in; set MKL_CBWR={MODE} before starting Python",
        RuntimeWarning,
        stacklevel=2,
    )
    return False


def _torch_mkl():
    """PyTorch's CPU library, where its MKL is linked in, or None (no torch, or a build without MKL)."""
    import ctypes

    import torch

    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    if not hasattr(lib, "mkl_serv_cbwr_get") or not hasattr(lib, "mkl_serv_cbwr_set"):
        return None
    return lib
