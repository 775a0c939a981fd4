"""Experiment tracking: a run logged to a real MLflow tracking server (``scripts/mlflow-server.sh``: MLflow with a
SQLite backend on loopback; ``.ci/run`` starts it) and read back through MLflow's own client; the payload and the
refusals without one."""

from __future__ import annotations

import json
import math
import os
import shutil
import uuid

import pytest
from conftest import describe, seed_cache, unavailable

from ragsweep.results import load_run

DEFAULT_URI = "http://127.0.0.1:5055"


@pytest.fixture(scope="session")
def mlflow_uri() -> str:
    """The tracking server of ``scripts/mlflow-server.sh`` (``eval "$(scripts/mlflow-server.sh env)"`` points
    here). Skipped when none answers, unless RAGSWEEP_REQUIRE_MLFLOW=1 (``.ci/run``)."""
    import urllib.request

    uri = os.environ.get("RAGSWEEP_MLFLOW_URI", DEFAULT_URI)
    try:
        urllib.request.urlopen(uri + "/health", timeout=10).read()
    except OSError as exc:
        unavailable(
            "RAGSWEEP_REQUIRE_MLFLOW", f"no MLflow server answers at {uri}", str(exc), "scripts/mlflow-server.sh start"
        )
    return uri


def _runs(client, experiment_id: str) -> list:
    return client.search_runs([experiment_id], max_results=1000)


# --------------------------------------------------------------------------- the payload (no server)
def test_entries_of_a_run(base_run):
    from ragsweep.tracking.payload import DIGEST_TAG, run_entries

    run = load_run(base_run.run_dir)
    files = {"verdict.json": lambda: b"{}"}
    entries = run_entries(run, "rid", files)
    sweep, configs = entries[0], entries[1:]
    assert sweep.kind == "sweep" and sweep.tags["ragsweep.kind"] == "sweep" and sweep.artifacts == files
    assert sweep.tags["ragsweep.outputs_key"] == run.meta["outputs"]["key"]
    assert [e.name for e in configs] == [c["config_id"] for c in run.meta["configurations"]]
    assert sweep.metrics["verdict/test_mean"] == pytest.approx(run.verdict["test_mean"])
    assert sweep.tags["ragsweep.chosen"] == run.verdict["chosen"]
    e = next(e for e in configs if e.name == "sentence256-minilm-vector-k3")
    assert e.params["retriever"] == "vector" and e.params["splitter"] == "sentence256" and e.params["top_k"] == "3"
    assert e.params["splitter.chunk_size"] == "256" and e.params["embedding.model"] == "minilm"
    row = run.summary.query("config_id == @e.name and split == 'test'").iloc[0]
    for m in ("hit", "hit_lo", "hit_hi", "mrr", "bertscore_f1_rescaled_hi"):
        assert e.metrics[f"test/{m}"] == pytest.approx(row[m]), m
    assert {"validation/hit", "all/hit"} <= set(e.metrics)
    assert all(math.isfinite(v) for x in entries for v in x.metrics.values())  # NaN (not applicable): left out
    assert "test/rerank_ms" not in e.metrics  # no reranker: NaN
    assert e.tags["ragsweep.config_hash"] == e.key and DIGEST_TAG not in e.tags
    again = run_entries(load_run(base_run.run_dir), "rid", {"verdict.json": lambda: b"{}"})
    assert [x.digest for x in again] == [x.digest for x in entries]
    run.meta["outputs"]["key"] = "other"  # other result files
    assert run_entries(run, "rid", files)[0].digest != sweep.digest


