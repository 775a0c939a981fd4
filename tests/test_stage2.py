"""Stage 2 end to end: LLM generation and LLM judges through the CLI, against the scripted fake server.

Each test starts a ``FakeOpenAI`` (tests/fake_openai.py) on loopback in this process and runs
``python -m ragsweep.cli run`` as a subprocess pointed at it, with the API key passed in ``$FAKE_KEY``.
The session's ``shared_cache`` holds embeddings, chunks and BERTScores; each test uses its own
``llm.model`` name, so its LLM calls (cached in ``<cache>/llm_calls.sqlite`` under model + messages +
parameters) never come from another test's run, and the server's call log counts what it paid for.

The reference run (``main_run``, once per module) serves the accounting, caching, selection,
unmeasured-verdict and key tests; the kill and refused-key tests judge a copy of its journal with
another judge model, so they run stage 2 only. The fake server's "tokenizer" counts whitespace words
(prompt: all message contents joined by single spaces; completion: the reply), so the figures the
product accounts can be recomputed from its log.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
from conftest import BASE_LIMIT, SENTENCE256, describe
from fake_openai import DEFAULT_MALFORMED_REPLY, FakeOpenAI

KEY = "sk-stage2-SECRET-9b1e7c4d2a6f"
ENV = {"FAKE_KEY": KEY}
PRICE_IN, PRICE_OUT = 1.0, 2.0  # USD per million tokens
JUDGES = ("correctness", "faithfulness", "relevancy")
BM25, VECTOR = {"kind": "bm25"}, {"kind": "vector"}
LIMIT = BASE_LIMIT  # 12 questions: 6 validation, 6 test (the split is over all 107 demo questions, seed 7)


# --------------------------------------------------------------------------- helpers
def llm_spec(fake: FakeOpenAI, model: str, **overrides) -> dict:
    return {"model": model, "base_url": fake.base_url, "api_key_env": "FAKE_KEY", "concurrency": 8, **overrides}


def stage2_spec(
    make_spec, name: str, fake: FakeOpenAI, model: str, *, llm: dict | None = None, priced: bool = True, **overrides
):
    """A small stage-2 spec: 1 splitter x {bm25, vector} x top_k 3, LLM generator, all three judges."""
    data = dict(
        splitters=[SENTENCE256],
        retrievers=[BM25, VECTOR],
        top_k=[3],
        generator={"kind": "llm"},
        llm=llm_spec(fake, model, **(llm or {})),
        stage2={"top_n": 2, "max_configs": 3},
    )
    if priced:
        data["prices"] = {model: {"input": PRICE_IN, "output": PRICE_OUT}}
    data.update(overrides)
    return make_spec(name, **data)


def chat_log(fake: FakeOpenAI, include_events: bool = False) -> list[dict]:
    """The server's chat-completion log (completed calls; with ``include_events`` also "start" events)."""
    return [c for c in fake.calls(include_events=include_events) if c.get("event") or c["endpoint"] == "chat"]


def wait_idle(fake: FakeOpenAI, timeout: float = 10.0) -> None:
    """Wait until the server has finished (and logged) every request it received."""
    deadline = time.monotonic() + timeout
    while fake.stats()["in_flight"] and time.monotonic() < deadline:
        time.sleep(0.02)


def without_cut_requests(log: list[dict]) -> list[dict]:
    """The log without requests whose body never arrived (a client killed after sending the headers): the fake
    server reads such a body as ``{}`` and answers it as a model-less "generation"; they are not LLM calls."""
    cut = {c["key"] for c in log if "event" not in c and c["endpoint"] == "chat" and c["model"] is None}
    return [c for c in log if c["key"] not in cut]


def keys_with(log: list[dict], status: int) -> set[str]:
    return {c["key"] for c in log if "event" not in c and c["status"] == status}


def error_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("error:")]


def demo_question_text(qid: str) -> str:
    from ragsweep.datasets.demo import DEMO_QUESTIONS

    for line in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines():
        if line.strip() and json.loads(line)["id"] == qid:
            return json.loads(line)["question"]
    raise KeyError(qid)


def judged_values(records, judges=JUDGES) -> dict:
    """(config_id, qid) -> answer and every judge's status, raw reply and score (NaN as None)."""
    cols = ["answer", "error"] + [f"{j}{s}" for j in judges for s in ("", "_status", "_raw", "_reason")]
    out = {}
    for row in records.to_dict("records"):
        out[(row["config_id"], row["qid"])] = {
            c: (None if isinstance(row[c], float) and math.isnan(row[c]) else row[c]) for c in cols
        }
    return out


def assert_key_nowhere(paths: list[Path], texts: dict[str, str]) -> None:
    """The API key appears in none of the given files (read as bytes) or texts."""
    needle = KEY.encode()
    for name, text in texts.items():
        assert KEY not in text, f"the API key leaked into {name}"
    checked = 0
    for p in paths:
        if p.is_file():
            checked += 1
            assert needle not in p.read_bytes(), f"the API key leaked into {p}"
    assert checked, f"no file to check among {paths}"


