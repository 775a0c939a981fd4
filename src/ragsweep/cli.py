"""The ``ragsweep`` command line. Heavy libraries are imported inside commands so --help is instant."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperCommand

from ragsweep.run_dir import RunDir  # a dataclass of paths: nothing heavy

app = typer.Typer(
    add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
    help="Sweep chunking x embedding x retrieval configurations for RAG and score every one.",
)


@app.callback()
def _options(
    verbose: bool = typer.Option(False, "--verbose", help="show libraries' log lines (INFO and above) on stderr; "
                                 "hidden by default"),
) -> None:
    from ragsweep.library_logs import quiet_libraries

    quiet_libraries(verbose)


def _fail(exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2)


def _console():
    from rich.console import Console

    # Logs and CI are not terminals: give tables room instead of rich's 80-column default.
    return Console(stderr=False, width=None if sys.stdout.isatty() else 160)


def _with_executor(spec, executor: str | None, ray_address: str | None):
    """The spec with ``--executor`` / ``--ray-address`` applied."""
    from ragsweep.errors import RagsweepError

    if executor not in (None, "local", "ray"):
        raise RagsweepError(f"--executor: {executor!r} is not local or ray")
    if ray_address is not None and executor == "local":
        raise RagsweepError("--ray-address: joins a Ray cluster, which --executor local does not use; drop one of them")
    update: dict = {}
    if executor is not None or ray_address is not None:
        update["executor"] = executor or "ray"
    if ray_address is not None:
        update["ray"] = spec.ray.model_copy(update={"address": ray_address})
    return spec.model_copy(update=update) if update else spec


@app.command()
def run(
    spec: Path = typer.Argument(..., help="YAML sweep spec"),
    fresh: bool = typer.Option(False, "--fresh", help="discard this sweep's previous results and start over"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="cache directory (default: spec's cache_dir or "
                                         ".ragsweep/cache)"),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="use only the first N questions"),
    out: Optional[Path] = typer.Option(None, "--out", help="run directory (default: OUTPUT_DIR/NAME from the spec)"),
    no_progress: bool = typer.Option(False, "--no-progress", help="hide progress bars"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the LLM calls, tokens and cost per stage that the "
                                 "run would need, and spend nothing"),
    budget: Optional[float] = typer.Option(None, "--budget", min=0, help="stop cleanly before this invocation's "
                                           "LLM spending would pass USD (finished work is kept; exit code 4)"),
    executor: Optional[str] = typer.Option(None, "--executor", help="local or ray (default: the spec's executor)"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="join this Ray cluster (host:port, 'auto' "
                                              "or ray://host:port; implies --executor ray); without it Ray starts "
                                              "on this machine"),
) -> None:
    """Run (or resume) a sweep: chunk, index, answer every question with every configuration, score;
    then, with a stage2 section, LLM-judge the configurations stage 1 selects.

    Exit codes: 0 complete, 2 error (bad spec, key refused, ...), 3 finished with failures (the same
    command again retries them, except prompts over the context window), 4 stopped by --budget.
    """
    from ragsweep.errors import RagsweepError

    stopped_by_budget = None
    try:
        from ragsweep.config import load_spec

        s = _with_executor(load_spec(spec), executor, ray_address)
        console = _console()
        if dry_run:
            from ragsweep.pipelines.estimate import estimate_run
            from ragsweep.pipelines.estimate_view import print_estimate

            print_estimate(estimate_run(s, run_dir=out, cache_dir=cache, limit=limit), console)
            if s.search.searching:
                console.print(f"  search: {s.search.strategy} answers only its trials (validation questions) and "
                              f"{s.search.finalists} finalists (test): the figures above are for the whole grid, "
                              "an upper bound; --budget stops the run before it spends more")
            return
        from ragsweep.llm.budget import BudgetExhausted
        from ragsweep.sweep import SweepRequest, run_sweep

        try:
            run_dir = run_sweep(SweepRequest(s, run_dir=out, cache_dir=cache, fresh=fresh, limit=limit,
                                             progress=not no_progress and sys.stdout.isatty(), console=console,
                                             budget=budget))
        except BudgetExhausted as exc:
            stopped_by_budget = exc
            run_dir = Path(out or s.default_run_dir())
        console.print(f"results: {run_dir}/ (manifest.json, records.parquet, summary.csv, comparisons.csv, "
                      f"verdict.json); HTML report: ragsweep report {run_dir}")
    except RagsweepError as exc:
        _fail(exc)
    if stopped_by_budget is not None:
        typer.echo(f"stopped: {stopped_by_budget}", err=True)
        raise typer.Exit(4)
    manifest = json.loads(RunDir(run_dir).manifest.read_text(encoding="utf-8"))
    if manifest["status"] != "complete":
        from ragsweep.pipelines.outputs.answer_notes import incomplete_line

        typer.echo(incomplete_line(manifest["invocations"][-1], run_dir), err=True)
        raise typer.Exit(3)


VALIDATE_HELP = "Check a spec (schema, files, dataset) and list the configurations it expands to."


class _SpecKeysHelp(TyperCommand):
    """``validate --help`` ends with the spec's keys, read from the schema only when help is shown."""

    def format_help(self, ctx, formatter) -> None:
        from ragsweep.spec_keys import spec_keys_text

        self.help = VALIDATE_HELP + "\n\n" + spec_keys_text()
        super().format_help(ctx, formatter)


