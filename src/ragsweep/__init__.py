"""ragsweep: configuration sweeps for retrieval-augmented generation, built on LlamaIndex."""

from ragsweep import mkl_mode

mkl_mode.request()  # before anything imports PyTorch: MKL reads its reproducibility mode once



def _version() -> str:
    """The installed distribution's version (pyproject.toml is the one place it is written)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ragsweep")
    except PackageNotFoundError:  # a source tree on sys.path, not installed
        return "0+unknown"


__version__ = _version()
__all__ = ["load_run", "RunData"]


def __getattr__(name: str):
    """``ragsweep.load_run`` without importing pandas when the CLI starts."""
    if name in ("load_run", "RunData"):
        from ragsweep import results

        return getattr(results, name)
    raise AttributeError(f"module 'ragsweep' has no attribute {name!r}")
