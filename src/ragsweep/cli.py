"""The ``ragsweep`` command line. Heavy libraries are imported inside commands so --help is instant."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperCommand

from ragsweep.cli_common import console as _console
from ragsweep.cli_common import fail as _fail
from ragsweep.results_cli import compare, plot, report, show
from ragsweep.run_dir import RunDir  # a dataclass of paths: nothing heavy

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Sweep chunking x embedding x retrieval configurations for RAG and score every one.",
)


@app.callback()
def _options(
    verbose: bool = typer.Option(
        False, "--verbose", help="show libraries' log lines (INFO and above) on stderr; hidden by default"
    ),
) -> None:
    from ragsweep.library_logs import quiet_libraries

    quiet_libraries(verbose)


def _with_executor(spec, executor: str | None, ray_address: str | None):
    """The spec with ``--executor`` / ``--ray-address`` applied."""
    from ragsweep.config.services import EXECUTORS
    from ragsweep.errors import RagsweepError

    if executor is not None and executor not in EXECUTORS:
        raise RagsweepError(f"--executor: {executor!r} is not one of {', '.join(EXECUTORS)}")
    if ray_address is not None and executor is not None and not EXECUTORS[executor].has("cluster"):
        raise RagsweepError(
            f"--ray-address: joins a Ray cluster, which --executor {executor} does not use; drop one of them"
        )
    update: dict = {}
    if executor is not None or ray_address is not None:
        update["executor"] = executor or next(n for n, kind in EXECUTORS.items() if kind.has("cluster"))
    if ray_address is not None:
        update["ray"] = spec.ray.model_copy(update={"address": ray_address})
    return spec.model_copy(update=update) if update else spec


def _with_tracking(spec, mlflow: str | None):
    """The spec with ``--mlflow`` applied."""
    if mlflow is None:
        return spec
    from ragsweep.config.services import check_tracking_uri
    from ragsweep.errors import RagsweepError

    try:
        uri = check_tracking_uri(mlflow)
    except ValueError as exc:
        raise RagsweepError(f"--mlflow: {exc}") from None
    return spec.model_copy(update={"tracking": spec.tracking.model_copy(update={"mlflow": uri})})


@app.command()
def run(
    spec: Path = typer.Argument(..., help="YAML sweep spec"),
    fresh: bool = typer.Option(False, "--fresh", help="discard this sweep's previous results and start over"),
    cache: Optional[Path] = typer.Option(
        None, "--cache", help="cache directory (default: spec's cache_dir or .ragsweep/cache)"
    ),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="use only the first N questions"),
    out: Optional[Path] = typer.Option(None, "--out", help="run directory (default: OUTPUT_DIR/NAME from the spec)"),
    no_progress: bool = typer.Option(False, "--no-progress", help="hide progress bars"),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="print the LLM calls, tokens and cost per stage that the run would need, and spend nothing",
    ),
    budget: Optional[float] = typer.Option(
        None,
        "--budget",
        min=0,
        help="stop cleanly before this invocation's LLM spending would pass USD (finished work is kept; exit code 4)",
    ),
    executor: Optional[str] = typer.Option(None, "--executor", help="local or ray (default: the spec's executor)"),
    ray_address: Optional[str] = typer.Option(
        None,
        "--ray-address",
        help="join this Ray cluster (host:port, 'auto' "
        "or ray://host:port; implies --executor ray); without it Ray starts "
        "on this machine",
    ),
    mlflow: Optional[str] = typer.Option(
        None, "--mlflow", help="log the finished run to this MLflow tracking URI (default: the spec's tracking.mlflow)"
    ),
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

        s = _with_tracking(_with_executor(load_spec(spec), executor, ray_address), mlflow)
        console = _console()
        if dry_run:
            from ragsweep.pipelines.estimate import estimate_run
            from ragsweep.pipelines.estimate_view import print_estimate

            print_estimate(estimate_run(s, run_dir=out, cache_dir=cache, limit=limit), console)
            if s.search.searching:
                console.print(
                    f"  search: {s.search.strategy} answers only its trials (validation questions) and "
                    f"{s.search.finalists} finalists (test): the figures above are for the whole grid, "
                    "an upper bound; --budget stops the run before it spends more"
                )
            return
        from ragsweep.driver import SweepRequest, run_sweep
        from ragsweep.llm.budget import BudgetExhausted

        try:
            run_dir = run_sweep(
                SweepRequest(
                    s,
                    run_dir=out,
                    cache_dir=cache,
                    fresh=fresh,
                    limit=limit,
                    progress=not no_progress and sys.stdout.isatty(),
                    console=console,
                    budget=budget,
                )
            )
        except BudgetExhausted as exc:
            stopped_by_budget = exc
            run_dir = Path(out or s.default_run_dir())
        console.print(
            f"results: {run_dir}/ (manifest.json, records.parquet, summary.csv, comparisons.csv, "
            f"verdict.json); HTML report: ragsweep report {run_dir}"
        )
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

    typer.echo(
        f"{spec}: valid. dataset {ds.name}: {len(ds.documents)} documents, {len(ds.questions)} questions "
        f"(fingerprint {ds.fingerprint()})"
    )
    for note in ds.notes:
        typer.echo(f"  note: {note}")
    for line in evidence_lines(ds, s.default_run_dir()):
        typer.echo(line)
    from ragsweep.config import backend_default

    typer.echo(backend_default.line(s))
    typer.echo(f"{len(configs)} configurations:")
    for c in configs:
        typer.echo(f"  {c.config_id}")


for _command in (show, report, plot, compare):  # the results commands (results_cli), in --help's order
    app.command()(_command)


@app.command()
def ask(
    run_dir: Path = typer.Argument(..., help="run directory"),
    config_id: str = typer.Argument(..., help="configuration id, e.g. sentence512-minilm-fusion-k5"),
    question: str = typer.Argument(..., help="the question"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="cache directory (default: the one the run used)"),
    qid: Optional[str] = typer.Option(
        None,
        "--qid",
        help="mark the sources overlapping this dataset question's "
        "gold evidence (default: the dataset question with the same text, if any)",
    ),
) -> None:
    """Answer a question with one configuration of a run; show its sources with ranks, scores, PDF pages
    and, for a question of the run's dataset, which overlap its gold evidence (a follow-up of the dataset is
    asked with its conversation, as the sweep asked it)."""
    from ragsweep.errors import RagsweepError

    try:
        from ragsweep.results.ask_view import ask_run

        result = ask_run(run_dir, config_id, question, cache=cache, qid=qid)
    except RagsweepError as exc:
        _fail(exc)
    from ragsweep.results.ask_view import print_ask

    print_ask(result, _console())


from ragsweep.export_cli import export  # noqa: E402 (commands of their own modules; typer only)
from ragsweep.generate.cli_command import generate  # noqa: E402
from ragsweep.judges_cli import app as judges_app  # noqa: E402
from ragsweep.serve_cli import serve  # noqa: E402
from ragsweep.tracking_cli import track  # noqa: E402

app.command()(export)
app.command()(serve)
app.command()(track)
app.command()(generate)
app.add_typer(judges_app, name="judges")


def main() -> None:
    from ragsweep.process_exit import run_then_exit

    run_then_exit(app)


if __name__ == "__main__":
    main()
