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


def check_subsets(data: str, subsets: list[str]) -> None:
    """Exit with one line when ``data`` lacks one of ``subsets``."""
    for s in subsets:
        if not Path(data, "benchmarks", f"{s}.json").is_file():
            sys.exit(f"{data}: LegalBench-RAG subset {s} not found (expects benchmarks/{s}.json); pass --data")


def subset_limits(subsets: list[str], items: list[str], defaults: dict | None = None) -> dict[str, int | None]:
    """Each subset's ``--limit`` (``[SUBSET=]N``, repeatable: a later one wins), else its default (None: all)."""
    limits: dict[str, int | None] = {s: (defaults or {}).get(s) for s in subsets}
    for item in items:
        name, _, n = item.rpartition("=")
        limits.update({s: int(n) for s in subsets if name in ("", s)})
    return limits


def run_subsets(description: str, prefix: str, run_subset, print_subset) -> None:
    """The main of a benchmark over several subsets (``--subsets --top-k --limit --work --json``): for each
    subset ``run_subset(data, subset, top_k, limit, work)`` gives its figures, ``print_subset`` prints them."""
    import json
    import shutil
    import tempfile

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--subsets", default="privacy_qa,contractnli")
    ap.add_argument("--top-k", default="5", help="comma-separated, e.g. 5,10")
    ap.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="[SUBSET=]N",
        help="only the first N questions (ragsweep run --limit), of SUBSET or of every subset; repeatable",
    )
    ap.add_argument("--work", help="keep the specs, caches and run directories here (default: a temporary folder)")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args()
    subsets = [s for s in args.subsets.split(",") if s]
    check_subsets(args.data, subsets)
    top_k = [int(k) for k in args.top_k.split(",")]
    limits = subset_limits(subsets, args.limit)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix=prefix))
    work.mkdir(parents=True, exist_ok=True)
    out = []
    try:
        for s in subsets:
            out.append(run_subset(args.data, s, top_k, limits[s], work))
            print_subset(out[-1])
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"top_k": top_k, "subsets": out}, indent=2))
