"""What went wrong with a configuration's answers, said next to its figures rather than left out of them:
configurations whose answers failed (with the most common reason), LLM replies cut at ``max_tokens``,
and timed figures that mix invocations (a resumed run: another load on the server, other queue waits).

``failures`` reads the records (it goes into ``verdict.json``, so a no-op re-run prints it without
pandas); the other notes read summary rows (``summary.csv``'s "all" split).
"""

from __future__ import annotations


def failures(records) -> list[dict]:
    """Per configuration with a failed answer: ``config_id``, ``failed`` of ``questions``, the most common
    ``reason`` (ties: the first met), its ``kind`` (``context_window`` for prompts the server cannot hold)."""
    if records.empty or "error" not in records.columns:
        return []
    out = []
    for cid, group in records.groupby("config_id", sort=False):
        errors = group["error"].dropna()
        if errors.empty:
            continue
        reason = errors.value_counts(sort=True).index[0]
        kinds = group["error_kind"].dropna() if "error_kind" in group.columns else []
        out.append({"config_id": str(cid), "failed": int(len(errors)), "questions": int(len(group)),
                    "reason": str(reason), "kind": str(kinds.iloc[0]) if len(kinds) else None})
    return sorted(out, key=lambda f: (-f["failed"] / f["questions"], f["config_id"]))


def failure_lines(failed: list[dict]) -> list[str]:
    out = []
    for f in failed:
        every = f["failed"] == f["questions"]
        head = "failed" if every else "partly failed"
        count = f"all {f['questions']} answers" if every else f"{f['failed']} of {f['questions']} answers"
        again = "" if f.get("kind") == "context_window" else "; running the same command again retries them"
        out.append(f"{head}: {f['config_id']}: {count} failed: {f['reason']}{again}")
    return out


def _count(row, key: str) -> int:
    v = row.get(key)
    return 0 if v is None or v != v or v == "" else int(float(v))


def truncation_lines(rows: list[dict]) -> list[str]:
    """A line per configuration whose LLM answers were cut at max_tokens (``n_truncated``)."""
    out = []
    for r in rows:
        n = _count(r, "n_truncated")
        if n:
            out.append(f"truncated: {n} of {_count(r, 'n_questions')} answers of {r['config_id']} were cut at "
                       "llm.max_tokens (finish_reason length): raise max_tokens, or they are scored as cut")
    return out


def invocation_lines(rows: list[dict]) -> list[str]:
    """One line naming the configurations whose timed figures come from more than one invocation."""
    mixed = [str(r["config_id"]) for r in rows if _count(r, "latency_invocations") > 1]
    if not mixed:
        return []
    return [f"note: the generation times of {', '.join(mixed)} come from more than one invocation (a resumed "
            "run): each is the server's time on its calls where known, else their wall time then (records: "
            "invocation, generation_wall_ms)"]
