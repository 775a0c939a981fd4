"""ragsweep: configuration sweeps for retrieval-augmented generation, built on LlamaIndex."""

__version__ = "0.1.0"
