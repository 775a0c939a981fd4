"""When a re-run keeps its outputs (``pipelines.outputs.write``): only with the same journal and settings, never
under a key left by a run killed while it rewrote them, and an empty kept summary still prints."""

from __future__ import annotations

import json

from ragsweep.config import parse_spec


class _Journal:
    def __init__(self, revision: int, run_id: str) -> None:
        self._revision, self._run_id = revision, run_id

    def revision(self) -> int:
        return self._revision

    def meta(self, key: str):
        return self._run_id if key == "run_id" else None


def _spec(tmp_path):
    return parse_spec(
        {
            "name": "t",
            "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
            "splitters": [{"kind": "token", "chunk_size": 128}],
            "retrievers": [{"kind": "bm25"}],
            "top_k": [3],
            "output_dir": str(tmp_path),
        }
    )


def test_a_replaced_journal_with_the_same_revision_count_rebuilds(tmp_path):
    from types import SimpleNamespace

    from ragsweep.pipelines.outputs.write import outputs_key

    spec = _spec(tmp_path)

    def key(journal) -> str:
        stats = SimpleNamespace(stopped=None)
        state = dict(questions=[], configs=[], scorer_key="k", split=None, stage2_info=None, search_info=None)
        return outputs_key(SimpleNamespace(spec=spec, journal=journal, stats=stats, **state))  # type: ignore[arg-type]

    assert key(_Journal(7, "a")) == key(_Journal(7, "a"))
    assert key(_Journal(7, "a")) != key(_Journal(7, "b"))  # a deleted and recreated journal
    assert key(_Journal(7, "a")) != key(_Journal(8, "a"))


def test_outputs_being_rewritten_are_not_described_by_the_old_key(tmp_path):
    from ragsweep.pipelines.outputs.manifest import forget_outputs, read_previous, write_manifest

    write_manifest(tmp_path, {"status": "running", "outputs": {"key": "old", "records": 3}})
    forget_outputs(tmp_path)
    assert read_previous(tmp_path) == {"status": "running"}
    forget_outputs(tmp_path)  # nothing to forget: unchanged
    assert json.loads((tmp_path / "manifest.json").read_text()) == {"status": "running"}


def test_an_empty_kept_summary_is_read_as_an_empty_table(tmp_path):
    import pandas as pd

    from ragsweep.pipelines.outputs.table import read_summary

    pd.DataFrame().to_csv(tmp_path / "summary.csv", index=False)
    assert read_summary(tmp_path / "summary.csv") == []


def test_the_table_from_summary_csv_equals_the_table_from_the_dataframe(tmp_path):
    """A no-op re-run prints the kept summary.csv read without pandas: the same table, blanks as '-'."""
    import math

    import pandas as pd
    from rich.console import Console

    from ragsweep.pipelines.outputs.columns import TABLE_METRICS
    from ragsweep.pipelines.outputs.table import print_summary, read_summary

    rows = []
    for i, (cid, f1) in enumerate(
        [("a-bm25-k3", 0.41), ("b-vector-k3", math.nan), ("c-fusion-k3", 0.52), ("1234", 0.41)]
    ):
        row = {
            "config_id": cid,
            "config_hash": f"00{i}e5",
            "split": "test",
            "n_questions": 10,
            "n_errors": i % 2,
            "retrieval_ms_median": 1.5 * i,
        }
        for m in TABLE_METRICS:
            v = f1 if m == TABLE_METRICS[0] else 0.1 * i
            row |= {m: v, f"{m}_lo": v - 0.05, f"{m}_hi": v + 0.05}
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame.to_csv(tmp_path / "summary.csv", index=False)

    def shown(summary) -> str:
        console = Console(record=True, width=200)
        print_summary(summary, console)
        return console.export_text()

    text = shown(read_summary(tmp_path / "summary.csv"))
    assert text == shown(frame)
    assert text.index("c-fusion-k3") < text.index("a-bm25-k3") < text.index("1234") < text.index("b-vector-k3")
    assert read_summary(tmp_path / "summary.csv")[3]["config_id"] == "1234"  # ids stay text


def test_an_unmeasured_score_is_stored_as_null_and_an_older_nan_row_is_rescored(tmp_path):
    """SQLite before 3.42 reads NaN as malformed JSON: a score of a question without a reference answer is
    stored as null (read back as NaN), and a NaN row an older run wrote is found unscored, not an error."""
    import math

    from ragsweep.pipelines.journal import Journal

    j = Journal(tmp_path / "journal.sqlite")
    for qid in ("q1", "q2", "q3"):
        j.add_answer("h", qid, "c", {"answer": "x"})
    j.add_score("h", "q1", {"bertscore_f1": math.nan, "scorer": "k"})
    j.add_score("h", "q2", {"bertscore_f1": 0.5, "scorer": "k"})
    j.flush()
    j._db.execute("""INSERT OR REPLACE INTO score VALUES ('h', 'q3', '{"bertscore_f1": NaN, "scorer": "k"}')""")
    j._db.commit()
    assert j.unscored("k") == {("h", "q3")}
    assert math.isnan(j.scores()[("h", "q1")]["bertscore_f1"]) and j.scores()[("h", "q2")]["bertscore_f1"] == 0.5
    j.close()


