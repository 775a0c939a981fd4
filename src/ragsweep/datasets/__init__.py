"""Datasets: loaders for each supported format, all producing one in-memory ``Dataset``.

Kept light on import: LlamaIndex is imported only inside the loaders that use it.
"""

from ragsweep.datasets.load import load_dataset
from ragsweep.datasets.types import Dataset, Document, EvidenceSpan, Question

__all__ = ["Dataset", "Document", "EvidenceSpan", "Question", "load_dataset"]
