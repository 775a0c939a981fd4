"""What ``ragsweep generate`` writes: the questions (the table format ``dataset.questions: {format: jsonl}``
reads), the rejected candidates with their reasons, and a summary; and the lines it prints."""

from __future__ import annotations

import json
from pathlib import Path

from ragsweep.errors import RagsweepError


def side_paths(out: Path) -> tuple[Path, Path]:
    """``OUT.generation.json`` (summary) and ``OUT.rejected.jsonl`` next to ``out``."""
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    return out.with_name(f"{stem}.generation.json"), out.with_name(f"{stem}.rejected.jsonl")


def _jsonl(path: Path, rows: list[dict]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    tmp.replace(path)


def write(out: Path, outcome, extra: dict) -> list[Path]:
    summary_path, rejected_path = side_paths(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        _jsonl(out, outcome.questions)
        _jsonl(rejected_path, outcome.rejected)
        summary_path.write_text(
            json.dumps({**extra, **outcome.summary}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    except OSError as exc:
        raise RagsweepError(f"--out: cannot write {out} ({exc.strerror or exc}); choose a writable path") from None
    return [out, summary_path, rejected_path]


def lines(summary: dict) -> list[str]:
    """The summary as printed: written per type, rejected per reason, how evidence was located, LLM use."""
    per = summary["per_type"]
    out = [
        f"{summary['written']} of {summary['wanted']} questions written ({summary['generator']} generator"
        + (f", {summary['model']}" if summary.get("model") else "")
        + "): "
        + ", ".join(f"{t} {v['written']}/{v['wanted']}" for t, v in per.items())
    ]
    rej = summary["rejected"]
    out.append(
        f"  checked {summary['checked']} candidates; rejected {sum(rej.values())}"
        + (": " + ", ".join(f"{k} {v}" for k, v in rej.items()) if rej else "")
    )
    tiers = summary["evidence_tiers"]
    out.append(
        "  evidence located: " + ", ".join(f"{k} {v}" for k, v in tiers.items()) + " (every span verified "
        "in the corpus; out-of-scope questions: their terms verified absent)"
    )
    if summary.get("shortfall"):
        out.append(
            "  short: "
            + ", ".join(f"{t} {n}" for t, n in summary["shortfall"].items())
            + " (the corpus, the rounds or the budget ran out; see the rejected file for why)"
        )
    llm = summary.get("llm")
    if llm:
        cost = llm.get("cost_usd")
        out.append(
            f"  LLM: {llm.get('llm_calls', 0)} calls ({llm.get('llm_cached', 0)} cached), "
            f"{llm.get('prompt_tokens', 0):,} prompt + {llm.get('completion_tokens', 0):,} completion tokens"
            + (f", ${cost:.4f}" if cost is not None else "")
        )
    if summary.get("stopped"):
        out.append(f"  stopped early: {summary['stopped']}")
    return out