def run_files(run_dir: Path) -> list[Path]:
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"manifest.json", "records.parquet", "summary.csv", "comparisons.csv", "journal.sqlite"} <= names, names
    return files


def llm_cache_files(cache: Path) -> list[Path]:
    files = sorted(cache.glob("llm_calls.sqlite*"))  # the database and its WAL / shared-memory files
    assert any(p.name == "llm_calls.sqlite" for p in files), f"no LLM cache in {cache}"
    return files


# --------------------------------------------------------------------------- the reference stage-2 run
SCRIPTED = {"q002": "malformed", "q003": "out of range", "q011": "score 2"}  # test questions (asserted below)


def scripted_correctness_rules() -> list[dict]:
    """Correctness replies for three questions (a question's text appears in its own judge prompt only):
    one unparseable, one out of the 1-5 range, one valid but low; every other verdict is the default 4."""
    q_malformed, q_out_of_range, q_low = (demo_question_text(q) for q in SCRIPTED)
    return [
        {"kind": "correctness", "action": "malformed", "match": q_malformed},
        {"kind": "correctness", "action": "reply", "reply": "7\nbad", "match": q_out_of_range},
        {"kind": "correctness", "action": "reply", "reply": "2\nPartly correct.", "match": q_low},
    ]


@pytest.fixture(scope="module")
def main_run(make_spec, shared_cache, run_cli, read_run):
    """One stage-2 run (bm25, vector, fusion with one LLM query rewrite; three scripted correctness replies)
    on a fresh model name. The server's log is kept so tests can compare the accounting with what it served;
    later tests derive runs from this one (a copy of its run directory judged by another model)."""
    fake = FakeOpenAI(rules=scripted_correctness_rules(), api_key=KEY).start()
    try:
        spec = stage2_spec(
            make_spec, "s2main", fake, "s2-main-model", retrievers=[BM25, VECTOR, {"kind": "fusion", "num_queries": 2}]
        )
        proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", LIMIT, env=ENV, timeout=240)
        assert proc.returncode == 0, describe(proc)
        wait_idle(fake)
        run = read_run(spec.run_dir, proc)
        yield {
            "fake": fake,
            "spec": spec,
            "proc": proc,
            "run": run,
            "log": chat_log(fake),
            "rules_used": [r["used"] for r in fake.rules()],
        }
    finally:
        fake.stop()


def rejudge_spec(make_spec, main_run, name: str, fake: FakeOpenAI, judge_model: str, **judge_llm):
    """The main run's spec with another judge model (``stage2.llm`` on ``fake``), in a new run directory
    holding a copy of the main run's journal (as a new run: its own run id). Stage 1 is done there, so
    only stage 2 runs, and all of it (the judge settings changed)."""
    import shutil
    import sqlite3

    data = {k: v for k, v in main_run["spec"].data.items() if k not in ("name", "output_dir")}
    data["stage2"] = {**data["stage2"], "llm": llm_spec(fake, judge_model, **judge_llm)}
    data["prices"] = {**data["prices"], judge_model: {"input": PRICE_IN, "output": PRICE_OUT}}
    spec = make_spec(name, **data)
    spec.run_dir.mkdir(parents=True)
    shutil.copy(main_run["run"].run_dir / "journal.sqlite", spec.run_dir / "journal.sqlite")
    db = sqlite3.connect(str(spec.run_dir / "journal.sqlite"))
    with db:
        db.execute("DELETE FROM meta WHERE key = 'run_id'")
    db.close()
    return spec


