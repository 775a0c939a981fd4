"""``ragsweep generate``'s command-line options (the work is in ``generate.command``); imports typer only."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def fail(exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2)


def console_for_output():
    import sys

    from rich.console import Console

    return Console(stderr=False, width=None if sys.stdout.isatty() else 160)


def generate(
    source: str = typer.Argument(
        ...,
        help="a spec (its dataset.corpus, generate:, llm:, prices:), a folder of "
        "documents, a JSONL corpus (id, text) or demo",
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        help="questions file to write (JSONL; dataset.questions: {format: jsonl} "
        "reads it); OUT.generation.json and OUT.rejected.jsonl go next to it",
    ),
    questions: Optional[int] = typer.Option(
        None, "--questions", min=1, help="how many (default: generate.questions, 100)"
    ),
    generator: Optional[str] = typer.Option(
        None, "--generator", help="offline (no model) or llm (the spec's endpoint)"
    ),
    mix: Optional[str] = typer.Option(None, "--mix", help="weights per type, e.g. simple=0.6,out_of_scope=0.2"),
    seed: Optional[int] = typer.Option(None, "--seed", help="which passages and facts are drawn"),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="print the LLM calls, tokens and cost it would need, and spend nothing"
    ),
    budget: Optional[float] = typer.Option(
        None,
        "--budget",
        min=0,
        help="stop before LLM spending would pass USD (what is written so far is kept; exit code 4)",
    ),
    cache: Optional[Path] = typer.Option(
        None, "--cache", help="cache directory (default: the spec's cache_dir or .ragsweep/cache)"
    ),
) -> None:
    """Write a test set from a corpus: questions of HyPA-RAG's types with reference answers and evidence
    spans verified to occur in the corpus (unverifiable ones, placeholders and prompt text rejected and
    counted), near-duplicates removed.

    Exit codes: 0 all questions asked written; 3 fewer written (the file has those verified; one line says
    how many and why); 2 none written (one line: the main rejection reasons and what to try) or an error;
    4 stopped by --budget (what was verified so far is written)."""
    from ragsweep.errors import RagsweepError

    try:
        from ragsweep.generate.command import parse_mix, resolve, run_generate

        req = resolve(
            source,
            {
                "questions": questions,
                "generator": generator,
                "seed": seed,
                "mix": parse_mix(mix) if mix is not None else None,
            },
        )
        console = console_for_output()
        if dry_run:
            from ragsweep.datasets.load import load_corpus
            from ragsweep.generate.command import estimate
            from ragsweep.pipelines.estimate_view import print_estimate

            print_estimate(estimate(req, load_corpus(req.dataset, [])), console)
            return
        outcome, paths = run_generate(req, out, cache=cache, budget=budget, say=console.print)
    except RagsweepError as exc:
        fail(exc)
    from ragsweep.generate.command import exit_status
    from ragsweep.generate.output import lines

    for line in lines(outcome.summary):
        console.print(line)
    console.print(f"wrote {', '.join(str(p) for p in paths)}")
    code, message = exit_status(outcome.summary, paths[2])
    if message is not None:
        typer.echo(f"{'error' if code == 2 else 'short'}: {message}", err=True)
    if code:
        raise typer.Exit(code)
