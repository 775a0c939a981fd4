"""What the pick and the tied configurations cost: latency, LLM tokens and spending, index size (the verdict
names the fastest, cheapest and smallest among them)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def chunks_by_config(configs: list[dict], per_splitter: dict[str, int]) -> dict[str, int]:
    """Chunks in each configuration's index: its splitter's chunk count (``configs``: configuration labels)."""
    return {c["config_id"]: int(per_splitter[c["splitter"]]) for c in configs if c.get("splitter") in per_splitter}


def config_costs(records: pd.DataFrame, configs: list[str], chunks: dict[str, int] | None) -> list[dict]:
    """Per configuration: median latency per question (retrieval + generation, ms), mean LLM tokens
    per question (generation and retrieval: rewrites, reranking), total LLM cost (USD, when priced)
    and chunks in its index."""
    import pandas as pd

    out = []
    for c in configs:
        r = records[records["config_id"] == c]

        def col(name: str) -> pd.Series:  # a missing column (records of an older run) is all NaN
            return pd.to_numeric(r[name], errors="coerce") if name in r.columns else pd.Series(math.nan, index=r.index)

        lat = col("retrieval_ms").fillna(0) + col("generation_ms").fillna(0)
        tokens = col("prompt_tokens").fillna(0) + col("completion_tokens").fillna(0) + col("retrieval_tokens").fillna(0)
        cost = pd.concat([col("cost_usd"), col("retrieval_cost_usd")])
        out.append(
            {
                "config_id": c,
                "latency_ms": float(lat.median()) if len(lat) else math.nan,
                "tokens": float(tokens.mean()) if len(tokens) else math.nan,
                "cost_usd": float(cost.sum()) if cost.notna().any() else None,
                "chunks": (chunks or {}).get(c),
            }
        )
    return out


def argmin(costs: list[dict], key: str) -> str | None:
    """The configuration with the smallest ``key`` (ties: the first, i.e. the chosen or better-ranked one)."""
    have = [c for c in costs if c.get(key) is not None and not (isinstance(c[key], float) and math.isnan(c[key]))]
    if not have:
        return None
    return min(have, key=lambda c: c[key])["config_id"]