def test_first_run_accounts_exactly_what_the_server_billed(main_run):
    """Usage in the manifest = the server's scripted token counts of its 200 replies, priced by the spec."""
    run, log = main_run["run"], main_run["log"]
    m, inv = run.manifest, run.invocation
    assert m["status"] == "complete", describe(main_run["proc"])
    ok = [c for c in log if c["status"] == 200]
    assert ok and len(ok) == len(log), f"unexpected non-200 replies: {[c for c in log if c['status'] != 200]}"
    usage = m["usage"]
    p = sum(c["prompt_tokens"] for c in ok)
    c = sum(c["completion_tokens"] for c in ok)
    assert usage["calls"] == len(ok) == inv["llm_calls_made"]
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (p, c)
    assert usage["cost_usd"] == pytest.approx((p * PRICE_IN + c * PRICE_OUT) / 1e6, rel=1e-9, abs=1e-12)
    assert "unpriced_calls" not in usage

    # by stage: the LLM generator, the fusion query rewrites and the judges, each matching the server's kinds
    by_kind: dict[str, list[dict]] = {}
    for call in ok:
        by_kind.setdefault(call["kind"], []).append(call)
    stages = usage["by_stage"]
    assert {"generation", "judge", "query_rewrite"} <= set(stages), stages.keys()
    expected = {
        "generation": by_kind.get("generation", []),
        "query_rewrite": by_kind.get("query_gen", []),
        "judge": [x for j in JUDGES for x in by_kind.get(j, [])],
        "probe": by_kind.get("probe", []),  # how the server takes a schema: one request, held to it at once
    }
    assert len(expected["probe"]) == 1 and expected["probe"][0]["response_format"] == "json_schema"
    for stage, calls in expected.items():
        got = stages[stage]
        assert got["calls"] == len(calls) > 0, (stage, got)
        assert got["prompt_tokens"] == sum(x["prompt_tokens"] for x in calls), stage
        assert got["completion_tokens"] == sum(x["completion_tokens"] for x in calls), stage
    assert sum(s["calls"] for s in stages.values()) == usage["calls"]
    assert set(usage["by_judge"]) == set(JUDGES)
    for j in JUDGES:
        got, calls = usage["by_judge"][j], by_kind[j]
        assert got["calls"] == len(calls), (j, got)
        assert got["prompt_tokens"] == sum(x["prompt_tokens"] for x in calls), j
        assert got["cost_usd"] == pytest.approx(
            sum(x["prompt_tokens"] * PRICE_IN + x["completion_tokens"] * PRICE_OUT for x in calls) / 1e6, abs=1e-12
        )
    assert sum(b["calls"] for b in usage["by_configuration"].values()) == usage["calls"]
    # rewrites serve every configuration, and so does the probe of how the server takes a schema
    assert usage["by_configuration"]["(shared)"]["calls"] == len(by_kind["query_gen"]) + len(by_kind["probe"])

    # per record: each call's cost is charged once (calls shared between configurations are cache hits)
    rec = run.records
    assert rec["cost_usd"].sum() == pytest.approx(stages["generation"]["cost_usd"], abs=1e-12)
    for j in JUDGES:
        assert rec[f"{j}_cost_usd"].sum() == pytest.approx(usage["by_judge"][j]["cost_usd"], abs=1e-12), j
    assert inv["judgements_made"] == int(rec[[f"{j}_status" for j in JUDGES]].notna().sum().sum())
    assert inv["llm_retries"] == 0 and inv["llm_failed_calls"] == 0
    assert 1 < inv["llm_max_in_flight"] <= 8  # concurrent, within llm.concurrency
    assert "LLM: " in run.stdout and f"{usage['calls']} calls paid by this run" in run.stdout


