"""A run logged to MLflow through ``MlflowClient`` (no global state: a notebook's own MLflow run is left alone).

Layout: one experiment per sweep (``tracking.experiment``, default the spec's name); in it a parent run for the
sweep (the verdict's figures, the search's best-so-far curve, ``verdict.json``, ``summary.csv``,
``comparisons.csv``, ``manifest.json`` and the HTML report as artifacts) and a child run per configuration (its
axes and settings as parameters, every summary figure per split with its CI bounds as metrics, a search trial's
values at the trial's step). Runs are found again by their tags (the run directory's id and the entry's key), so
logging a run twice logs nothing the second time, and a resumed run's new figures go into the same MLflow runs.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsweep.errors import RagsweepError
from ragsweep.redact import is_redacted, redact_text, redact_url
from ragsweep.tracking.payload import DIGEST_TAG, KEY_TAG, RUN_TAG, Entry, run_entries


@dataclass(frozen=True)
class Tracked:
    """What ``track_run`` did: the experiment, the sweep's MLflow run, how many runs it logged or found unchanged."""

    uri: str
    experiment_id: str
    sweep_run_id: str
    logged: int
    unchanged: int

    def line(self) -> str:
        return (
            f"tracked in MLflow ({redact_url(self.uri)}, experiment {self.experiment_id}, run {self.sweep_run_id}): "
            f"{self.logged} run(s) logged, {self.unchanged} unchanged"
        )


def track_run(run_dir: Path, uri: str, experiment: str | None = None) -> Tracked:
    """Log the run in ``run_dir`` to the MLflow tracker at ``uri``; a RagsweepError (one line) if it cannot."""
    from ragsweep.config.services import check_tracking_uri
    from ragsweep.results.run import load_run

    try:
        uri = check_tracking_uri(uri)
    except ValueError as exc:
        raise RagsweepError(f"tracking.mlflow: {exc}") from None
    if is_redacted(uri):  # read back from the run's manifest, which never holds a URI's password
        raise RagsweepError(
            f"tracking.mlflow: {uri}: its credentials were left out when the run stored it (ragsweep never writes "
            "them); give the whole URI with --mlflow"
        )
    client = _client(uri)
    run = load_run(run_dir)
    if run.status == "running":
        raise RagsweepError(f"{run_dir}: the sweep is still running; track it once it has finished")
    entries = run_entries(run, _run_id(run), _artifacts(run))
    try:
        experiment_id = _experiment(client, experiment or run.name)
        found = _existing(client, experiment_id, entries[0].tags[RUN_TAG])
        sweep_id, changed = _log(client, experiment_id, entries[0], found.get(entries[0].key), None)
        logged = int(changed)
        for entry in entries[1:]:
            logged += _log(client, experiment_id, entry, found.get(entry.key), sweep_id)[1]
    except RagsweepError:
        raise
    except Exception as exc:  # noqa: BLE001 - MLflow's and its HTTP client's errors, as one line
        raise RagsweepError(redact_text(f"tracking.mlflow: {uri}: {_reason(exc)}")) from None
    return Tracked(uri, experiment_id, sweep_id, logged, len(entries) - logged)


def _client(uri: str):
    try:
        from mlflow import MlflowClient
    except ImportError:
        raise RagsweepError(
            "tracking.mlflow: MLflow's client is not installed; pip install 'ragsweep[tracking]' (mlflow-skinny)"
        ) from None
    if uri.startswith(("http://", "https://")):
        _reachable(uri)
    return MlflowClient(tracking_uri=uri)


def _reachable(uri: str) -> None:
    """Fail in one line at once when nothing answers at ``uri`` (MLflow's own client retries for minutes)."""
    import httpx

    try:
        httpx.get(uri.rstrip("/") + "/health", timeout=10.0)
    except httpx.HTTPError as exc:
        raise RagsweepError(
            f"tracking.mlflow: no MLflow tracking server answers at {uri} ({_reason(exc)}); start one "
            "(mlflow server --backend-store-uri sqlite:///mlflow.db) or fix the URI"
        ) from None


def _run_id(run) -> str:
    """The run directory's identity: the manifest's, else its journal's (a run written before it was recorded)."""
    if run.meta.get("run_id"):
        return str(run.meta["run_id"])
    from ragsweep.pipelines.journal import Journal
    from ragsweep.run_dir import RunDir

    journal = Journal(RunDir(run.path).journal, read_only=True)
    try:
        rid = journal.meta("run_id")
    finally:
        journal.close()
    if not rid:
        raise RagsweepError(f"{run.path}: the run has no id in its journal; run it again to finish it")
    return rid


