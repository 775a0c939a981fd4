"""What a run logs to an experiment tracker, built from its directory alone: one entry for the sweep (the verdict,
the search's best-so-far curve, the run's files as artifacts) and one per configuration (its axes as parameters,
every summary figure per split with its CI bounds as metrics, a search trial's values at its step).

Each entry carries a digest of everything it logs: a rerun whose entry has the digest the tracker already holds
logs nothing, and one whose figures changed (a resumed run) logs the new values into the same tracker run."""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragsweep.redact import redact
from ragsweep.run_records import SearchRecord

if TYPE_CHECKING:
    from ragsweep.results.run import RunData

KIND_TAG = "ragsweep.kind"  # sweep | configuration
RUN_TAG = "ragsweep.run_id"  # the run directory's identity (its journal's)
KEY_TAG = "ragsweep.key"  # an entry's identity within the run: "sweep" or the configuration hash
DIGEST_TAG = "ragsweep.digest"  # what was logged last
# summary columns that are settings or labels, not figures
_NOT_FIGURES = {"top_k"}
# axes whose short labels the summary and the manifest carry
_AXES = ("splitter", "embedding", "retriever", "top_k", "query_transform", "reranker", "postprocessor")


@dataclass
class Entry:
    """One tracker run: ``key`` identifies it within the sweep; ``steps`` are (metric, value, step) points."""

    key: str
    kind: str
    name: str
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    steps: list[tuple[str, float, int]] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    # file name -> its content, made only when the entry is logged (the report is built then); what the files
    # hold is a function of the run's outputs key, a tag of the sweep's entry
    artifacts: dict[str, Callable[[], bytes]] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        body = {
            "params": self.params,
            "metrics": self.metrics,
            "steps": self.steps,
            "tags": self.tags,
            "artifacts": sorted(self.artifacts),
        }
        return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:24]


def run_entries(run: RunData, run_id: str, artifacts: dict[str, Callable[[], bytes]]) -> list[Entry]:
    """The sweep's entry (first) and one per configuration of ``run``'s manifest, in the manifest's order."""
    from ragsweep import __version__

    common = {RUN_TAG: run_id, "ragsweep.version": __version__, "ragsweep.run_dir": str(run.path.resolve())}
    verdict = run.verdict or {}
    sweep = _sweep_entry(run, verdict, artifacts)
    sweep.tags |= common
    configs = []
    for c in run.meta.get("configurations", []):
        entry = _configuration_entry(run, c, verdict.get("chosen"))
        entry.tags |= common
        configs.append(entry)
    _add_trials(run.meta.get("search"), sweep, {e.name: e for e in configs})
    return [sweep, *configs]


def _sweep_entry(run: RunData, verdict: dict, artifacts: dict[str, Callable[[], bytes]]) -> Entry:
    spec = run.meta.get("spec") or {}
    stage2 = spec.get("stage2") or {}
    search = spec.get("search") or {}
    params = {
        "name": run.name,
        "seed": spec.get("seed"),
        "configurations": len(run.meta.get("configurations", [])),
        "questions": (run.meta.get("dataset") or {}).get("n_questions"),
        "question_limit": run.meta.get("question_limit"),
        "metric": (spec.get("scoring") or {}).get("metric"),
        "generator": (spec.get("generator") or {}).get("kind"),
        "executor": spec.get("executor"),
        "search": search.get("strategy"),
        "judges": ",".join(stage2.get("judges") or []) or None,
    }
    metrics = {
        f"verdict/{k}": verdict.get(k)
        for k in ("validation_mean", "test_mean", "test_lo", "test_hi", "optimism", "n_validation", "n_test")
    }
    metrics["verdict/n_tied"] = len(verdict.get("tied") or []) if verdict else None
    for b in verdict.get("baselines") or []:  # the pick against each reference baseline (evaluation.reference)
        metrics |= {f"reference/{b['baseline']}/{k}": b.get(k) for k in ("mean", "lo", "hi", "diff", "share")}
    tags = {KIND_TAG: "sweep", KEY_TAG: "sweep", "ragsweep.status": run.status}
    outputs = run.meta.get("outputs")
    outputs_key = outputs["key"] if outputs else None
    if outputs_key:  # the result files' identity: equal keys, equal files (a rerun with nothing new keeps it)
        tags["ragsweep.outputs_key"] = outputs_key
    if verdict.get("chosen"):
        tags["ragsweep.chosen"] = verdict["chosen"]
    return Entry("sweep", "sweep", run.name, _strings(params), _finite(metrics), [], tags, dict(artifacts))


