"""The verdict's pick against the reference baselines (``baselines:``): each baseline's mean with its CI on the
questions the pick is reported on, the paired difference pick - baseline with its CI, and the pick as a share of
the baseline (what "the pick reaches 78 % of oracle" says). Reference points, not a family of tests: nothing here
is corrected for multiplicity or enters the choice."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def against_baselines(
    refs: pd.DataFrame,
    chosen: pd.DataFrame,
    metric: str,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[dict]:
    """``refs``: the baselines' rows (config_id, baseline, qid, ``metric``) on the reported questions; ``chosen``:
    the pick's rows there. One dict per baseline, in the order of ``refs``."""
    from ragsweep.evaluation.bootstrap import bootstrap_ci
    from ragsweep.evaluation.significance import paired_difference

    mine = chosen.set_index("qid")[metric].astype(float)
    pick = float(mine.mean()) if len(mine) else math.nan
    from ragsweep.baselines.rows import rank

    out = []
    groups = sorted(refs.groupby("config_id", sort=False), key=lambda g: rank(str(g[1]["baseline"].iloc[0])))
    for config_id, rows in groups:
        values = rows.set_index("qid")[metric].astype(float).dropna()
        mean, lo, hi = bootstrap_ci(values.to_numpy(), n_boot, confidence, seed) if len(values) else (math.nan,) * 3
        shared = mine.index.intersection(values.index)
        diff = paired_difference(mine[shared].to_numpy(), values[shared].to_numpy(), n_boot, confidence, seed)
        out.append(
            {
                "baseline": str(rows["baseline"].iloc[0]),
                "config_id": str(config_id),
                "n": int(len(values)),
                "mean": _none(mean),
                "lo": _none(lo),
                "hi": _none(hi),
                "diff": _none(diff.diff),
                "diff_lo": _none(diff.diff_lo),
                "diff_hi": _none(diff.diff_hi),
                "share": _none(pick / mean) if mean and mean > 0 and not math.isnan(pick) else None,
            }
        )
    return out


def _none(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)
