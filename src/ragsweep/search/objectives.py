"""A trial's objective values from its records on the validation questions: quality (the metric's mean
over the questions it answered), latency (median retrieval + generation ms per question) and cost (LLM
dollars per question, answering and retrieving)."""

from __future__ import annotations

import math

from ragsweep.search.trials import Outcome


def outcomes(
    records, configs: list, objectives: list[str], metric: str, seconds: float, dropped: dict[str, dict] | None = None
) -> dict[str, Outcome]:
    """Per configuration hash: its ``Outcome`` (``seconds``: the evaluation's wall time, shared by the
    configurations evaluated together in proportion to the questions each answered). A configuration with
    no value of ``metric`` failed, with the first error its records give; ``dropped``: those racing dropped."""
    import pandas as pd

    rows = {
        c.config_hash: (records[records["config_id"] == c.config_id] if not records.empty else records) for c in configs
    }
    total = sum(len(r) for r in rows.values())
    out = {}
    for c in configs:
        r = rows[c.config_hash]
        share = seconds * len(r) / total if total else seconds / max(1, len(configs))

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
        values = {"quality": float(quality.mean()), "latency": float(latency), "cost": usd / max(1, len(r))}
        out[c.config_hash] = Outcome(
            {o: values[o] for o in objectives},
            share,
            usd,
            len(r),
            len(errors),
            dropped=(dropped or {}).get(c.config_hash),
        )
    return out
