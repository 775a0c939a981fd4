"""What checking an exported folder costs when it is loaded (issue 42): ``load_pipeline(FOLDER)`` copies every
file ``SHA256SUMS`` lists into a private folder while hashing it, then opens the copy.

Prints, per folder: its size, the check-and-copy alone (``digests.working_copy``: seconds and MB/s), the whole
``load_pipeline`` (the check, the embedding model, the indexes) and a first new question, medians of
``--repeat`` loads in this process. ``--synthetic-mb N`` also times the check of a folder with one more listed
file of N MB (a large index), for the throughput at size. Run it on the code before the check (a worktree on
``PYTHONPATH``) for the load without it; the check-and-copy line is then absent.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/export_load_bench.py FOLDER [FOLDER...] --repeat 5 --synthetic-mb 512
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path


def _size_mb(root: Path) -> float:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6


def _time_copy(folder: Path, repeat: int) -> float | None:
    try:
        from ragsweep.export.digests import working_copy
    except ImportError:  # the code before the check
        return None
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        copy = working_copy(folder)
        times.append(time.perf_counter() - t0)
        shutil.rmtree(copy)
    return statistics.median(times)


def _time_load(folder: Path, repeat: int) -> tuple[float, float]:
    import ragsweep

    loads, asks = [], []
    for n in range(repeat):
        t0 = time.perf_counter()
        pipeline = ragsweep.load_pipeline(folder)
        t1 = time.perf_counter()
        pipeline.ask(f"Which clause covers the new case number {n}?", answer=False)
        asks.append(time.perf_counter() - t1)
        loads.append(t1 - t0)
        pipeline.close()
    return statistics.median(loads), statistics.median(asks)


def _synthetic(folder: Path, mb: int, repeat: int) -> float | None:
    """The check-and-copy of ``folder`` plus one listed file of ``mb`` MB of random bytes."""
    try:
        from ragsweep.export.digests import write_sums
    except ImportError:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big"
        shutil.copytree(folder, big)
        with (big / "index" / "large.bin").open("wb") as f:
            for _ in range(mb):
                f.write(os.urandom(1 << 20))
        write_sums(big)
        return _time_copy(big, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--synthetic-mb", type=int, default=0)
    args = parser.parse_args()
    print("| folder | size (MB) | check + copy (s) | MB/s | load_pipeline (s) | first new question (s) |")
    print("|---|---|---|---|---|---|")
    for folder in args.folders:
        size = _size_mb(folder)
        copy = _time_copy(folder, args.repeat)
        load, ask = _time_load(folder, args.repeat)
        check = "-" if copy is None else f"{copy:.3f}"
        rate = "-" if copy is None else f"{size / copy:.0f}"
        print(f"| {folder.name} | {size:.1f} | {check} | {rate} | {load:.3f} | {ask:.3f} |")
        if args.synthetic_mb:
            big = _synthetic(folder, args.synthetic_mb, args.repeat)
            if big is not None:
                mb = size + args.synthetic_mb
                print(f"| {folder.name} + {args.synthetic_mb} MB | {mb:.1f} | {big:.3f} | {mb / big:.0f} | | |")


if __name__ == "__main__":
    main()