def test_a_search_logs_its_trials_at_their_steps(base_run):
    from ragsweep.tracking.payload import run_entries

    run = load_run(base_run.run_dir)
    ids = [c["config_id"] for c in run.meta["configurations"]]
    run.meta["search"] = {
        "trials": [
            {"number": 0, "config_id": ids[0], "state": "complete", "values": {"quality": 0.5}},
            {"number": 1, "config_id": ids[1], "state": "failed", "values": {}},
            {"number": 2, "config_id": ids[0], "state": "repeat", "values": {"quality": 0.5}},
            {"number": 3, "config_id": ids[2], "state": "complete", "values": {"quality": 0.7, "latency": 3.0}},
        ],
        "best_so_far": [
            {"trial": 0, "seconds": 1.0, "best": 0.5},
            {"trial": 1, "seconds": 2.0, "best": 0.5},
            {"trial": 3, "seconds": 3.5, "best": 0.7},
        ],
    }
    entries = {e.name: e for e in run_entries(run, "rid", {})}
    sweep = entries[run.name]
    assert [s for s in sweep.steps if s[0] == "search/best_so_far"] == [
        ("search/best_so_far", 0.5, 0),
        ("search/best_so_far", 0.5, 1),
        ("search/best_so_far", 0.7, 3),
    ]
    assert entries[ids[0]].steps == [("search/quality", 0.5, 0), ("search/quality", 0.5, 2)]
    assert entries[ids[0]].tags["ragsweep.trial"] == "0,2"
    assert entries[ids[1]].steps == [] and entries[ids[1]].tags["ragsweep.trial_state"] == "failed"
    assert sorted(entries[ids[2]].steps) == [("search/latency", 3.0, 3), ("search/quality", 0.7, 3)]


def test_credentials_in_the_uri_and_a_tracker_that_does_not_answer(
    base_run, make_spec, run_cli, get_free_port, tmp_path
):
    """Credentials belong in MLflow's environment variables, never in a spec or manifest: refused in one line. A
    server that does not answer fails ``ragsweep track`` in one line naming it, and is a warning after a finished
    run (exit 0: the run is complete)."""
    from test_results import one_line_error

    secret = "s3cr3t-pw"
    spec = make_spec("tracked-bad", tracking={"mlflow": f"http://user:{secret}@127.0.0.1:5000"})
    proc = run_cli("validate", spec.path)
    line = one_line_error(proc, "tracking.mlflow", "MLFLOW_TRACKING_PASSWORD")
    assert secret not in line
    one_line_error(run_cli("track", base_run.run_dir, "--mlflow", f"https://u:{secret}@h"), "MLFLOW_TRACKING_USERNAME")
    down = f"http://127.0.0.1:{get_free_port()}"
    one_line_error(run_cli("track", base_run.run_dir, "--mlflow", down), down, "no MLflow tracking server answers")
    one_line_error(run_cli("track", base_run.run_dir), "--mlflow", "names none")

    copy = tmp_path / "run"
    shutil.copytree(base_run.run_dir, copy)
    spec = base_run.extra["spec"]
    done = run_cli("run", spec.path, "--out", copy, "--limit", "12", "--cache", tmp_path / "unused", "--mlflow", down)
    assert done.returncode == 0, describe(done)
    assert f"warning: tracking.mlflow: no MLflow tracking server answers at {down}" in done.stdout + done.stderr
    assert f"ragsweep track {copy} --mlflow URI" in done.stdout + done.stderr


