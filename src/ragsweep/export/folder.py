"""An exported pipeline's folder, its layout written once.

``pipeline.json`` (the format, the run and configuration it came from, the run's spec with paths made the
folder's, the fusion weights and abstention threshold the run chose on validation), ``configuration.json`` (the
configuration's settings, as the run's manifest lists them), ``corpus.jsonl`` (the documents: id, text,
metadata), ``index/`` (a cache directory holding only this configuration's chunks, chunk vectors, Chroma
collection and knowledge graph), ``prompts/`` (the prompt files the spec names), ``README.md`` and ``SHA256SUMS``
(the digest of every other file but the README: ``digests``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragsweep.cache_dir import CacheDir

FORMAT_VERSION = 1


@dataclass(frozen=True)
class ExportDir:
    root: Path

    @property
    def pipeline(self) -> Path:
        return self.root / "pipeline.json"

    @property
    def configuration(self) -> Path:
        return self.root / "configuration.json"

    @property
    def corpus(self) -> Path:
        return self.root / "corpus.jsonl"

    @property
    def cache(self) -> CacheDir:
        return CacheDir(self.root / "index")

    @property
    def prompts(self) -> Path:
        return self.root / "prompts"

    @property
    def readme(self) -> Path:
        return self.root / "README.md"

    @property
    def sums(self) -> Path:
        return self.root / "SHA256SUMS"

    def is_export(self) -> bool:
        return self.pipeline.is_file()
