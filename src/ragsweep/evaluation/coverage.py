"""How many of its questions each configuration is missing: answers that failed (an LLM call, a context
window, a killed server) or were never made. A verdict on partial data says so; a configuration missing more
than ``scoring.max_missing`` of its questions is left out of it, since its mean is over whichever questions
happened to survive and its paired tests over a few (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

SPLITS = ("validation", "test")


def missing_questions(records: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """``config_id -> (missing, questions)`` over the validation and test questions any configuration was asked
    (the questions of this run), a missing one being one with no answer row or only a failed one."""
    r = records[records["split"].isin(SPLITS)] if "split" in records.columns else records
    if r.empty:
        return {}
    asked = set(r["qid"].astype(str))
    ok = r[r["error"].isna()] if "error" in r.columns else r
    answered = ok.groupby("config_id")["qid"].agg(lambda s: set(s.astype(str)))
    out = {}
    for cid in sorted(set(r["config_id"].astype(str))):
        have = answered.get(cid, set())
        out[cid] = (len(asked - have), len(asked))
    return out


def too_incomplete(missing: dict[str, tuple[int, int]], max_share: float) -> list[str]:
    """The configurations missing more than ``max_share`` of their questions, in id order."""
    return sorted(c for c, (m, n) in missing.items() if n and m / n > max_share)