def _configuration_entry(run: RunData, c: dict, chosen: str | None) -> Entry:
    labels = c.get("labels") or {}
    params = {axis: labels.get(axis) for axis in _AXES}
    settings = {k: v for k, v in c.items() if k not in ("config_id", "config_hash", "labels", "ragsweep")}
    params |= flatten(redact(settings))  # a manifest written before URLs were redacted may hold an LLM's key
    metrics: dict[str, Any] = {}
    if not run.summary.empty:
        rows = run.summary[run.summary["config_id"] == c["config_id"]]
        for _, row in rows.sort_values("split").iterrows():
            for column, value in row.items():
                if column not in _NOT_FIGURES and _is_finite(value):
                    metrics[f"{row['split']}/{column}"] = value
    tags = {
        KIND_TAG: "configuration",
        KEY_TAG: c["config_hash"],
        "ragsweep.config_id": c["config_id"],
        "ragsweep.config_hash": c["config_hash"],
        "ragsweep.chosen": str(c["config_id"] == chosen).lower(),
    }
    if labels.get("baseline"):  # a reference baseline: scored, never chosen (filter with tags.ragsweep.baseline)
        tags["ragsweep.baseline"] = str(labels["baseline"])
    return Entry(c["config_hash"], "configuration", c["config_id"], _strings(params), _finite(metrics), [], tags)


def _add_trials(search: SearchRecord | None, sweep: Entry, by_id: dict[str, Entry]) -> None:
    """A search's trials at their step: each objective's value in the configuration's entry (``search/<objective>``)
    and the best-so-far curve in the sweep's."""
    if not search:
        return
    for t in search.get("trials", []):
        entry = by_id.get(t.get("config_id") or "")
        if entry is None:
            continue
        entry.tags["ragsweep.trial"] = ",".join(filter(None, [entry.tags.get("ragsweep.trial"), str(t["number"])]))
        entry.tags["ragsweep.trial_state"] = t.get("state", "")
        for objective, value in (t.get("values") or {}).items():
            if _is_finite(value):
                entry.steps.append((f"search/{objective}", float(value), int(t["number"])))
    for point in search.get("best_so_far", []):
        if _is_finite(point.get("best")):
            sweep.steps.append(("search/best_so_far", float(point["best"]), int(point["trial"])))
        sweep.steps.append(("search/seconds", float(point["seconds"]), int(point["trial"])))


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested settings as dotted keys (``splitter.chunk_size``); None and empty values left out."""
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out |= flatten(v, f"{prefix}.{k}" if prefix else str(k))
    elif value is not None and value != [] and value != {}:
        out[prefix] = json.dumps(value) if isinstance(value, list) else value
    return out


PARAM_CHARS = 6000  # MLflow's limit on a parameter's value


def _strings(params: dict[str, Any]) -> dict[str, str]:
    """Parameters as the tracker stores them: text, cut to its limit (a long list of labels, say)."""
    return {k: str(v)[:PARAM_CHARS] for k, v in params.items() if v is not None}


def _is_finite(value: Any) -> bool:
    """A finite number (numpy's too), not a flag."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _finite(metrics: dict[str, Any]) -> dict[str, float]:
    """The figures that are numbers (NaN: not applicable, as a metric of no question; left out)."""
    return {k: float(v) for k, v in metrics.items() if _is_finite(v)}
