"""The chosen pipeline, out of the sweep: ``export`` writes one configuration to a self-contained folder,
``load_pipeline`` opens it (or a run's configuration) as a LlamaIndex query engine that retrieves what the sweep
retrieved."""

from ragsweep.export.folder import ExportDir
from ragsweep.export.load import Pipeline, load_pipeline
from ragsweep.export.write import export_pipeline

__all__ = ["ExportDir", "Pipeline", "export_pipeline", "load_pipeline"]
