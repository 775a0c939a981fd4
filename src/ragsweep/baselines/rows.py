"""Which rows of a table are reference baselines, and the order they are shown in (pure; DataFrames or the
row dicts of ``summary.csv``). A baseline's row has its kind in the ``baseline`` column; a configuration's is
empty there (NaN in a DataFrame, "" in the csv), and a run without baselines has no such column."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ragsweep.baselines.contexts import KINDS

if TYPE_CHECKING:
    import pandas as pd

COLUMN = "baseline"


def kind_of(row: Mapping) -> str | None:
    """The row's baseline kind, None for a configuration."""
    v = row.get(COLUMN)
    return v if isinstance(v, str) and v else None


def rank(kind: str) -> int:
    """Where a baseline kind is shown: no_retrieval, oracle, full_document (the floor, the ceiling, then the
    long-context reader); an unknown kind last."""
    return KINDS.index(kind) if kind in KINDS else len(KINDS)


def partition(rows: Iterable[Mapping]) -> tuple[list, list]:
    """``(configurations, references)`` of row dicts, each in its given order but the references by ``rank``."""
    rows = list(rows)
    refs = sorted((r for r in rows if kind_of(r)), key=lambda r: rank(kind_of(r) or ""))
    return [r for r in rows if not kind_of(r)], refs


def configurations(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows that may be chosen, compared and tested (all of them in a run without baselines)."""
    if COLUMN not in frame.columns:
        return frame
    return frame[frame[COLUMN].isna() | frame[COLUMN].eq("")]


def references(frame: pd.DataFrame) -> pd.DataFrame:
    """The baselines' rows, by ``rank`` of their kind (empty in a run without baselines)."""
    if COLUMN not in frame.columns:
        return frame.iloc[0:0]
    refs = frame[frame[COLUMN].notna() & frame[COLUMN].ne("")]
    return refs.iloc[sorted(range(len(refs)), key=lambda i: (rank(str(refs[COLUMN].iloc[i])), i))]


def among(frame: pd.DataFrame, config_ids) -> pd.DataFrame:
    """The rows of ``config_ids`` and of every reference baseline (a search's verdict: its finalists, measured
    against the baselines)."""
    keep = frame["config_id"].isin(list(config_ids))
    if COLUMN in frame.columns:
        keep |= frame[COLUMN].notna() & frame[COLUMN].ne("")
    return frame[keep]