# --------------------------------------------------------------------------- a real tracking server
def test_a_run_logged_to_mlflow_reads_back_and_is_not_logged_twice(
    base_run, make_spec, run_cli, mlflow_uri, shared_cache, tmp_path
):
    """``tracking: {mlflow: URI}`` in the spec logs the finished run: one experiment, a sweep run with the verdict's
    figures and the result files and report as artifacts, a child run per configuration with its axes and every
    figure per split with CI bounds. The same command again logs nothing; ``ragsweep track`` finds it all too."""
    from mlflow import MlflowClient

    experiment = f"ragsweep-test-{uuid.uuid4().hex[:8]}"
    spec = make_spec(
        "tracked",
        splitters=[{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
        retrievers=[{"kind": "bm25"}, {"kind": "vector"}],
        top_k=[3],
        tracking={"mlflow": mlflow_uri, "experiment": experiment},
    )
    cache = seed_cache(tmp_path / "cache", shared_cache)
    proc = run_cli("run", spec.path, "--cache", cache, "--limit", "12", "--no-progress")
    assert proc.returncode == 0, describe(proc)
    assert "tracked in MLflow" in proc.stdout and "3 run(s) logged, 0 unchanged" in proc.stdout, describe(proc)
    run = load_run(spec.run_dir)

    client = MlflowClient(tracking_uri=mlflow_uri)
    exp = client.get_experiment_by_name(experiment)
    runs = _runs(client, exp.experiment_id)
    assert len(runs) == 3 and all(r.info.status == "FINISHED" for r in runs)
    (sweep,) = [r for r in runs if r.data.tags["ragsweep.kind"] == "sweep"]
    children = {r.data.tags["ragsweep.config_id"]: r for r in runs if r is not sweep}
    assert set(children) == set(run.records["config_id"])
    assert all(r.data.tags["mlflow.parentRunId"] == sweep.info.run_id for r in children.values())
    assert sweep.data.tags["ragsweep.run_id"] == run.meta["run_id"]
    assert sweep.data.metrics["verdict/test_mean"] == pytest.approx(run.verdict["test_mean"])
    assert sweep.data.params["seed"] == "7"
    artifacts = {a.path for a in client.list_artifacts(sweep.info.run_id)}
    assert {"verdict.json", "summary.csv", "comparisons.csv", "manifest.json", "report.html"} <= artifacts
    got = json.loads(open(client.download_artifacts(sweep.info.run_id, "verdict.json", str(tmp_path))).read())
    assert got == run.verdict
    chosen = children[run.verdict["chosen"]]
    assert chosen.data.tags["ragsweep.chosen"] == "true"
    for cid, r in children.items():
        row = run.summary.query("config_id == @cid and split == 'test'").iloc[0]
        assert r.data.params["retriever"] == cid.split("-")[-2] and r.data.params["top_k"] == "3"
        assert r.data.tags["ragsweep.config_hash"] == row["config_hash"]
        for m in ("hit", "hit_lo", "hit_hi", "ndcg", "bertscore_f1_rescaled"):
            assert r.data.metrics[f"test/{m}"] == pytest.approx(row[m]), (cid, m)
    # the same command again: nothing logged, no metric point added
    again = run_cli("run", spec.path, "--cache", cache, "--limit", "12", "--no-progress")
    assert again.returncode == 0 and "0 run(s) logged, 3 unchanged" in again.stdout, describe(again)
    tracked = run_cli("track", spec.run_dir)  # the URI and experiment from the run's spec
    assert tracked.returncode == 0 and "0 run(s) logged, 3 unchanged" in tracked.stdout, describe(tracked)
    assert len(_runs(client, exp.experiment_id)) == 3
    assert len(client.get_metric_history(chosen.info.run_id, "test/hit")) == 1
    assert len(client.get_metric_history(sweep.info.run_id, "verdict/test_mean")) == 1
    # another experiment named on the command line is another record of the same run
    other = run_cli("track", spec.run_dir, "--experiment", experiment + "-b", "--mlflow", mlflow_uri)
    assert other.returncode == 0 and "3 run(s) logged" in other.stdout, describe(other)


def test_a_search_logged_to_mlflow_has_its_trials_at_their_steps(
    base_run, make_spec, run_cli, mlflow_uri, shared_cache, tmp_path
):
    from mlflow import MlflowClient

    experiment = f"ragsweep-search-{uuid.uuid4().hex[:8]}"
    spec = make_spec(
        "tracked-search",
        search={"strategy": "random", "budget": {"trials": 3}, "finalists": 1, "seed": 1},
        scoring={"metric": "mrr", "bootstrap_samples": 200, "bertscore": {"baseline_pairs": 50}},
    )
    cache = seed_cache(tmp_path / "cache", shared_cache)
    proc = run_cli("run", spec.path, "--cache", cache, "--limit", "12", "--no-progress")
    assert proc.returncode == 0, describe(proc)
    done = run_cli("track", spec.run_dir, "--mlflow", mlflow_uri, "--experiment", experiment)
    assert done.returncode == 0, describe(done)
    search = load_run(spec.run_dir).meta["search"]
    client = MlflowClient(tracking_uri=mlflow_uri)
    runs = _runs(client, client.get_experiment_by_name(experiment).experiment_id)
    (sweep,) = [r for r in runs if r.data.tags["ragsweep.kind"] == "sweep"]
    curve = client.get_metric_history(sweep.info.run_id, "search/best_so_far")
    assert sorted((m.step, m.value) for m in curve) == [(p["trial"], p["best"]) for p in search["best_so_far"]]
    by_id = {r.data.tags["ragsweep.config_id"]: r for r in runs if r is not sweep}
    for t in search["trials"]:
        if t["state"] == "complete":
            history = client.get_metric_history(by_id[t["config_id"]].info.run_id, "search/quality")
            assert (t["number"], t["values"]["quality"]) in {(m.step, m.value) for m in history}
