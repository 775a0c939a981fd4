"""ragsweep: configuration sweeps for retrieval-augmented generation, built on LlamaIndex."""

from ragsweep import mkl_mode

mkl_mode.request()  # before anything imports PyTorch: MKL reads its reproducibility mode once

__version__ = "0.1.0"
__all__ = ["load_run", "RunData"]


def __getattr__(name: str):
    """``ragsweep.load_run`` without importing pandas when the CLI starts."""
    if name in ("load_run", "RunData"):
        from ragsweep import results

        return getattr(results, name)
    raise AttributeError(f"module 'ragsweep' has no attribute {name!r}")
