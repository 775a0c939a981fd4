"""What went wrong with a configuration's answers, said next to its figures rather than left out of them:
configurations whose answers failed (with the most common reason), LLM replies cut at ``max_tokens``,
and timed figures that mix invocations (a resumed run: another load on the server, other queue waits).

``failures`` reads the records (it goes into ``verdict.json``, so a no-op re-run prints it without
pandas); the other notes read summary rows (``summary.csv``'s "all" split).
"""

from __future__ import annotations

from ragsweep.run_dir import RunDir


def failures(records) -> list[dict]:
    """Per configuration with a failed answer: ``config_id``, ``failed`` of ``questions``, the most common
    ``reason`` (ties: the first met), its ``kind`` (``context_window`` for prompts the server cannot hold)."""
    if records.empty or "error" not in records.columns:
        return []
    import re

    out = []
    for cid, group in records.groupby("config_id", sort=False):
        failed = group[group["error"].notna()]
        if failed.empty:
            continue
        kinds = failed["error_kind"] if "error_kind" in failed.columns else [None] * len(failed)
        # reasons alike but for their figures (a prompt's tokens) are one reason; the first met stands for it
        seen: dict[tuple, list] = {}
        for reason, kind in zip(failed["error"], kinds):
            key = (kind if isinstance(kind, str) else None, re.sub(r"\d[\d,.]*", "N", str(reason)))
            seen.setdefault(key, [str(reason), 0])[1] += 1
        (kind, _), (reason, _) = max(seen.items(), key=lambda kv: kv[1][1])  # ties: the first met (stable)
        out.append(
            {
                "config_id": str(cid),
                "failed": int(len(failed)),
                "questions": int(len(group)),
                "reason": reason,
                "kind": kind,
                # prompts the server's window cannot hold: failed for good (a re-run does not send them)
                "for_good": int(sum(k == "context_window" for k in kinds)),
            }
        )
    return sorted(out, key=lambda f: (-f["failed"] / f["questions"], f["config_id"]))


def failure_lines(failed: list[dict]) -> list[str]:
    out = []
    for f in failed:
        every = f["failed"] == f["questions"]
        head = "failed" if every else "partly failed"
        count = f"all {f['questions']} answers" if every else f"{f['failed']} of {f['questions']} answers"
        good = f.get("for_good", f["failed"] if f.get("kind") == "context_window" else 0)
        again = (
            "; not retried (the same prompt fails the same way): change the configuration or the context "
            "window, or pass --fresh"
            if good == f["failed"]
            else f"; {good} failed for good, running the same command again retries the others"
            if good
            else "; running the same command again retries them"
        )
        out.append(f"{head}: {f['config_id']}: {count} failed: {f['reason']}{again}")
    return out


def incomplete_line(invocation: dict, run_dir) -> str:
    """The line ``ragsweep run`` ends an incomplete run with: what failed this time and a re-run retries, and
    what it does not (answers that failed for good, from ``verdict.json``), never both of one answer."""
    import json
    from pathlib import Path

    try:
        failed = json.loads(RunDir(Path(run_dir)).verdict.read_text(encoding="utf-8")).get("failed") or []
    except (OSError, ValueError):
        failed = []
    for_good = sum(f.get("for_good", f["failed"] if f.get("kind") == "context_window" else 0) for f in failed)
    retried = max(0, int(invocation.get("failed") or 0) - int(invocation.get("failed_for_good") or 0))
    judgements = int(invocation.get("judgements_failed") or 0)
    parts = []
    if retried or judgements:
        parts.append(
            f"{retried} (configuration, question) results failed this time (see the 'error' column of "
            f"records.parquet) and {judgements} judgements failed (the '<judge>_status' columns); run the same "
            "command again to retry them"
        )
    if for_good:
        parts.append(
            f"{for_good} answers failed for good and a re-run does not send them again (prompts longer than the "
            "server's context window, listed above: change the configuration or the window)"
        )
    return "incomplete: " + ("; ".join(parts) or "some results are missing; run the same command again")


def _count(row, key: str) -> int:
    v = row.get(key)
    return 0 if v is None or v != v or v == "" else int(float(v))


def truncation_lines(rows: list[dict]) -> list[str]:
    """A line per configuration whose LLM answers were cut at max_tokens (``n_truncated``)."""
    out = []
    for r in rows:
        n = _count(r, "n_truncated")
        if n:
            out.append(
                f"truncated: {n} of {_count(r, 'n_questions')} answers of {r['config_id']} were cut at "
                "llm.max_tokens (finish_reason length): raise max_tokens, or they are scored as cut"
            )
    return out


def invocation_lines(rows: list[dict]) -> list[str]:
    """One line naming the configurations whose timed figures come from more than one invocation."""
    mixed = [str(r["config_id"]) for r in rows if _count(r, "latency_invocations") > 1]
    if not mixed:
        return []
    return [
        f"note: the generation times of {', '.join(mixed)} come from more than one invocation (a resumed "
        "run): each is the server's time on its calls where known, else their wall time then (records: "
        "invocation, generation_wall_ms)"
    ]
