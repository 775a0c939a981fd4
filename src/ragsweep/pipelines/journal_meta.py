"""What a run directory's journal says of the run itself: its id, its invocations, the dataset it holds."""

from __future__ import annotations

from pathlib import Path

from ragsweep.datasets.types import Dataset
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.journal import Journal


def run_id(journal: Journal) -> str:
    """A random id of this run directory, tagging the LLM calls it paid for (in the shared cache)."""
    import uuid

    rid = journal.meta("run_id")
    if rid is None:
        rid = uuid.uuid4().hex
        journal.set_meta("run_id", rid)
    return rid


def next_invocation(journal: Journal) -> int:
    """This invocation's number in the run directory (timed figures carry it, so mixing is visible)."""
    n = int(journal.meta("invocations") or 0) + 1
    journal.set_meta("invocations", str(n))
    return n


def check_dataset(journal: Journal, run_dir: Path, dataset: Dataset) -> None:
    """Refuse to mix results of different datasets in one run directory (checked in the journal,
    which exists from the first answer on, so a killed first run is covered too)."""
    fp = dataset.fingerprint()
    old = journal.meta("dataset_fingerprint")
    if old is None:
        journal.set_meta("dataset_fingerprint", fp)
    elif old != fp:
        raise RagsweepError(
            f"{run_dir}: holds a run over another dataset (fingerprint {old}, now {fp}); "
            "pass --fresh to start over or change the spec's name"
        )
