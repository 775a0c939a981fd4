"""``ragsweep show``, ``report``, ``plot`` and ``compare``: looking at finished, partial or killed runs (typer only
at import; ``cli`` registers them)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ragsweep.cli_common import console as _console
from ragsweep.cli_common import fail as _fail
from ragsweep.run_dir import RunDir

_METRIC_HELP = (
    "metric of the verdict, the heatmap and the significance matrix (a column of summary.csv; "
    "default: the spec's scoring.metric)"
)
_SPLIT_HELP = (
    "questions the figures use: test (final figures), validation (used to select stage-2 configurations) or all"
)


def _load(run_dir: Path):
    """A run directory as ``RunData``; exit 2 with one line if it cannot be read."""
    from ragsweep.errors import RagsweepError
    from ragsweep.results.run import load_run

    try:
        return load_run(run_dir)
    except RagsweepError as exc:
        _fail(exc)


def _check_metric_split(run, metric: str | None, split: str) -> str:
    """The metric to use (``--metric``, else the spec's ``scoring.metric``), after checking both options."""
    from ragsweep.errors import RagsweepError
    from ragsweep.results.verdict_view import default_metric

    metric = metric or default_metric(run)

    if split not in ("test", "validation", "all"):
        _fail(RagsweepError(f"--split: {split!r}; choose test, validation or all"))
    ranked = sorted(c[:-3] for c in run.summary.columns if c.endswith("_lo") and not c.endswith("_ms_lo"))
    if ranked and metric not in ranked:
        _fail(RagsweepError(f"--metric: {metric!r} is not a metric of this run; choose one of {', '.join(ranked)}"))
    if not run.summary.empty and run.split(split).empty:
        have = sorted(set(run.summary["split"]) - {"all"})
        _fail(
            RagsweepError(
                f"--split: this run has no {split} questions (it has: {', '.join(have + ['all'])}); choose one of those"
            )
        )
    return metric


def _headless() -> None:
    """Figures go to files: matplotlib's Agg backend, no display needed."""
    import matplotlib

    matplotlib.use("Agg")


def _status_line(run) -> str:
    ds = run.meta.get("dataset", {})
    return (
        f"{run.describe()}; dataset {ds.get('name')} {ds.get('fingerprint')}; "
        f"generator {run.meta.get('generator', {}).get('label')}"
    )


def show(
    run_dir: Path = typer.Argument(..., help="run directory"),
    metric: Optional[str] = typer.Option(
        None, "--metric", help="metric of the verdict and the sort (default: the spec's scoring.metric)"
    ),
    split: str = typer.Option(
        "test",
        "--split",
        help="questions of the table: test (final figures; with the "
        "validation means beside them), validation (where configurations are chosen) or all",
    ),
) -> None:
    """Print a run's verdict (the configuration to use, chosen on validation and reported on test, the
    ones tied with it, and at what cost) and its summary table; works on partial or killed runs."""
    run = _load(run_dir)
    from ragsweep.pipelines.outputs.verdict_text import verdict_lines
    from ragsweep.results.verdict_view import run_verdict

    metric = _check_metric_split(run, metric, split)
    from ragsweep.pipelines.outputs.columns import TABLE_METRICS
    from ragsweep.pipelines.outputs.table import print_summary
    from ragsweep.results.run_notes import run_notes

    console = _console()
    console.print(_status_line(run))
    for line in run_notes(run):
        console.print(line, markup=False, soft_wrap=True)
    if not run.records.empty:
        for line in verdict_lines(run_verdict(run, metric), run.ci_label):
            console.print(line)
    from ragsweep.results.human_labels import ppi_table, print_ppi
    from ragsweep.results.judge_status import print_judges

    print_judges(run, console)
    if (ppi := ppi_table(run)) is not None and not ppi.empty:
        print_ppi(ppi, console)
    if run.meta.get("search"):
        from ragsweep.pipelines.outputs.search_text import search_lines

        for line in search_lines(run.meta["search"]):
            console.print(line)
    if run.meta.get("adaptive"):
        from ragsweep.pipelines.stages.adaptive import describe

        for line in describe(run.meta["adaptive"]):
            console.print(f"adaptive {line}")
    if any(inv.get("chunk_contexts") for inv in run.meta.get("invocations") or []):
        from ragsweep.pipelines.stages.chunk_context import describe as describe_contexts

        for line in describe_contexts(run.meta["invocations"]):
            console.print(f"chunk contexts {line}")
    print_summary(
        run.split(split),
        console,
        title=f"{run.name} ({split} questions)",
        metrics=[metric] + [m for m in TABLE_METRICS if m != metric],
        validation=run.split("validation") if split == "test" else None,
    )


def report(
    run_dir: Path = typer.Argument(..., help="run directory"),
    out: Optional[Path] = typer.Option(None, "--out", help="HTML file to write (default: RUN/report.html)"),
    metric: Optional[str] = typer.Option(None, "--metric", help=_METRIC_HELP),
    split: str = typer.Option("test", "--split", help=_SPLIT_HELP),
    against: Optional[Path] = typer.Option(None, "--against", help="add the ranking agreement with this other run"),
) -> None:
    """Write a self-contained HTML report of a run (works offline): summary with CIs, BERTScore
    violins, retrieval and judge metrics, splitter x retriever heatmap, significance matrix, cost
    and latency, and a per-question explorer."""
    run = _load(run_dir)
    metric = _check_metric_split(run, metric, split)
    from ragsweep.errors import RagsweepError
    from ragsweep.results.report.build import write_report

    _headless()
    try:
        path = write_report(run, out or RunDir(run_dir).report, metric, split, _load(against) if against else None)
    except RagsweepError as exc:
        _fail(exc)
    typer.echo(_status_line(run))
    typer.echo(f"report: {path} ({path.stat().st_size / 1e6:.1f} MB)")


def plot(
    run_dir: Path = typer.Argument(..., help="run directory"),
    out: Path = typer.Option(..., "--out", help="directory for the figure files"),
    fmt: str = typer.Option("png", "--format", help="png, svg or pdf; several comma-separated (png,pdf): drawn once"),
    metric: Optional[str] = typer.Option(None, "--metric", help=_METRIC_HELP),
    split: str = typer.Option("test", "--split", help=_SPLIT_HELP),
) -> None:
    """Export each figure of the report as a file (matplotlib): OUT/<figure>.<format>."""
    from ragsweep.errors import RagsweepError
    from ragsweep.results.figures import FORMATS, save_figures

    formats = list(dict.fromkeys(f.strip().lower() for f in fmt.split(",")))
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        _fail(RagsweepError(f"--format: {bad[0]!r}; choose one or more of {', '.join(FORMATS)} (comma-separated)"))
    run = _load(run_dir)
    metric = _check_metric_split(run, metric, split)
    if out.exists() and not out.is_dir():
        _fail(RagsweepError(f"--out: {out} is a file; give a directory"))
    typer.echo(_status_line(run))
    _headless()
    try:
        for path in save_figures(run, out, formats, metric, split):
            typer.echo(f"  {path}")
    except OSError as exc:
        _fail(
            RagsweepError(f"--out: cannot write figures to {out} ({exc.strerror or exc}); choose a writable directory")
        )


def compare(
    run_a: Path = typer.Argument(..., help="first run directory (A)"),
    run_b: Path = typer.Argument(..., help="second run directory (B)"),
    metric: Optional[list[str]] = typer.Option(
        None,
        "--metric",
        help="metric(s) to compare (repeatable; default: "
        "BERTScore F1 rescaled, nDCG, hit, MRR, span recall, and judges "
        "present in both)",
    ),
    split: str = typer.Option("test", "--split", help="questions compared: test, validation or all"),
    csv: Optional[Path] = typer.Option(None, "--csv", help="also write the table to this CSV (+ <stem>.ranking.csv)"),
) -> None:
    """Line up the configurations present in both runs and show B - A per metric, with paired tests
    (exact sign-flip, sign test or t-test; Holm-corrected) on the questions both runs answered."""
    from ragsweep.errors import RagsweepError
    from ragsweep.results.compare import compare_runs, print_comparison, write_csv

    a, b = _load(run_a), _load(run_b)
    if split not in ("test", "validation", "all"):
        _fail(RagsweepError(f"--split: {split!r}; choose test, validation or all"))
    try:
        result = compare_runs(a, b, metrics=metric or None, split=split)
    except RagsweepError as exc:
        _fail(exc)
    console = _console()
    print_comparison(result, console)
    if csv is not None:
        try:
            ranking_csv = write_csv(result, csv)  # and <stem>.ranking.csv when there is a ranking table
        except OSError as exc:
            _fail(RagsweepError(f"--csv: cannot write {csv} ({exc.strerror or exc}); choose a writable path"))
        console.print(f"table: {csv}" + ("" if result.ranking is None else f"; ranking agreement: {ranking_csv}"))
