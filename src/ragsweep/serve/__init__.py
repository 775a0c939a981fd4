"""``ragsweep serve``: a loaded pipeline (``ragsweep.load_pipeline``) behind an HTTP API."""

from ragsweep.serve.app import make_app

__all__ = ["make_app"]
