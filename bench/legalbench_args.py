"""Command-line arguments of the benchmarks over one LegalBench-RAG subset (``--data``, ``--repeat``, ``--json``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "legalbench-rag"


def parse_args(description: str, subset: str) -> argparse.Namespace:
    """Parse the arguments; exit with one line when ``--data`` does not hold ``subset``'s questions."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    if not Path(args.data, "benchmarks", f"{subset}.json").is_file():
        sys.exit(f"{args.data}: LegalBench-RAG not found (expects benchmarks/{subset}.json); pass --data")
    return args