def test_a_verdict_written_by_a_later_invocation_has_what_an_uninterrupted_runs_has(tmp_path, shared_cache):
    """A run whose second invocation has nothing left to answer for one splitter (its answers were journaled
    before: a resumed or widened run) does not chunk it again; its verdict still has that splitter's index size
    (costs[].chunks, smallest), as the verdict of one uninterrupted invocation does. It used to lose them."""
    import copy

    from conftest import BASE_SPEC, PATTERN, SENTENCE256

    from ragsweep.driver import SweepRequest, run_sweep

    def run(name: str, splitters: list) -> dict:
        data = copy.deepcopy(BASE_SPEC)
        data.update(splitters=splitters, retrievers=[{"kind": "bm25"}], top_k=[3], output_dir=str(tmp_path))
        req = SweepRequest(parse_spec(data), run_dir=tmp_path / name, cache_dir=shared_cache, limit=6, progress=False)
        return json.loads((run_sweep(req) / "verdict.json").read_text(encoding="utf-8"))

    run("grown", [SENTENCE256])  # the first invocation: one splitter
    grown = run("grown", [SENTENCE256, PATTERN])  # the second chunks only the new one
    whole = run("whole", [SENTENCE256, PATTERN])

    def timeless(verdict: dict) -> dict:
        costs = [{k: v for k, v in c.items() if k != "latency_ms"} for c in verdict["costs"]]
        return {**{k: v for k, v in verdict.items() if k not in ("costs", "fastest")}, "costs": costs}

    assert all(c.get("chunks") for c in grown["costs"]) and grown["smallest"] == whole["smallest"] is not None
    assert timeless(grown) == timeless(whole)


def test_a_killed_and_resumed_run_has_the_verdict_of_an_uninterrupted_one(
    make_spec, popen_cli, run_cli, kill_midway, tmp_path
):
    """Every invocation's counts reach the verdict. A run answers one splitter; the same run widened by a second
    splitter is killed (SIGKILL) while the LLM writes the new splitter's answers (the server holds each reply, so
    the kill lands there every time); the same command resumes it. Neither later invocation chunks the first
    splitter, yet the verdict equals an uninterrupted run's, latencies aside (``costs[].chunks``, ``smallest``)."""
    from conftest import PATTERN, SENTENCE256, describe
    from fake_openai import FakeOpenAI
    from test_stage2 import wait_idle

    key = "sk-resume-SECRET-1f3c"
    env = {"RESUME_KEY": key}

    def spec(name: str, splitters: list, fake: FakeOpenAI):
        llm = {"model": "resume-model", "base_url": fake.base_url, "api_key_env": "RESUME_KEY"}
        return make_spec(
            name, splitters=splitters, retrievers=[{"kind": "bm25"}], top_k=[3], generator={"kind": "llm"}, llm=llm
        )

    def verdict(run_dir) -> dict:
        v = json.loads((run_dir / "verdict.json").read_text(encoding="utf-8"))
        costs = [{k: x for k, x in c.items() if k != "latency_ms"} for c in v["costs"]]
        return {**{k: x for k, x in v.items() if k not in ("costs", "fastest")}, "costs": costs}

    with FakeOpenAI(api_key=key) as fake:
        run_dir, cache = tmp_path / "resumed", tmp_path / "cache"
        one = spec("resumed", [SENTENCE256], fake)
        first = run_cli("run", one.path, "--cache", cache, "--limit", 6, "--out", run_dir, env=env)
        assert first.returncode == 0, describe(first)
        both = spec("resumed", [SENTENCE256, PATTERN], fake)
        fake.set_rules([{"kind": "generation", "action": "sleep", "delay_ms": 2000}])
        started = len(fake.calls(include_events=True))
        args = ("run", both.path, "--cache", cache, "--limit", 6, "--out", run_dir)
        proc = popen_cli(*args, log_dir=tmp_path, env=env)
        kill_midway(
            proc,
            lambda: sum(e.get("event") == "start" for e in fake.calls(include_events=True)[started:]),
            1,
            timeout=120,
            what="generation requests",
            stderr_path=tmp_path / "stderr.txt",
        )
        wait_idle(fake)
        fake.set_rules([])
        resumed = run_cli(*args, env=env)
        assert resumed.returncode == 0, describe(resumed)
        whole = spec("whole", [SENTENCE256, PATTERN], fake)
        whole_cache = tmp_path / "whole-cache"  # its own LLM calls, paid as the resumed run paid its
        done = run_cli("run", whole.path, "--cache", whole_cache, "--limit", 6, "--out", tmp_path / "whole", env=env)
        assert done.returncode == 0, describe(done)
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "complete" and len(manifest["invocations"]) == 2  # the killed one wrote none
    last = manifest["invocations"][-1]  # the first splitter's answers were all done: nothing of it was planned
    assert last["skipped_already_done"] == 6 and last["answered"] == 6
    got = verdict(run_dir)
    assert all(c.get("chunks") for c in got["costs"]) and got["smallest"] is not None
    assert got == verdict(tmp_path / "whole")
