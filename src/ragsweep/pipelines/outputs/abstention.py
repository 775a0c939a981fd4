"""The manifest's ``abstain_thresholds``: per configuration of an extractive generator with
``abstain_below``, the threshold it answered with and, when tuned, what the tuning on the validation
questions saw (each candidate's balanced accuracy), read from its answers in the journal."""

from __future__ import annotations


def abstain_thresholds(configs, journal) -> dict:
    wanted = {c.config_hash: c.config_id for c in configs if (c.generator or {}).get("abstain_below") is not None}
    out: dict[str, dict] = {}
    if wanted:
        for h, _, _, payload in journal.answers(set(wanted)):
            if wanted[h] not in out and "abstain_threshold" in payload:
                out[wanted[h]] = {
                    "threshold": payload["abstain_threshold"],
                    **({"tuning": payload["abstention_tuning"]} if payload.get("abstention_tuning") else {}),
                }
    return {c: out[c] for c in sorted(out)}
