"""ragsweep: configuration sweeps for retrieval-augmented generation, built on LlamaIndex."""

from ragsweep import mkl_mode

mkl_mode.request()  # before anything imports PyTorch: MKL reads its reproducibility mode once


def _version() -> str:
    """The version written in pyproject.toml: the installed distribution's, else (a source tree on sys.path,
    not installed) read from the file itself, so cache keys that include it do not depend on how ragsweep was
    installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ragsweep")
    except PackageNotFoundError:
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]


__version__ = _version()
__all__ = ["load_run", "RunData", "load_pipeline", "export_pipeline", "sweep"]


def __getattr__(name: str):
    """``ragsweep.load_run`` and ``load_pipeline`` without importing pandas or LlamaIndex when the CLI starts."""
    if name in ("load_run", "RunData"):
        from ragsweep import results

        return getattr(results, name)
    if name in ("load_pipeline", "export_pipeline"):
        from ragsweep import export

        return getattr(export, name)
    if name == "sweep":
        from ragsweep.api import sweep

        return sweep
    raise AttributeError(f"module 'ragsweep' has no attribute {name!r}")
