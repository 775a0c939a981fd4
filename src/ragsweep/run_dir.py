"""A run directory's layout, written once (``CacheDir`` is the cache's): what ``ragsweep run`` writes and
``show``, ``report``, ``compare`` and ``load_run`` read.

``journal.sqlite`` (every answer as it is made: a killed run resumes from it), ``manifest.json`` (spec,
invocations, counters), ``questions.parquet`` (the questions and their split), the outputs
``records.parquet``, ``summary.csv``, ``comparisons.csv`` and ``verdict.json``, a search's ``search.sqlite``
(its Optuna study), ``unlocated_evidence.jsonl`` (evidence text not found in the corpus) and the default
``report.html``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunDir:
    root: Path

    @property
    def journal(self) -> Path:
        return self.root / "journal.sqlite"

    @property
    def manifest(self) -> Path:
        return self.root / "manifest.json"

    @property
    def questions(self) -> Path:
        return self.root / "questions.parquet"

    @property
    def records(self) -> Path:
        return self.root / "records.parquet"

    @property
    def summary(self) -> Path:
        return self.root / "summary.csv"

    @property
    def comparisons(self) -> Path:
        return self.root / "comparisons.csv"

    @property
    def verdict(self) -> Path:
        return self.root / "verdict.json"

    @property
    def outputs(self) -> tuple[Path, ...]:
        """What the end of a run writes (all four, or an earlier set is rebuilt)."""
        return self.records, self.summary, self.comparisons, self.verdict

    @property
    def search(self) -> Path:
        return self.root / "search.sqlite"

    @property
    def unlocated_evidence(self) -> Path:
        return self.root / "unlocated_evidence.jsonl"

    @property
    def report(self) -> Path:
        return self.root / "report.html"