def _artifacts(run) -> dict[str, Callable[[], bytes]]:
    """The run's result files and its HTML report (built when logged, as ``ragsweep report`` would)."""
    from ragsweep.run_dir import RunDir

    files = RunDir(run.path)
    paths = (files.verdict, files.summary, files.comparisons)
    out: dict[str, Callable[[], bytes]] = {p.name: p.read_bytes for p in paths if p.is_file()}
    if files.manifest.is_file():  # redacted again: one written before URLs were redacted may hold an LLM's key
        out[files.manifest.name] = lambda: redact_text(files.manifest.read_text(encoding="utf-8")).encode("utf-8")
    if not run.summary.empty:
        out["report.html"] = lambda: _report(run)
    return out


def _report(run) -> bytes:
    from ragsweep.results.report.build import build_report
    from ragsweep.results.verdict_view import default_metric

    split = "test" if not run.split("test").empty else "all"
    return build_report(run, default_metric(run), split).encode("utf-8")


def _experiment(client, name: str) -> str:
    exp = client.get_experiment_by_name(name)
    if exp is None:
        from ragsweep import __version__

        return client.create_experiment(name, tags={"ragsweep.version": __version__})
    if exp.lifecycle_stage == "deleted":
        raise RagsweepError(
            f"tracking.experiment: {name!r} is deleted in the tracker; restore it (mlflow experiments restore) "
            "or name another"
        )
    return exp.experiment_id


def _existing(client, experiment_id: str, run_id: str) -> dict[str, Any]:
    """The MLflow runs an earlier call logged for this run directory, by entry key."""
    found: dict[str, Any] = {}
    token = None
    while True:
        page = client.search_runs(
            [experiment_id], filter_string=f"tags.`{RUN_TAG}` = '{run_id}'", max_results=1000, page_token=token
        )
        for r in page:
            found.setdefault(r.data.tags.get(KEY_TAG), r)
        token = page.token
        if not token:
            return found


def _log(client, experiment_id: str, entry: Entry, found, parent: str | None) -> tuple[str, bool]:
    """Log ``entry`` (into ``found``, the MLflow run an earlier call made, if any); (its MLflow run id, whether
    anything was logged)."""
    from mlflow.entities import Metric, Param, RunTag

    digest = entry.digest
    if found is not None and found.data.tags.get(DIGEST_TAG) == digest:
        return found.info.run_id, False
    if found is None:
        first = dict(entry.tags) | ({"mlflow.parentRunId": parent} if parent else {})
        rid = client.create_run(experiment_id, tags=first, run_name=entry.name).info.run_id
        old_params: dict[str, str] = {}
        old_steps: set[tuple[str, int]] = set()
    else:
        rid, old_params = found.info.run_id, dict(found.data.params)
        old_steps = _steps_logged(client, rid, {m for m, _, _ in entry.steps})
    now = int(time.time() * 1000)
    params = [Param(k, v) for k, v in entry.params.items() if k not in old_params]
    changed = sorted(k for k, v in entry.params.items() if k in old_params and old_params[k] != v)
    tags = [RunTag(k, v) for k, v in entry.tags.items()] + [RunTag(DIGEST_TAG, digest)]
    if changed:  # MLflow keeps a parameter's first value: say which ones the run has changed since
        tags.append(RunTag("ragsweep.params_changed", ",".join(changed)))
    metrics = [Metric(k, v, now, 0) for k, v in entry.metrics.items()]
    metrics += [Metric(k, v, now, step) for k, v, step in entry.steps if (k, step) not in old_steps]
    client.log_batch(rid, metrics=metrics, params=params, tags=tags)
    if entry.artifacts:
        with tempfile.TemporaryDirectory(prefix="ragsweep-mlflow-") as tmp:
            for name, content in entry.artifacts.items():
                (Path(tmp) / name).write_bytes(content())
            client.log_artifacts(rid, tmp)
    if found is None:
        client.set_terminated(rid, "FINISHED")
    return rid, True


def _steps_logged(client, rid: str, names: set[str]) -> set[tuple[str, int]]:
    return {(name, m.step) for name in names for m in client.get_metric_history(rid, name)}


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]
