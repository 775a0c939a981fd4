"""``ragsweep judges``: check judges and groundedness detectors against human labels (imports typer only)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ragsweep.cli_common import fail as _fail

app = typer.Typer(no_args_is_help=True, help="Check LLM judges and groundedness detectors against human labels.")


@app.command("evaluate")
def evaluate(
    labels: str = typer.Argument(
        ...,
        help="labels JSONL (question, contexts, answer, grounded and/or correctness) "
        "or demo (the shipped groundedness set)",
    ),
    spec: Optional[Path] = typer.Option(None, "--spec", help="a spec whose llm (or stage2.llm) runs the LLM judges"),
    detectors: Optional[str] = typer.Option(
        None,
        "--detectors",
        help="comma-separated: quip, cosine, "
        "llm_faithfulness, claims, llm_correctness (default: the offline ones, "
        "and the LLM ones with --spec)",
    ),
    dev_fraction: float = typer.Option(0.5, "--dev-fraction", help="share of items thresholds are tuned on"),
    seed: int = typer.Option(0, "--seed", help="the dev/test split and the bootstrap"),
    out: Optional[Path] = typer.Option(None, "--out", help="also write every figure and score to this JSON file"),
    cache: Optional[Path] = typer.Option(None, "--cache", help="cache directory (LLM replies)"),
    budget: Optional[float] = typer.Option(None, "--budget", min=0, help="stop before LLM spending would pass USD"),
    repeats: int = typer.Option(
        1,
        "--repeats",
        min=1,
        max=20,
        help="ask each LLM detector's judgement N times (own seeds; set the LLM's temperature above 0): its "
        "self-agreement (Krippendorff's alpha, CI) and the items that flip beside macro-F1, which is then of the "
        "repeats' mean",
    ),
) -> None:
    """Macro-F1, Cohen's kappa, AUROC and Spearman of each detector against the labels (thresholds tuned on a
    dev split, figures on test, bootstrap CIs), with latency and cost per item; with --repeats, how much each LLM
    detector disagrees with itself."""
    import json
    import sys

    from rich.console import Console

    from ragsweep.errors import RagsweepError

    console = Console(width=None if sys.stdout.isatty() else 200)
    try:
        from ragsweep.groundedness.command import EvaluationOptions, evaluate_labels

        options = EvaluationOptions(
            spec_path=spec,
            detectors=detectors,
            dev_fraction=dev_fraction,
            seed=seed,
            cache=cache,
            budget=budget,
            repeats=repeats,
        )
        result = evaluate_labels(labels, options, say=console.print)
        if out is not None:
            out.write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    except RagsweepError as exc:
        _fail(exc)
    except OSError as exc:
        _fail(RagsweepError(f"--out: cannot write {out} ({exc.strerror or exc}); choose a writable path"))
    from ragsweep.groundedness.table import print_result

    print_result(result, console)


@app.command("import")
def import_(
    run_dir: Path = typer.Argument(..., help="run directory (with stage-2 judgements)"),
    labels: Path = typer.Argument(
        ..., help="JSONL: config_id, qid, and grounded (true/false) and/or correctness (1-5)"
    ),
) -> None:
    """Keep human labels of a run's judged answers (RUN/human_labels.jsonl); show and report then print each judged
    metric with prediction-powered (PPI++) CIs next to the plain judge mean."""
    import sys

    from rich.console import Console

    from ragsweep.errors import RagsweepError
    from ragsweep.results.human_labels import import_labels, ppi_table, print_ppi
    from ragsweep.results.run import load_run

    try:
        run = load_run(run_dir)
        path = import_labels(run, labels)
        verdict = relabelled_verdict(run)
    except RagsweepError as exc:
        _fail(exc)
    console = Console(width=None if sys.stdout.isatty() else 200)
    console.print(f"kept {path}")
    if verdict is not None and verdict.ppi:
        console.print(f"verdict.json: the verdict by {verdict.metric} now carries the PPI++ figures of the labels")
    table = ppi_table(run)
    if table is not None and not table.empty:
        print_ppi(table, console)
    else:
        console.print(f"no configuration has {2} or more labelled answers yet: PPI needs at least 2 per configuration")


def relabelled_verdict(run):
    """The run's verdict again with its human labels (a judge they show to be no better than chance does not
    decide; the pick's and tied set's PPI++ figures), written to ``verdict.json`` (what failed kept as it was)."""
    import json

    from ragsweep.metrics.catalogue import label
    from ragsweep.pipelines.outputs.manifest import atomic
    from ragsweep.results.verdict_view import run_verdict
    from ragsweep.run_dir import RunDir

    path = RunDir(run.path).verdict
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    verdict = run_verdict(run)
    new = {
        **verdict.to_dict(),
        "flagged_note": verdict.flagged_note(label(verdict.metric)),
        "failed": old.get("failed"),
    }
    atomic(path, lambda p: p.write_text(json.dumps(new, indent=1, default=str), encoding="utf-8"))
    return verdict
