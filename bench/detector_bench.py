"""Benchmark: groundedness detectors and LLM judges against human labels, macro-F1 against latency.

Runs ``ragsweep judges evaluate`` (``groundedness.command.evaluate_labels``) on a labels file (default: the
shipped demo set, 96 answers in four categories: supported, unsupported, misattributed, partly supported).
Thresholds are tuned on the dev half and figures reported on the test half, with 95 % bootstrap CIs;
latency is the median per item, ``--repeat`` times (the median of the medians is printed). Offline
detectors always run (QuIP, MiniLM cosine); the LLM ones (faithfulness judge, claim-level verification,
correctness judge) run with ``--spec`` naming a real endpoint.

Usage: python bench/detector_bench.py [--labels demo] [--spec SPEC] [--repeat 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def main() -> None:
    from rich.console import Console

    from ragsweep.groundedness.command import EvaluationOptions, evaluate_labels
    from ragsweep.groundedness.table import print_result

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", default="demo")
    ap.add_argument("--spec", type=Path)
    ap.add_argument("--detectors")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    options = EvaluationOptions(
        spec_path=args.spec, detectors=args.detectors, dev_fraction=0.5, seed=0, cache=None, budget=None
    )
    runs = [evaluate_labels(args.labels, options, say=print) for _ in range(args.repeat)]
    result = runs[0]  # the figures other than latency are deterministic: identical in every repeat
    for row in result["rows"]:
        medians = [
            next(r for r in run["rows"] if r["detector"] == row["detector"])["ms_per_item"]["value"] for run in runs
        ]
        row["ms_per_item_repeats"] = medians
        print(
            f"{row['detector']}: median ms per item over {args.repeat} repeats: "
            f"{statistics.median(medians):.2f} ({', '.join(f'{m:.2f}' for m in medians)})"
        )
    print_result(result, Console(width=200))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
