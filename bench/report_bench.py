"""Benchmark: how long looking at a run takes, and how big the report is.

For each run directory given (default: runs/demo, made by `make demo`), as the median of
``--repeat`` runs:
  - `load_run` (in process);
  - each figure: drawing it and writing it as SVG (in process);
  - the report's size, and how much of it is figures and explorer data;
  - whole commands, as a user runs them (process start and imports included): `ragsweep report`,
    `ragsweep plot --format png`, `ragsweep compare RUN RUN`, `ragsweep show`.

Usage: python bench/report_bench.py [RUN ...] [--repeat 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import io
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "ragsweep.cli"]


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def command(*args: str) -> None:
    proc = subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(args)} failed: {proc.stderr.strip()[-500:]}")


def bench_run(run_dir: Path, repeat: int) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ragsweep.errors import RagsweepError
    from ragsweep.results import load_run
    from ragsweep.results.figures import _specs
    from ragsweep.results.figures.style import context

    try:
        run = load_run(run_dir)
    except RagsweepError as exc:
        sys.exit(f"error: {exc}")
    out: dict = {
        "run": str(run_dir),
        "configurations": int(run.records["config_id"].nunique()),
        "questions": int(run.records["qid"].nunique()),
        "records": len(run.records),
        "load_run_s": median_time(lambda: load_run(run_dir), repeat),
        "figures_s": {},
    }
    for spec in _specs():

        def draw_and_save():
            with context():
                fig = spec.draw(run, "bertscore_f1_rescaled", "test")
                if fig is not None:
                    fig.savefig(io.BytesIO(), format="svg")
                    plt.close(fig)

        out["figures_s"][spec.name] = median_time(draw_and_save, repeat)
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "report.html"
        out["report_cmd_s"] = median_time(lambda: command("report", str(run_dir), "--out", str(html)), repeat)
        text = html.read_text(encoding="utf-8")
        images = sum(len(m) for m in re.findall(r'src="data:image/[^"]+"', text))
        data = re.search(r'id="explorer-data">(.*?)</script>', text, re.S)
        out["report_mb"] = len(text.encode()) / 1e6
        out["report_figures_mb"] = images / 1e6
        out["report_explorer_mb"] = len(data.group(1).encode()) / 1e6 if data else 0.0
        out["plot_png_cmd_s"] = median_time(lambda: command("plot", str(run_dir), "--out", f"{tmp}/png"), repeat)
    out["compare_cmd_s"] = median_time(lambda: command("compare", str(run_dir), str(run_dir)), repeat)
    out["show_cmd_s"] = median_time(lambda: command("show", str(run_dir)), repeat)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*", type=Path, default=[ROOT / "runs" / "demo"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = ap.parse_args()
    if args.repeat < 1:
        sys.exit("error: --repeat must be at least 1")
    results = [bench_run(r, args.repeat) for r in args.runs]
    for r in results:
        print(
            f"{r['run']}: {r['configurations']} configurations x {r['questions']} questions = {r['records']} records "
            f"(median of {args.repeat})"
        )
        print(
            f"  load_run {r['load_run_s']:.2f} s; report {r['report_mb']:.1f} MB "
            f"(figures {r['report_figures_mb']:.1f}, explorer data {r['report_explorer_mb']:.1f})"
        )
        print(
            f"  commands: report {r['report_cmd_s']:.1f} s, plot png {r['plot_png_cmd_s']:.1f} s, "
            f"compare {r['compare_cmd_s']:.1f} s, show {r['show_cmd_s']:.1f} s"
        )
        figs = ", ".join(f"{k} {v:.2f}" for k, v in r["figures_s"].items())
        print(f"  figures (draw + SVG, s): {figs}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