@app.command(help=VALIDATE_HELP, cls=_SpecKeysHelp)
def validate(spec: Path = typer.Argument(..., help="YAML sweep spec")) -> None:
    """Check a spec (schema, files, dataset) and list the configurations it expands to."""
    from ragsweep.errors import RagsweepError

    try:
        from ragsweep.config import load_spec
        from ragsweep.pipelines.grid import expand

        s = load_spec(spec)
        from ragsweep.pipelines.preflight import check_llm_settings

        check_llm_settings(s)  # metric names and prompt files: what run would refuse, validate refuses
        configs = expand(s)
        from ragsweep.datasets.load import load_dataset

        ds = load_dataset(s.dataset, report_dir=s.default_run_dir())
        if s.adaptive:  # the labels map every question and each class has validation questions to learn from
            from ragsweep.pipelines.stages.adaptive import check_classifiers

            check_classifiers(s, ds)
    except RagsweepError as exc:
        _fail(exc)
    from ragsweep.datasets.validation import evidence_lines

    typer.echo(f"{spec}: valid. dataset {ds.name}: {len(ds.documents)} documents, {len(ds.questions)} questions "
               f"(fingerprint {ds.fingerprint()})")
    for note in ds.notes:
        typer.echo(f"  note: {note}")
    for line in evidence_lines(ds, s.default_run_dir()):
        typer.echo(line)
    typer.echo(f"{len(configs)} configurations:")
    for c in configs:
        typer.echo(f"  {c.config_id}")


_METRIC_HELP = ("metric of the verdict, the heatmap and the significance matrix (a column of summary.csv; "
                "default: the spec's scoring.metric)")
_SPLIT_HELP = ("questions the figures use: test (final figures), validation (used to select stage-2 "
               "configurations) or all")


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
        _fail(RagsweepError(f"--split: this run has no {split} questions (it has: {', '.join(have + ['all'])}); "
                            "choose one of those"))
    return metric


def _headless() -> None:
    """Figures go to files: matplotlib's Agg backend, no display needed."""
    import matplotlib

    matplotlib.use("Agg")


def _status_line(run) -> str:
    ds = run.meta.get("dataset", {})
    return (f"{run.describe()}; dataset {ds.get('name')} {ds.get('fingerprint')}; "
            f"generator {run.meta.get('generator', {}).get('label')}")


@app.command()
def show(
    run_dir: Path = typer.Argument(..., help="run directory"),
    metric: Optional[str] = typer.Option(None, "--metric", help="metric of the verdict and the sort (default: "
                                         "the spec's scoring.metric)"),
    split: str = typer.Option("test", "--split", help="questions of the table: test (final figures; with the "
                              "validation means beside them), validation (where configurations are chosen) or all"),
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
    print_summary(run.split(split), console, title=f"{run.name} ({split} questions)",
                  metrics=[metric] + [m for m in TABLE_METRICS if m != metric],
                  validation=run.split("validation") if split == "test" else None)


@app.command()
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


@app.command()
def plot(
    run_dir: Path = typer.Argument(..., help="run directory"),
    out: Path = typer.Option(..., "--out", help="directory for the figure files"),
    fmt: str = typer.Option("png", "--format", help="png, svg or pdf"),
    metric: Optional[str] = typer.Option(None, "--metric", help=_METRIC_HELP),
    split: str = typer.Option("test", "--split", help=_SPLIT_HELP),
) -> None:
    """Export each figure of the report as a file (matplotlib): OUT/<figure>.<format>."""
    from ragsweep.errors import RagsweepError
    from ragsweep.results.figures import FORMATS, save_figures

    if fmt not in FORMATS:
        _fail(RagsweepError(f"--format: {fmt!r}; choose one of {', '.join(FORMATS)}"))
    run = _load(run_dir)
    metric = _check_metric_split(run, metric, split)
    if out.exists() and not out.is_dir():
        _fail(RagsweepError(f"--out: {out} is a file; give a directory"))
    typer.echo(_status_line(run))
    _headless()
    try:
        for path in save_figures(run, out, fmt, metric, split):
            typer.echo(f"  {path}")
    except OSError as exc:
        _fail(RagsweepError(f"--out: cannot write figures to {out} ({exc.strerror or exc}); choose a writable "
                            "directory"))


@app.command()
def compare(
    run_a: Path = typer.Argument(..., help="first run directory (A)"),
    run_b: Path = typer.Argument(..., help="second run directory (B)"),
    metric: Optional[list[str]] = typer.Option(None, "--metric", help="metric(s) to compare (repeatable; default: "
                                               "BERTScore F1 rescaled, nDCG, hit, MRR, span recall, and judges "
                                               "present in both)"),
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


@app.command()
def ask(
    run_dir: Path = typer.Argument(..., help="run directory"),
    config_id: str = typer.Argument(..., help="configuration id, e.g. sentence512-minilm-fusion-k5"),
    question: str = typer.Argument(..., help="the question"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="cache directory (default: the one the run used)"),
    qid: Optional[str] = typer.Option(None, "--qid", help="mark the sources overlapping this dataset question's "
                                      "gold evidence (default: the dataset question with the same text, if any)"),
) -> None:
    """Answer a question with one configuration of a run; show its sources with ranks, scores, PDF pages
    and, for a question of the run's dataset, which overlap its gold evidence."""
    from ragsweep.errors import RagsweepError

    try:
        from ragsweep.results.ask_view import ask_run

        result = ask_run(run_dir, config_id, question, cache=cache, qid=qid)
    except RagsweepError as exc:
        _fail(exc)
    from ragsweep.results.ask_view import print_ask

    print_ask(result, _console())


from ragsweep.generate.cli_command import generate  # noqa: E402 (commands of their own modules; typer only)
from ragsweep.judges_cli import app as judges_app  # noqa: E402

app.command()(generate)
app.add_typer(judges_app, name="judges")


def main() -> None:
    from ragsweep.process_exit import run_then_exit

    run_then_exit(app)


if __name__ == "__main__":
    main()