def test_stage2_selection_is_reported(main_run):
    run = main_run["run"]
    m, rec = run.manifest, run.records
    s2 = m["stage2"]
    ids = [c["config_id"] for c in m["configurations"]]
    assert len(ids) == 3
    assert isinstance(s2["rule"], str) and "top 2" in s2["rule"], s2["rule"]
    assert 2 <= len(s2["selected"]) <= 3 and set(s2["selected"]) <= set(ids), s2["selected"]
    assert s2["metric"] == "bertscore_f1_rescaled" and s2["judges"] == list(JUDGES)
    assert {r["config_id"] for r in s2["ranking"]} == set(ids)

    summary = run.extra["summary_by_split"]
    assert set(summary["split"]) == {"test", "validation", "all"}
    assert len(summary) == 3 * len(ids)  # one row per (configuration, split)
    flags = summary.groupby("config_id")["stage2_selected"].agg(set).to_dict()
    assert flags == {cid: {cid in s2["selected"]} for cid in ids}, flags

    # judged: the selected configurations on the test questions, nothing else
    judged = rec["correctness_status"].notna()
    # stage 2 judges its selection on the validation questions (where a verdict by a judge is chosen) and the test
    # ones (where it is reported)
    want = rec["config_id"].isin(s2["selected"])
    assert (judged == want).all() and s2["questions"] == {"validation": LIMIT // 2, "test": LIMIT // 2}
    assert rec.loc[want, ["faithfulness_status", "relevancy_status"]].eq("ok").all().all()
    assert rec.loc[want, "correctness_status"].isin(["ok", "unmeasured"]).all()
    assert set(rec["split"]) == {"test", "validation"} and rec["split"].eq("test").sum() == 3 * LIMIT // 2

    import pandas as pd

    comp = pd.read_csv(run.run_dir / "comparisons.csv")
    assert {"stage", "metric", "best", "other", "p_holm", "d_z"} <= set(comp.columns)
    assert set(comp["stage"]) == {"stage1", "stage2"}
    assert set(comp.loc[comp["stage"] == "stage1", "metric"]) == {"bertscore_f1_rescaled"}
    assert set(comp.loc[comp["stage"] == "stage1", "other"]) | set(comp.loc[comp["stage"] == "stage1", "best"]) == set(
        ids
    )
    s2rows = comp[comp["stage"] == "stage2"]
    assert {"correctness", "faithfulness", "relevancy"} <= set(s2rows["metric"])
    assert set(s2rows["best"]) | set(s2rows["other"]) <= set(s2["selected"])
    # the reference is the configuration ranked first on the validation questions, not the test-set maximum
    assert set(comp["best"]) == {s2["selected"][0]}
    assert comp["p_holm"].between(0, 1).all()


def test_second_identical_run_makes_no_calls(main_run, run_cli, read_run, shared_cache, tmp_path):
    fake, spec, first = main_run["fake"], main_run["spec"], main_run["run"]
    before = fake.stats()["calls"]

    # the same command again: everything is in the run's journal
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", LIMIT, env=ENV, timeout=120)
    assert proc.returncode == 0, describe(proc)
    again = read_run(spec.run_dir, proc)
    assert fake.stats()["calls"] == before, "a plain re-run called the LLM"
    inv = again.invocation
    assert inv["llm_calls_made"] == 0 and inv["answered"] == 0 and inv["judgements_made"] == 0
    assert inv["skipped_already_done"] == 3 * LIMIT
    assert again.manifest["status"] == "complete"
    assert again.manifest["usage"] == first.manifest["usage"]  # what this run directory paid for, unchanged
    assert judged_values(again.records) == judged_values(first.records)

    # the same spec into a new run directory: every answer and judgement comes from the LLM cache
    out = tmp_path / "again"
    proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", LIMIT, "--out", out, env=ENV, timeout=120)
    assert proc.returncode == 0, describe(proc)
    other = read_run(out, proc)
    assert fake.stats()["calls"] == before, "the LLM cache was not used: the server was called again"
    inv = other.invocation
    assert inv["llm_calls_made"] == 0 and inv["llm_cache_hits"] > 0, inv
    assert inv["answered"] == 3 * LIMIT and inv["judgements_made"] == first.invocation["judgements_made"]
    assert other.manifest["status"] == "complete"
    usage = other.manifest["usage"]  # this run directory paid for nothing (its totals are absent when zero)
    assert usage.get("calls", 0) == 0 and usage.get("cost_usd", 0) == 0 and not usage["by_stage"], usage
    assert other.manifest["stage2"]["selected"] == first.manifest["stage2"]["selected"]
    assert judged_values(other.records) == judged_values(first.records)
    assert_key_nowhere(run_files(out), {"stdout": proc.stdout, "stderr": proc.stderr})


def test_api_key_is_not_written_by_a_successful_run(main_run, shared_cache):
    run = main_run["run"]
    assert_key_nowhere(
        run_files(run.run_dir) + llm_cache_files(shared_cache), {"stdout": run.stdout, "stderr": run.stderr}
    )
    llm = run.manifest["llm"]["llm"]
    assert llm["api_key_env"] == "FAKE_KEY" and llm["price_usd_per_million"] == {"input": PRICE_IN, "output": PRICE_OUT}


# --------------------------------------------------------------------------- retries
def test_retries_on_429_500_and_timeouts_then_completes(make_spec, shared_cache, run_cli, read_run):
    rules = [
        {"kind": "generation", "action": "status", "status": 429, "retry_after": 0.2, "times": 3},
        {"kind": "correctness", "action": "status", "status": 500, "times": 2},
        {"kind": "relevancy", "action": "sleep", "delay_ms": 3000, "times": 1},  # longer than llm.timeout
    ]
    with FakeOpenAI(rules=rules, api_key=KEY) as fake:
        spec = stage2_spec(make_spec, "s2retry", fake, "s2-retry-model", llm={"timeout": 1})
        proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", LIMIT, env=ENV, timeout=180)
        assert proc.returncode == 0, describe(proc)
        wait_idle(fake)
        log = chat_log(fake)
        starts = [e for e in chat_log(fake, include_events=True) if e.get("event") == "start"]
        used = {r["kind"]: r["used"] for r in fake.rules()}
    run = read_run(spec.run_dir, proc)
    inv = run.invocation
    assert run.manifest["status"] == "complete"
    assert used == {"generation": 3, "correctness": 2, "relevancy": 1}, used
    assert inv["llm_retries"] >= 6, inv  # 3 x 429 + 2 x 500 + 1 timeout
    assert inv["llm_failed_calls"] == 0 and inv["failed"] == 0 and inv["judgements_failed"] == 0

    # every refused request was sent again (same request key) and then answered
    for status, kind in ((429, "generation"), (500, "correctness")):
        refused = [c for c in log if c["status"] == status]
        assert len(refused) == used[kind] and {c["kind"] for c in refused} == {kind}, refused
        for c in refused:
            later = [x for x in log if x["key"] == c["key"] and x["status"] == 200 and x["t_start"] >= c["t_end"]]
            assert later, f"{status} for {c['key'][:12]} ({kind}) was never retried to a 200"
    # 429: the client waited at least the server's Retry-After (0.2 s) before trying again
    for c in (x for x in log if x["status"] == 429):
        nxt = min(x["t_start"] for x in log if x["key"] == c["key"] and x["t_start"] >= c["t_end"])
        assert nxt - c["t_end"] >= 0.18, f"retried {nxt - c['t_end']:.3f} s after a 429 with Retry-After 0.2"

    # the slow request: the client gave up after llm.timeout (1 s) and sent it again while the server still slept
    slow = [c for c in log if c["kind"] == "relevancy" and c["t_end"] - c["t_start"] >= 2.9]
    assert len(slow) == 1, [round(c["t_end"] - c["t_start"], 2) for c in log if c["kind"] == "relevancy"]
    again = [s for s in starts if s["key"] == slow[0]["key"] and s["t_start"] > slow[0]["t_start"]]
    assert again and again[0]["t_start"] < slow[0]["t_end"], "the timed-out request was not retried before 3 s"
    assert again[0]["t_start"] - slow[0]["t_start"] >= 0.9  # ... and not before the 1 s timeout
    assert any(c["key"] == slow[0]["key"] and c["status"] == 200 and c["t_start"] > slow[0]["t_start"] for c in log)

    # the retried calls' answers and verdicts were recorded like any other
    rec = run.records
    assert rec["error"].isna().all() and rec["answer"].str.len().gt(0).all()
    sel = rec[rec["correctness_status"].notna()]
    assert len(sel) >= 2 * LIMIT and sel[[f"{j}_status" for j in JUDGES]].eq("ok").all().all()


# --------------------------------------------------------------------------- unmeasured judgements
def test_unparseable_judge_replies_are_unmeasured_counted_and_excluded(main_run):
    assert all(main_run["rules_used"]), "a scripted correctness reply was never served"
    run = main_run["run"]
    assert run.manifest["status"] == "complete"  # an unparseable verdict is a finished judgement, not a failure
    rec = run.records
    selected = run.manifest["stage2"]["selected"]
    test = rec[rec["config_id"].isin(selected) & rec["split"].eq("test")]
    assert set(SCRIPTED) <= set(test["qid"]), "the scripted questions must be test questions"

    by_q = {qid: grp for qid, grp in test.groupby("qid")}
    for row in by_q["q002"].itertuples():
        assert row.correctness_status == "unmeasured" and row.correctness_raw == DEFAULT_MALFORMED_REPLY
        assert "not a score" in row.correctness_reason
    for row in by_q["q003"].itertuples():
        assert row.correctness_status == "unmeasured" and row.correctness_raw == "7\nbad"
        assert "outside 1-5" in row.correctness_reason
    for qid in ("q002", "q003"):
        g = by_q[qid]
        assert g["correctness"].isna().all() and g["correctness_pass"].isna().all()
        assert g["faithfulness_status"].eq("ok").all()  # the other judges are unaffected
    for row in by_q["q011"].itertuples():
        assert row.correctness_status == "ok" and row.correctness == 2.0 and row.correctness_pass == 0.0
    others = test[~test["qid"].isin(["q002", "q003", "q011"])]
    assert others["correctness_status"].eq("ok").all() and others["correctness"].eq(4.0).all()
    assert test["correctness_reason"].isna().eq(test["correctness_status"].eq("ok")).all()

    summary = run.extra["summary_by_split"]
    summ = summary[summary["split"] == "test"].set_index("config_id")
    for cid in selected:
        r = rec[(rec["config_id"] == cid) & rec["split"].eq("test")]
        unmeasured = int(r["correctness_status"].eq("unmeasured").sum())
        measured = r.loc[r["correctness_status"].eq("ok"), "correctness"]
        assert unmeasured == 2 and len(measured) == len(r) - 2
        s = summ.loc[cid]
        assert s["correctness_unmeasured"] == unmeasured and s["correctness_pass_unmeasured"] == unmeasured
        assert s["correctness_failed"] == 0
        assert s["correctness_n"] == len(measured)
        # the mean is over measured rows only: not NaN because of them, and not pulled down by zeros
        assert s["correctness"] == pytest.approx(measured.mean()) and measured.mean() == pytest.approx(3.5)
        assert s["correctness_pass"] == pytest.approx(3 / 4)
        assert s["faithfulness_unmeasured"] == 0 and s["faithfulness"] == pytest.approx(1.0)
    for cid in set(summ.index) - set(selected):
        assert summ.loc[cid, "correctness_unmeasured"] == 0 and math.isnan(summ.loc[cid, "correctness"])


# --------------------------------------------------------------------------- kill -9 during stage 2
def test_killed_during_stage2_resumes_without_repeating_finished_calls(
    main_run, make_spec, shared_cache, popen_cli, run_cli, read_run, tmp_path, kill_midway
):
    concurrency = 4
    slow = [{"kind": j, "action": "sleep", "delay_ms": 250} for j in JUDGES]  # stage 2 takes a few seconds
    with FakeOpenAI(rules=slow, api_key=KEY) as fake:
        spec = rejudge_spec(make_spec, main_run, "s2kill", fake, "s2-kill-judge", concurrency=concurrency)
        args = ("run", spec.path, "--cache", shared_cache, "--limit", LIMIT)
        proc = popen_cli(*args, log_dir=tmp_path, env=ENV)
        t_kill = kill_midway(
            proc,
            lambda: sum(1 for c in chat_log(fake) if c["kind"] in JUDGES and c["status"] == 200),
            2 * concurrency,
            timeout=120,
            what="judge calls answered",
            stderr_path=tmp_path / "stderr.txt",
            poll=0.01,
        )
        wait_idle(fake)  # requests the killed process left behind finish (their replies go nowhere)
        first = chat_log(fake, include_events=True)
        fake.set_rules([])  # the re-run need not be slow
        done = run_cli(*args, env=ENV, timeout=180)
        assert done.returncode == 0, describe(done)
        everything = chat_log(fake, include_events=True)
    second = without_cut_requests(everything[len(first) :])
    first = without_cut_requests(first)
    assert all(c["model"] == "s2-kill-judge" for c in second if "event" not in c)
    everything = first + second
    odd = [(c["kind"], c["status"]) for c in everything if "event" not in c and c["kind"] not in (*JUDGES, "probe")]
    assert not odd, f"calls other than judges (stage 1 was done already): {odd}"
    # the new judge model's endpoint was probed for its schema support once: the re-run replays it from the cache
    assert [c["kind"] for c in everything if "event" not in c].count("probe") == 1

    answered_first = keys_with(first, 200)
    requested_second = {e["key"] for e in second if e.get("event") == "start"}
    repeated = answered_first & requested_second
    # requests in flight when the process died: started, not answered yet (their replies were lost)
    started = [e for e in first if e.get("event") == "start" and e["t_start"] < t_kill]
    answered_before_kill = [c for c in first if "event" not in c and c["t_end"] <= t_kill]
    in_flight_at_kill = len(started) - len(answered_before_kill)
    assert 0 <= in_flight_at_kill <= concurrency, (in_flight_at_kill, len(started), len(answered_before_kill))
    # only calls whose reply was on its way at the kill may be made again (tolerance: llm concurrency);
    # every call answered earlier was cached and is not asked again
    assert len(repeated) <= concurrency, (
        f"{len(repeated)} calls answered before the kill were made again (in flight at the kill: {in_flight_at_kill})"
    )
    for key in repeated:
        t_end = max(c["t_end"] for c in first if "event" not in c and c["key"] == key)
        assert t_end > t_kill - 1.0, f"call {key[:12]}, answered {t_kill - t_end:.2f} s before the kill, was repeated"
    assert len(answered_before_kill) >= 2 * concurrency > len(repeated)
    assert requested_second, "the re-run made no call: the kill came too late to leave judgements to do"

    run = read_run(spec.run_dir, done)
    m, inv = run.manifest, run.invocation
    assert m["status"] == "complete"
    assert len(m["invocations"]) == 1  # the killed process never wrote a manifest
    assert inv["answered"] == 0 and inv["skipped_already_done"] == 3 * LIMIT
    statuses = run.records[[f"{j}_status" for j in JUDGES]]
    n_judgements = int(statuses.notna().sum().sum())
    assert n_judgements == len(m["stage2"]["selected"]) * LIMIT * len(JUDGES)  # validation and test questions
    # judgements journaled in the last half second before the kill may be lost: they are redone from the cache
    assert 0 < inv["judgements_made"] <= n_judgements
    assert inv["llm_calls_made"] == len(keys_with(second, 200))
    assert statuses.isin(["ok", "unmeasured", None]).all().all()
    # the same verdicts as the main run's (where its server was not scripted)
    assert judged_values(run.records, ("faithfulness", "relevancy")) == judged_values(
        main_run["run"].records, ("faithfulness", "relevancy")
    )
    assert statuses["correctness_status"].dropna().eq("ok").all()
    # what this run directory paid for: each distinct call once, over both processes
    assert m["usage"]["calls"] == len(answered_first | keys_with(second, 200)), (
        m["usage"]["calls"],
        len(answered_first),
        len(keys_with(second, 200)),
        len(repeated),
    )


# --------------------------------------------------------------------------- dry run
def test_dry_run_spends_nothing(make_spec, shared_cache, run_cli):
    with FakeOpenAI(api_key=KEY) as fake:
        spec = stage2_spec(make_spec, "s2dry", fake, "s2-dry-model")
        proc = run_cli("run", spec.path, "--dry-run", "--cache", shared_cache, "--limit", LIMIT, env=ENV, timeout=120)
        stats = fake.stats()
    assert proc.returncode == 0, describe(proc)
    assert stats["calls"] == 0 and not fake.calls(include_events=True), "the dry run called the server"
    assert not spec.run_dir.exists(), "the dry run created the run directory"
    assert "nothing was spent" in proc.stdout
    rows = {}
    for line in proc.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("│┃").split("│")]
        if len(cells) == 6 and (cells[0] in ("generation", "query_rewrite", "total") or cells[0].startswith("judge:")):
            rows[cells[0]] = cells
    assert set(rows) == {"generation", "judge:correctness", "judge:faithfulness", "judge:relevancy", "total"}, describe(
        proc
    )
    assert rows["generation"][1] == "s2-dry-model" and int(rows["generation"][2]) == 2 * LIMIT  # 2 configs x 12
    for j in JUDGES:
        assert int(rows[f"judge:{j}"][2]) == 2 * LIMIT  # top 2 configurations x 6 validation + 6 test questions
    assert int(rows["total"][2]) == 2 * LIMIT + 3 * 2 * LIMIT
    assert float(rows["total"][5]) > 0  # priced: an upper bound in dollars


