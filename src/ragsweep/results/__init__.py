"""Looking at runs: ``load_run`` (pandas), figures and ``ragsweep plot``, the HTML report, ``compare``."""

from ragsweep.results.run import RunData, load_run

__all__ = ["RunData", "load_run"]
