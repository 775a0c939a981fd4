"""A trial's objective values from its records on the validation questions: quality (the metric's mean
over the questions it answered), latency (median retrieval + generation ms per question) and cost (LLM
dollars per question, answering and retrieving)."""

from __future__ import annotations

import math

from ragsweep.search.trials import Outcome


def outcomes(records, configs: list, objectives: list[str], metric: str, n_questions: int,
             seconds: float) -> dict[str, Outcome]:
    """Per configuration hash: its ``Outcome`` (``seconds``: the evaluation's wall time, shared equally by the
    configurations evaluated together). A configuration with no value of ``metric`` failed, with the first
    error its records give."""
    import pandas as pd

    share = seconds / max(1, len(configs))
    out = {}
    for c in configs:
        r = records[records["config_id"] == c.config_id] if not records.empty else records

        def col(name: str) -> pd.Series:
            return pd.to_numeric(r[name], errors="coerce") if name in r.columns else pd.Series(math.nan, index=r.index)

        errors = r["error"].dropna() if "error" in r.columns else pd.Series(dtype=object)
        quality = col(metric).dropna()
        usd = float(col("cost_usd").fillna(0).sum() + col("retrieval_cost_usd").fillna(0).sum())
        if quality.empty:
            reason = str(errors.iloc[0]) if len(errors) else f"no value of {metric}"
            out[c.config_hash] = Outcome(None, share, usd, len(r), len(errors), reason)
            continue
        latency = (col("retrieval_ms").fillna(0) + col("generation_ms").fillna(0)).median()
        values = {"quality": float(quality.mean()), "latency": float(latency),
                  "cost": usd / max(1, len(r))}
        out[c.config_hash] = Outcome({o: values[o] for o in objectives}, share, usd, len(r), len(errors))
    return out