# --------------------------------------------------------------------------- the key
def test_dry_run_and_budget_refuse_bad_input_in_one_line(make_spec, shared_cache, run_cli, tmp_path):
    bad_prompt = tmp_path / "qa.txt"
    bad_prompt.write_text("Answer {query_str} please.")  # no {context_str}
    with FakeOpenAI(api_key=KEY) as fake:
        metric = stage2_spec(
            make_spec, "s2badmetric", fake, "s2-bad-model", stage2={"top_n": 2, "select_metric": "bertscore_f2"}
        )
        prompt = stage2_spec(
            make_spec, "s2badprompt", fake, "s2-bad-model", generator={"kind": "llm", "prompt_file": str(bad_prompt)}
        )
        runs = [
            run_cli("run", metric.path, "--dry-run", "--cache", shared_cache, env=ENV, timeout=120),
            run_cli("run", prompt.path, "--dry-run", "--cache", shared_cache, env=ENV, timeout=120),
            run_cli("run", metric.path, "--budget", "-1", "--cache", shared_cache, env=ENV, timeout=120),
        ]
        assert fake.stats()["calls"] == 0
    metric_run, prompt_run, budget_run = runs
    assert metric_run.returncode == 2 and metric_run.stderr.strip().count("\n") == 0, describe(metric_run)
    assert "stage2.select_metric: unknown metric 'bertscore_f2'; choose one of" in metric_run.stderr
    assert prompt_run.returncode == 2, describe(prompt_run)
    assert "generator.prompt_file:" in prompt_run.stderr and "{context_str}" in prompt_run.stderr
    assert budget_run.returncode == 2 and "--budget" in budget_run.stderr, describe(budget_run)


