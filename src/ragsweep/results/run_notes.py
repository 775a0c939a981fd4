"""What went wrong in a run, said beside its figures by ``show`` and the report: failed configurations with
their reason, LLM replies cut at max_tokens, timed figures from several invocations, and what each LLM endpoint
did (queueing, waits, timeouts). The same lines the sweep prints at its end (``pipelines.outputs``)."""

from __future__ import annotations

from ragsweep.llm.endpoint_text import endpoint_lines
from ragsweep.pipelines.outputs.answer_notes import failure_lines, failures, invocation_lines, truncation_lines
from ragsweep.redact import redact_text
from ragsweep.results.run import RunData


def run_notes(run: RunData) -> list[str]:
    every = run.split("all").to_dict("records") if not run.summary.empty else []
    lines = (
        failure_lines(failures(run.records))
        + truncation_lines(every)
        + invocation_lines(every)
        + endpoint_lines(run.meta)
    )
    return [redact_text(line) for line in lines]  # endpoints and reasons of runs written before URLs were redacted
