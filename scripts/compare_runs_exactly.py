"""Are two run directories' records and summaries identical, bit for bit, latencies aside?

usage: python scripts/compare_runs_exactly.py RUN_A RUN_B
Prints the differing columns (and a sample row) and exits 1 when anything differs; used to show
that a refactor left the demo's results unchanged and that executors agree.
"""

from __future__ import annotations

import json
import sys

import pandas as pd

TIMING = ("retrieval_ms", "query_embedding_ms", "generation_ms")


def _records(run: str) -> pd.DataFrame:
    df = pd.read_parquet(f"{run}/records.parquet")
    df = df.drop(columns=[c for c in df.columns if c in TIMING])
    return df.sort_values(["config_id", "qid"]).reset_index(drop=True)


def _summary(run: str) -> pd.DataFrame:
    df = pd.read_csv(f"{run}/summary.csv")
    df = df.drop(columns=[c for c in df.columns if c.startswith(TIMING)])
    return df.sort_values(["config_id", "split"]).reset_index(drop=True)


def _as_json(df: pd.DataFrame) -> list[str]:
    return [
        json.dumps(r, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v), sort_keys=True)
        for r in df.to_dict("records")
    ]


def main(a: str, b: str) -> int:
    bad = 0
    for name, load in (("records", _records), ("summary", _summary)):
        x, y = load(a), load(b)
        if list(x.columns) != list(y.columns) or len(x) != len(y):
            print(
                f"{name}: shapes differ: {x.shape} vs {y.shape}; columns only in one: "
                f"{sorted(set(x.columns) ^ set(y.columns))}"
            )
            bad += 1
            continue
        jx, jy = _as_json(x), _as_json(y)
        rows = [i for i in range(len(jx)) if jx[i] != jy[i]]
        cols = [c for c in x.columns if _as_json(x[[c]]) != _as_json(y[[c]])]
        print(f"{name}: {len(x)} rows x {len(x.columns)} columns; differing rows {len(rows)}, columns {cols}")
        if rows:
            print("  e.g.", jx[rows[0]][:400], "\n   vs", jy[rows[0]][:400])
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