def test_refused_key_is_one_clear_line_and_never_written(main_run, make_spec, shared_cache, run_cli, read_run):
    """A 401 is fatal (not retried); the server echoes the key in its message, which must be scrubbed."""
    rules = [
        {
            "kind": "relevancy",
            "action": "status",
            "status": 401,
            "message": f"Incorrect API key provided: {KEY}. You can find your API key at ...",
        }
    ]
    with FakeOpenAI(rules=rules, api_key=KEY) as fake:
        spec = rejudge_spec(make_spec, main_run, "s2key", fake, "s2-key-judge")
        proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", LIMIT, env=ENV, timeout=180)
        wait_idle(fake)
        log = chat_log(fake)
        base_url = fake.base_url
    refused = [c for c in log if c["status"] == 401]
    assert proc.returncode == 2, describe(proc)
    assert refused and {c["kind"] for c in refused} == {"relevancy"}, "no 401 was served"
    assert len(refused) <= 8, f"{len(refused)} refused calls: a 401 must stop the stage (llm.concurrency 8)"
    assert len({c["key"] for c in refused}) == len(refused), "a 401 was retried"
    lines = error_lines(proc.stderr)
    assert len(lines) == 1, describe(proc)
    assert base_url in lines[0] and "$FAKE_KEY" in lines[0] and "401" in lines[0], lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout
    # work done before the refusal is kept and written, and the run is not complete
    run = read_run(spec.run_dir, proc)
    assert run.manifest["status"] == "incomplete" and run.invocation["stopped"] == "error"
    assert run.records["answer"].notna().sum() == 3 * LIMIT
    assert_key_nowhere(
        run_files(spec.run_dir) + llm_cache_files(shared_cache), {"stdout": proc.stdout, "stderr": proc.stderr}
    )


