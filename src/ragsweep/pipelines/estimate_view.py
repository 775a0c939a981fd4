"""The dry run's table: per stage the LLM calls, tokens and cost ``pipelines.estimate`` counted, then its notes."""

from __future__ import annotations

from ragsweep.pipelines.stage_estimate import StageEstimate


def print_estimate(estimates: list[StageEstimate], console) -> None:
    """A total row sums what is priced and says when something is not."""
    from rich.table import Table

    if not estimates:
        console.print("dry run: this run makes no LLM calls (nothing to spend)")
        return
    table = Table(
        title="dry run: LLM calls this run would make (nothing was spent)",
        caption="prompt tokens estimated with cl100k; completion tokens and cost at max_tokens "
        "(upper bound); cache hits not predicted",
    )
    for col in ("stage", "model", "calls", "prompt tokens", "completion tokens (max)", "cost USD (max)"):
        table.add_column(col, justify="left" if col in ("stage", "model") else "right")
    total_calls, total_cost, unknown = 0, 0.0, False
    for e in estimates:
        cost = "-" if e.cost_usd is None else f"{e.cost_usd:.4f}"
        table.add_row(e.stage, e.model, str(e.calls), str(e.prompt_tokens), str(e.completion_tokens), cost)
        total_calls += e.calls
        if e.cost_usd is None:
            unknown = True
        else:
            total_cost += e.cost_usd
    table.add_row("total", "", str(total_calls), "", "", f"{total_cost:.4f}" + (" + unpriced" if unknown else ""))
    console.print(table)
    for e in estimates:
        for note in e.notes:
            console.print(f"  {e.stage}: {note}")
