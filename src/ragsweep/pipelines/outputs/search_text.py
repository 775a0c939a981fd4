"""The lines a run and ``ragsweep show`` print about a search, from the manifest's ``search`` record
(``search.summary.search_record``): plain dicts, so printing imports nothing heavy."""

from __future__ import annotations

from ragsweep.run_records import SearchRecord


def search_lines(record: SearchRecord) -> list[str]:
    """``ragsweep show``'s lines about a search: strategy, budget used, what was left out, the best."""
    used = record["used"]
    budget = ", ".join(f"{k} {v:g}" for k, v in record["budget"].items()) or f"{record['trial_limit']} trials"
    lines = [
        f"search: {record['strategy']} (seed {record['seed']}, objectives {', '.join(record['objectives'])}"
        f" by {record['metric']}): {used['trials']} of {record['space']} configurations evaluated on "
        f"{record['validation_questions']} validation questions in {used['seconds']:.1f} s"
        + (f", ${used['usd']:.4f}" if used["usd"] else "")
        + f"; budget {budget}; stopped: {record['stopped']}",
        f"search: {record['not_evaluated']} configurations never evaluated"
        + (
            f", {used['pruned']} dropped by racing ({used['pairs']} (configuration, question) pairs answered in all)"
            if used.get("pruned")
            else ""
        )
        + (f", {used['failed']} failed" if used["failed"] else "")
        + (f", {used['repeats']} repeated proposals answered from earlier trials" if used["repeats"] else "")
        + f"; finalists on the {record['test_questions']} test questions: {', '.join(record['finalists'])}",
    ]
    if record.get("pareto"):
        lines.append(f"search: Pareto front ({' x '.join(record['objectives'])}): {', '.join(record['pareto'])}")
    return lines