def test_wrong_key_is_refused_with_one_line_naming_the_variable(make_spec, shared_cache, run_cli):
    with FakeOpenAI(api_key="sk-the-server-wants-another-key") as fake:
        spec = stage2_spec(make_spec, "s2wrongkey", fake, "s2-wrongkey-model")
        proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", LIMIT, env=ENV, timeout=180)
        wait_idle(fake)
        log = chat_log(fake)
        base_url = fake.base_url
    assert proc.returncode == 2, describe(proc)
    assert log and all(c["status"] == 401 and not c["auth_ok"] for c in log)
    assert len(log) <= 8, f"{len(log)} calls after the key was refused"
    lines = error_lines(proc.stderr)
    assert len(lines) == 1 and "$FAKE_KEY" in lines[0] and base_url in lines[0], describe(proc)
    assert_key_nowhere(
        run_files(spec.run_dir) + llm_cache_files(shared_cache), {"stdout": proc.stdout, "stderr": proc.stderr}
    )


# --------------------------------------------------------------------------- budget
def test_budget_stops_cleanly_and_a_larger_budget_finishes_without_repaying(make_spec, shared_cache, run_cli, read_run):
    # The whole run costs about $0.03, generation about half; each call first reserves its worst case
    # (estimated prompt + max_tokens of output, ~$0.001 here), so this budget stops the run in stage 2.
    budget = 0.021
    with FakeOpenAI(api_key=KEY) as fake:
        spec = stage2_spec(make_spec, "s2budget", fake, "s2-budget-model", llm={"concurrency": 4, "max_tokens": 64})
        proc = run_cli(
            "run", spec.path, "--cache", shared_cache, "--limit", LIMIT, "--budget", budget, env=ENV, timeout=180
        )
        assert proc.returncode == 4, describe(proc)
        wait_idle(fake)
        first = chat_log(fake, include_events=True)
        stopped = read_run(spec.run_dir, proc)
        proc2 = run_cli(
            "run", spec.path, "--cache", shared_cache, "--limit", LIMIT, "--budget", 1.0, env=ENV, timeout=180
        )
        assert proc2.returncode == 0, describe(proc2)
        everything = chat_log(fake, include_events=True)
    second = everything[len(first) :]

    assert "stopped: budget" in proc.stderr and "Traceback" not in proc.stderr, describe(proc)
    m, inv = stopped.manifest, stopped.invocation
    assert m["status"] == "stopped_budget" and inv["stopped"] == "budget"
    assert inv["budget_usd"] == budget and 0 < inv["spent_usd"] <= budget
    paid = [c for c in first if "event" not in c and c["status"] == 200]
    assert paid and len(paid) == len([e for e in first if e.get("event") == "start"])
    cost = sum(c["prompt_tokens"] * PRICE_IN + c["completion_tokens"] * PRICE_OUT for c in paid) / 1e6
    assert inv["spent_usd"] == pytest.approx(cost, abs=1e-12) and m["usage"]["cost_usd"] == pytest.approx(cost)
    # finished work is kept: answers (and judgements, when it stopped in stage 2), but not all of it
    answers = int(stopped.records["answer"].notna().sum()) if not stopped.records.empty else 0
    judged = int(stopped.records["correctness_status"].notna().sum()) if "correctness_status" in stopped.records else 0
    assert answers > 0 and (answers < 2 * LIMIT or judged < 2 * LIMIT), (answers, judged)

    run = read_run(spec.run_dir, proc2)
    m2, inv2 = run.manifest, run.invocation
    assert m2["status"] == "complete" and inv2["spent_usd"] <= 1.0
    assert inv2["skipped_already_done"] == answers
    repeated = keys_with(first, 200) & {e["key"] for e in second if e.get("event") == "start"}
    assert not repeated, f"{len(repeated)} calls paid for before the budget stop were made again"
    total = (
        sum(
            c["prompt_tokens"] * PRICE_IN + c["completion_tokens"] * PRICE_OUT
            for c in everything
            if "event" not in c and c["status"] == 200
        )
        / 1e6
    )
    assert m2["usage"]["cost_usd"] == pytest.approx(total, abs=1e-12)
    assert inv2["spent_usd"] == pytest.approx(total - cost, abs=1e-12)


