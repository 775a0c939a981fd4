"""Do two runs hold the same results? Compares records.parquet, summary.csv and verdict.json of two run directories
value for value, leaving out what is measured rather than computed (latencies, and the verdict's fastest pick that
follows from them). Used to show that a refactor changed no result:

    ragsweep run specs/demo.yaml --cache /tmp/a-cache --out /tmp/a     # before the change
    ragsweep run specs/demo.yaml --cache /tmp/b-cache --out /tmp/b     # after it
    python bench/same_results.py /tmp/a /tmp/b

Exit 0 when identical, 1 with the differing columns / keys named, 2 when a directory is not a finished run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from ragsweep.metrics.catalogue import names

MEASURED = tuple(names("latency"))


def measured(column: str) -> bool:
    return column.startswith(MEASURED) or column == "generation_wall_ms" or column == "generation_queue_ms"


def differences(a: Path, b: Path) -> list[str]:
    out = []
    for name, read in (("records.parquet", pd.read_parquet), ("summary.csv", pd.read_csv)):
        x, y = read(a / name), read(b / name)
        if list(x.columns) != list(y.columns) or len(x) != len(y):
            out.append(f"{name}: columns or rows differ ({x.shape} vs {y.shape})")
            continue
        for col in x.columns:
            if not measured(col) and x[col].map(repr).tolist() != y[col].map(repr).tolist():
                out.append(f"{name}: {col}")
    va, vb = (json.loads((d / "verdict.json").read_text()) for d in (a, b))
    for v in (va, vb):
        v.pop("fastest", None)
        for c in v.get("costs") or []:
            c.pop("latency_ms", None)
    out += [f"verdict.json: {k}" for k in sorted(set(va) | set(vb)) if va.get(k) != vb.get(k)]
    return out


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: python bench/same_results.py RUN_A RUN_B", file=sys.stderr)
        return 2
    a, b = map(Path, sys.argv[1:3])
    for d in (a, b):
        missing = [f for f in ("records.parquet", "summary.csv", "verdict.json") if not (d / f).is_file()]
        if missing:
            print(f"error: {d}: not a finished run directory (no {', '.join(missing)})", file=sys.stderr)
            return 2
    diff = differences(a, b)
    print(
        "\n".join(diff)
        if diff
        else f"identical: records, summary and verdict of {a} and {b} (measured times left out: {', '.join(MEASURED)})"
    )
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
