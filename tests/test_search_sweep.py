"""A sweep that searches (``search: {strategy: tpe, budget: ...}``): killed with SIGKILL mid-search, resumed,
and its outputs: trials on validation, finalists on test, the verdict among the finalists, ``show``."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import load_run, seed_cache


@pytest.fixture(scope="module")
def search_cache(tmp_path_factory, base_run, shared_cache):
    """The searches' own cache: they embed every demo question, which the shared cache must not hold
    (test_sweep.py's resume test counts the 12 question vectors of the reference sweep there). It starts with
    the reference sweep's vectors and BERTScores (``seed_cache``)."""
    return seed_cache(tmp_path_factory.mktemp("search-cache"), shared_cache)


SEARCH_LIMIT = 48  # questions: 24 validation, 24 test


def _complete_trials(path) -> int:
    if not path.is_file():
        return 0
    try:
        with sqlite3.connect(path, timeout=1) as db:
            return db.execute("SELECT count(*) FROM trials WHERE state = 'COMPLETE'").fetchone()[0]
    except sqlite3.Error:  # the study's tables are not there yet
        return 0


@pytest.mark.slow  # 18 s; by default: a study killed mid-trial resumes (test_search.py, each strategy, in-process),
# a real SIGKILL mid-run resumes from the journal (test_sweep.py), and searched sweeps report their finalists and
# verdict (the raced grid below, test_tracking.py's random search)
def test_tpe_search_resumes_after_kill_9_and_reports_its_finalists(
    make_spec, search_cache, run_cli, popen_cli, kill_midway, describe_proc, tmp_path
):
    spec = make_spec(
        "search",
        search={"strategy": "tpe", "budget": {"trials": 6}, "finalists": 2, "seed": 3},
        scoring={"metric": "mrr", "bootstrap_samples": 200, "bertscore": {"baseline_pairs": 50}},
    )
    study = spec.run_dir / "search.sqlite"
    proc = popen_cli(
        "run", spec.path, "--cache", search_cache, "--no-progress", "--limit", SEARCH_LIMIT, log_dir=tmp_path
    )
    kill_midway(
        proc,
        lambda: _complete_trials(study),
        2,
        timeout=240,
        what="complete trials",
        stderr_path=tmp_path / "stderr.txt",
    )
    with sqlite3.connect(study) as db:
        before = db.execute(
            "SELECT t.number, t.state, json_extract(a.value_json, '$') FROM trials t LEFT JOIN "
            "trial_user_attributes a ON a.trial_id = t.trial_id AND a.key = 'config_id' "
            "ORDER BY t.number"
        ).fetchall()
    assert any(state == "RUNNING" for _, state, _ in before) or len(before) >= 2, before

    done = run_cli("run", spec.path, "--cache", search_cache, "--limit", SEARCH_LIMIT, timeout=400)
    assert done.returncode == 0, describe_proc(done)
    run = load_run(spec.run_dir, done)
    search = run.manifest["search"]
    trials = search["trials"]
    numbers = [t["number"] for t in trials]
    assert numbers == sorted(numbers)
    # a trial killed running after its proposal but before it was chosen (the kill's moment decides) is skipped,
    # as it would have been, and left out of the list
    skipped = set(range(max(numbers) + 1)) - set(numbers)
    assert len(skipped) == search["used"]["skipped"] and skipped <= {n for n, st, _ in before if st == "RUNNING"}
    by_number = {t["number"]: t for t in trials}
    for number, state, config_id in before:  # kept under their numbers; the one killed running is finished
        if number in skipped:
            continue
        assert by_number[number]["config_id"] == config_id or config_id is None
        if config_id is None:  # killed before its configuration was chosen: failed, nothing computed
            assert by_number[number]["state"] == "failed" and "interrupted" in by_number[number]["reason"], before
        elif state in ("COMPLETE", "RUNNING"):
            assert by_number[number]["state"] in ("complete", "repeat"), (before, trials)
    evaluated = [t["config_id"] for t in trials if t["state"] == "complete"]
    assert len(evaluated) == len(set(evaluated)) == 6 == search["used"]["trials"]
    assert search["stopped"] == "budget: 6 trials" and search["space"] == 12
    assert not [t for t in trials if t["state"] == "running"]

    # every trial answered every validation question once; the finalists also the test questions
    rec = run.records
    validation = set(rec.loc[rec["split"] == "validation", "qid"])
    per_config = rec.groupby("config_id")["qid"].nunique()
    assert set(per_config.index) == set(evaluated)
    finalists = search["finalists"]
    assert len(finalists) == 2
    best = max((t for t in trials if t["state"] == "complete"), key=lambda t: t["values"]["quality"])
    assert best["config_id"] in finalists
    for cid, n in per_config.items():
        assert n == (len(set(rec["qid"])) if cid in finalists else len(validation))
    assert not rec.duplicated(["config_id", "qid"]).any()
    verdict = json.loads((spec.run_dir / "verdict.json").read_text())
    assert verdict["chosen"] == best["config_id"] and verdict["n_configs"] == 2
    assert verdict["chosen_on"] == "validation" and verdict["reported_on"] == "test"
    assert run.manifest["status"] == "complete"
    curve = search["best_so_far"]
    assert len(curve) == 6 and all(
        a["seconds"] <= b["seconds"] and a["best"] <= b["best"] for a, b in zip(curve, curve[1:])
    )

    again = run_cli("run", spec.path, "--cache", search_cache, "--no-progress", "--limit", SEARCH_LIMIT)
    assert again.returncode == 0, describe_proc(again)
    assert json.loads((spec.run_dir / "manifest.json").read_text())["search"]["trials"] == trials
    shown = run_cli("show", spec.run_dir)
    assert shown.returncode == 0, describe_proc(shown)
    assert "search: tpe (seed 3, objectives quality by mrr): 6 of 12 configurations evaluated" in shown.stdout
    assert "6 configurations never evaluated" in shown.stdout and f"use {best['config_id']}" in shown.stdout
    report = run_cli("report", spec.run_dir)
    assert report.returncode == 0, describe_proc(report)
    page = (spec.run_dir / "report.html").read_text(encoding="utf-8")
    assert '<section id="search">' in page and "Search: best so far against compute" in page
    plots = run_cli("plot", spec.run_dir, "--out", tmp_path / "figs")
    assert plots.returncode == 0 and (tmp_path / "figs" / "search_progress.png").is_file(), describe_proc(plots)
    assert (tmp_path / "figs" / "pareto_front.png").is_file()  # quality against each trial's own latency


@pytest.mark.parametrize(
    "change, match",
    [
        ({"search": {"strategy": "random", "metric": "latency"}}, "search.metric"),
    ],
)
def test_search_errors_are_one_line(make_spec, run_cli, search_cache, change, match):
    spec = make_spec("search-bad", **change)
    proc = run_cli("run", spec.path, "--cache", search_cache, "--no-progress")
    assert proc.returncode != 0 and match in proc.stderr and "Traceback" not in proc.stderr


def test_a_raced_grid_drops_the_clearly_worse_and_answers_less(make_spec, search_cache, run_cli, describe_proc):
    """Top-1 against top-5 hit: top-1 configurations lose clearly and stop before the last look; every
    configuration that survives is answered on every validation question, the finalists on test too."""
    spec = make_spec(
        "race",
        top_k=[1, 5],
        search={"strategy": "grid", "racing": {"first": 0.2}, "finalists": 2},
        scoring={"metric": "hit", "bootstrap_samples": 200, "bertscore": {"baseline_pairs": 50}},
    )
    proc = run_cli("run", spec.path, "--cache", search_cache, "--no-progress", timeout=400)
    assert proc.returncode == 0, describe_proc(proc)
    run = load_run(spec.run_dir, proc)
    search = run.manifest["search"]
    rec = run.records
    n_val = int(rec.loc[rec["split"] == "validation", "qid"].nunique())
    dropped = [t for t in search["trials"] if t["state"] == "pruned"]
    best = max(t["values"]["quality"] for t in search["trials"] if t["state"] == "complete")
    assert dropped and any(t["config_id"].endswith("-k1") for t in dropped), search["trials"]
    assert all(t["values"]["quality"] < best for t in dropped)
    for t in search["trials"]:
        rows = rec[(rec["config_id"] == t["config_id"]) & (rec["split"] == "validation")]
        assert len(rows) == t["questions"] == (t["dropped"]["at"] if t["state"] == "pruned" else n_val)
        if t["state"] == "pruned":
            assert t["dropped"]["at"] < n_val and t["dropped"]["p"] < 0.05 and t["config_id"] not in search["finalists"]
    assert search["used"]["pairs"] < 12 * n_val and search["used"]["pruned"] == len(dropped)
    assert run.manifest["status"] == "complete" and run.manifest["records"] == run.manifest["expected_records"]
    assert f"{len(dropped)} dropped by racing" in proc.stdout


def test_trials_reuse_what_earlier_trials_retrieved_without_mixing_their_indexes(
    make_spec, search_cache, run_cli, describe_proc
):
    """Greedy tries vector, then fusion, on the same splitter in separate trials: the retrievers kept from the
    vector trial (no BM25 index opened) must not serve fusion; every trial answers without error. Two reference
    baselines ride along: never a trial, answered on every question once the search is done, and the verdict
    measures its pick against them."""
    spec = make_spec(
        "search-greedy",
        search={"strategy": "greedy", "finalists": 1, "budget": {"fraction": 1}},
        scoring={"metric": "mrr", "bootstrap_samples": 200, "bertscore": {"baseline_pairs": 50}},
        baselines=["oracle", "no_retrieval"],
    )
    proc = run_cli("run", spec.path, "--cache", search_cache, "--no-progress", "--limit", 30)
    assert proc.returncode == 0, describe_proc(proc)
    run = load_run(spec.run_dir, proc)
    ids = [t["config_id"] for t in run.manifest["search"]["trials"]]
    assert any("vector" in i for i in ids) and any("fusion" in i for i in ids), ids
    assert run.records["error"].isna().all()
    assert not any(i.startswith("baseline-") for i in ids + run.manifest["search"]["finalists"])
    refs = run.records[run.records["config_id"].str.startswith("baseline-")]
    assert refs.groupby("config_id")["qid"].nunique().to_dict() == {"baseline-no_retrieval": 30, "baseline-oracle": 30}
    assert run.manifest["records"] == run.manifest["expected_records"]
    verdict = json.loads((spec.run_dir / "verdict.json").read_text(encoding="utf-8"))
    assert [b["baseline"] for b in verdict["baselines"]] == ["no_retrieval", "oracle"]
    assert verdict["chosen"] in run.manifest["search"]["finalists"]
    oracle = verdict["baselines"][1]
    assert oracle["mean"] == 1.0 and oracle["share"] == pytest.approx(verdict["test_mean"])  # MRR: the oracle's is 1
    show = run_cli("show", spec.run_dir)  # the verdict recomputed from the records measures them too
    assert show.returncode == 0 and "against the reference baselines (test): no_retrieval" in show.stdout