def test_budget_needs_a_price_for_every_model(make_spec, shared_cache, run_cli):
    with FakeOpenAI(api_key=KEY) as fake:
        spec = stage2_spec(make_spec, "s2noprice", fake, "s2-unpriced-model", priced=False)
        proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", LIMIT, "--budget", 1, env=ENV, timeout=120)
        calls = fake.stats()["calls"]
    assert proc.returncode == 2, describe(proc)
    lines = error_lines(proc.stderr)
    assert len(lines) == 1 and "prices" in lines[0] and "s2-unpriced-model" in lines[0], describe(proc)
    assert calls == 0


# --------------------------------------------------------------------------- unknown model
def test_unknown_model_is_one_clear_line(make_spec, shared_cache, run_cli):
    with FakeOpenAI(api_key=KEY, models=["other"]) as fake:
        spec = stage2_spec(make_spec, "s2nomodel", fake, "s2-missing-model")
        proc = run_cli("run", spec.path, "--cache", shared_cache, "--limit", LIMIT, env=ENV, timeout=120)
        wait_idle(fake)
        log = chat_log(fake)
    assert proc.returncode == 2, describe(proc)
    assert log and all(c["status"] == 404 for c in log) and len(log) <= 8, [c["status"] for c in log]
    lines = error_lines(proc.stderr)
    assert len(lines) == 1, describe(proc)
    assert "s2-missing-model" in lines[0] and "llm.model" in lines[0], lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout
