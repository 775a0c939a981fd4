"""The history axis (``history:`` none, concat, condense, condense_plus_context): its grid (``none`` keeps every id
and hash), its checks, and a sweep of a Giskard RAGET file's follow-ups against ``tests/fake_openai.py`` over HTTP
(the real ``openai`` client) that counts each condense request the server billed: one per (mode, follow-up),
whatever the retrievers and top_k that use it; none for a question asked alone."""

from __future__ import annotations

import copy

import pytest
from conftest import BASE_SPEC, MINILM, SENTENCE256, describe, load_run
from fake_openai import FakeOpenAI
from history_data import ALONE, FOLLOW_UPS, giskard_file

from ragsweep.config import ConcatHistorySpec, parse_spec
from ragsweep.datasets.types import Question, Turn
from ragsweep.errors import RagsweepError
from ragsweep.history.base import in_full, query_texts
from ragsweep.pipelines.grid import expand

KEY = "sk-history-test-41c7"
SEEN = "Answered with the conversation in the prompt."
MODES = [{"kind": "none"}, {"kind": "concat"}, {"kind": "condense"}, {"kind": "condense_plus_context"}]


def _spec(**over) -> dict:
    data = copy.deepcopy(BASE_SPEC)
    data.update({"splitters": [SENTENCE256], "retrievers": [{"kind": "bm25"}, {"kind": "vector"}], **over})
    return data


def test_none_keeps_ids_and_hashes_and_each_mode_is_a_configuration():
    plain = {c.config_id: c.config_hash for c in expand(parse_spec(_spec()))}
    llm = {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None}
    configs = expand(parse_spec(_spec(history=MODES, llm=llm)))
    swept = {c.config_id: c for c in configs}
    assert {cid: swept[cid].config_hash for cid in plain} == plain  # none: the configurations as they were
    assert len(configs) == 4 * len(plain)
    concat = swept["sentence256-minilm-vector-concat-k5"]
    assert concat.history.kind == "concat" and concat.rewrite_llm is None  # offline
    assert concat.labels()["history"] == "concat" and concat.retrieval_label == "vector+concat"
    condense = swept["sentence256-bm25-condense_ctx-k3"]
    assert condense.rewrite_llm is not None and condense.identity()["history"] == {"kind": "condense_plus_context"}
    assert len({c.config_hash for c in configs}) == len(configs)
    from ragsweep.search.space import SearchSpace

    space = SearchSpace(configs)  # a search chooses the mode like any other axis
    assert space.options["history"] == ["none", "concat", "condense", "condense_ctx"]
    assert "history" not in SearchSpace(expand(parse_spec(_spec()))).options  # one value: no choice


def test_a_mode_that_asks_an_llm_needs_one_and_labels_are_distinct():
    with pytest.raises(RagsweepError, match=r"history\[condense\]: kind condense rewrites follow-ups with an LLM"):
        parse_spec(_spec(history=[{"kind": "none"}, {"kind": "condense"}]))
    with pytest.raises(RagsweepError, match="history: two entries share the label 'concat'"):
        parse_spec(_spec(history=[{"kind": "concat"}, {"kind": "concat", "user_turns": 2}]))


def test_concat_searches_the_last_user_turns_then_the_follow_up():
    history = (Turn("user", "About the drone bylaw."), Turn("assistant", "Yes."), Turn("user", "At night?"))
    q = Question("f", "How high?", history=history)
    assert query_texts(ConcatHistorySpec(kind="concat"), q) == [
        "How high?",
        "About the drone bylaw.\nAt night?\nHow high?",
    ]
    assert query_texts(ConcatHistorySpec(kind="concat", user_turns=1), q)[1] == "At night?\nHow high?"
    assert query_texts(ConcatHistorySpec(kind="concat"), Question("a", "Alone?")) == ["Alone?"]
    assert query_texts(None, q) == ["How high?"]
    # what the judges (and condense_plus_context's generator) read of a follow-up: the conversation, then it
    assert in_full(q) == (
        "Conversation so far:\nuser: About the drone bylaw.\nassistant: Yes.\nuser: At night?\n"
        "Follow-up question: How high?"
    )
    assert in_full(Question("a", "Alone?")) == "Alone?"


def _ranked(record) -> list[tuple]:
    return [(s["node_id"], s["score"]) for s in record["sources"]]


def _sweep_data(name: str, fake: FakeOpenAI, questions, out_dir) -> dict:
    return _spec(
        name=name,
        dataset={"corpus": {"format": "demo"}, "questions": {"format": "giskard", "path": str(questions)}},
        embeddings=[MINILM],
        top_k=[3, 5],
        history=MODES,
        generator={"kind": "llm"},
        llm={"model": f"{name}-model", "base_url": fake.base_url, "api_key_env": "HIST_KEY", "concurrency": 4},
        scoring={"bootstrap_samples": 200, "bertscore": {"baseline": "none"}},
        output_dir=str(out_dir),
    )


def test_follow_ups_of_a_giskard_file_swept_over_http(tmp_path, run_cli, monkeypatch, seeded_cache):
    import yaml

    from ragsweep.driver import SweepRequest, run_sweep

    monkeypatch.setenv("HIST_KEY", KEY)
    questions = giskard_file(tmp_path / "raget.jsonl")
    with FakeOpenAI(api_key=KEY) as fake:
        # the generator reads the conversation with condense_plus_context only: its prompts get this reply
        fake.set_rules([{"kind": "generation", "match": "Conversation so far:\nuser: ", "reply": SEEN}])
        data = _sweep_data("hist", fake, questions, tmp_path / "runs")
        path = tmp_path / "hist.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        dry = run_cli("run", path, "--dry-run", "--cache", seeded_cache, env={"HIST_KEY": KEY})
        assert dry.returncode == 0, describe(dry)
        rows = {}
        for line in dry.stdout.splitlines():
            cells = [c.strip() for c in line.strip().strip("│┃").split("│")]
            if len(cells) == 6:
                rows[cells[0]] = cells
        spec = parse_spec(data)
        out = run_sweep(SweepRequest(spec, run_dir=tmp_path / "runs" / "hist", cache_dir=seeded_cache, progress=False))
        stats = fake.stats()
        # each follow-up condensed once per LLM mode (2), whatever the retrievers (2) and top_k (2); none alone
        assert stats["by_kind"]["condense"] == 2 * FOLLOW_UPS, stats
        assert int(rows["history"][2]) == 2 * FOLLOW_UPS, rows  # the dry run predicted them exactly
        run_sweep(SweepRequest(spec, run_dir=tmp_path / "again", cache_dir=seeded_cache, progress=False))
        assert fake.stats()["calls"] == stats["calls"], "a re-run on the same cache called the server"
    run = load_run(out)
    recs = run.records
    assert recs["error"].isna().all(), recs["error"].dropna().tolist()
    assert len(recs) == 2 * 2 * 4 * (FOLLOW_UPS + ALONE)
    assert set(recs.loc[recs["history_turns"] > 0, "qtype"]) == {"conversational"}
    by = {(r["config_id"], r["qid"]): r for r in recs.to_dict("records")}
    for (cid, qid), r in by.items():
        if r["history"] is None:
            assert r["standalone_question"] is None
            continue
        plain = by[(cid.replace(f"-{r['history']}-", "-"), qid)]
        if r["history_turns"] == 0:  # a question asked alone: searched and ranked as with none
            assert r["standalone_question"] is None and _ranked(r) == _ranked(plain), (cid, qid)
        else:
            assert r["standalone_question"] and r["standalone_question"] != r["question"], (cid, qid)
            assert r["question"] in r["standalone_question"]  # concat and the scripted condense both keep it
            assert r["history"] != "concat" or r["retrieval_llm_calls"] != r["retrieval_llm_calls"]  # NaN: offline
    follow = recs[recs["history_turns"] > 0].fillna({"history": "none"})
    hit = follow.groupby("history")["hit"].mean()
    assert hit["concat"] > hit["none"] and hit["condense"] > hit["none"], hit.to_dict()
    seen = follow.groupby("history")["answer"].apply(lambda a: (a == SEEN).mean()).to_dict()
    assert seen == {"none": 0.0, "concat": 0.0, "condense": 0.0, "condense_ctx": 1.0}, seen
    assert not (recs.loc[recs["history_turns"] == 0, "answer"] == SEEN).any()
    verdict = (out / "verdict.json").read_text(encoding="utf-8")
    assert "conversational" in verdict  # the by-type table
    _check_report(out)


def _check_report(run_dir) -> None:
    """The report's explorer carries each follow-up's conversation and, beside each answer, its search text."""
    from ragsweep.results.report.build import build_report
    from ragsweep.results.report.explorer import explorer_data
    from ragsweep.results.run import load_run as load_data

    run = load_data(run_dir)
    data = explorer_data(run)
    follow = [q for q in data["questions"] if q["history"]]
    assert len(follow) == FOLLOW_UPS and all(q["history"][0][0] == "user" for q in follow)
    rewrites = {a["rewrite"] for q in follow for a in data["answers"][q["qid"]]}
    assert None in rewrites and len(rewrites) > 1  # none searched the follow-up itself; the others rewrote it
    html = build_report(run, "hit", "all")
    assert 'id="q-history"' in html and "Conversation before it" in html


def test_a_three_turn_chat_through_serve_answers_as_the_sweep_did(tmp_path, run_cli, monkeypatch, seeded_cache):
    """An exported condense_plus_context configuration, served: the openai client's conversation (the follow-up
    after a user and an assistant turn) gets the sweep's answer and sources for that follow-up; ``/query`` with
    ``history`` too; the chat engine is LlamaIndex's ``CondensePlusContextChatEngine``."""
    import httpx
    import yaml
    from llama_index.core.chat_engine import CondensePlusContextChatEngine
    from openai import OpenAI
    from served_app import running

    import ragsweep
    from ragsweep.driver import SweepRequest, run_sweep
    from ragsweep.serve import make_app

    monkeypatch.setenv("HIST_KEY", KEY)
    questions = giskard_file(tmp_path / "raget.jsonl", follow_ups=2, alone=1)
    cid = "sentence256-minilm-vector-condense_ctx-k5"
    with FakeOpenAI(api_key=KEY) as fake:
        data = _sweep_data("histserve", fake, questions, tmp_path / "runs")
        data.update(retrievers=[{"kind": "vector"}], top_k=[5], history=[{"kind": "none"}, MODES[3]])
        spec = parse_spec(data)
        (tmp_path / "s.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        run = load_run(
            run_sweep(SweepRequest(spec, run_dir=tmp_path / "runs" / "hs", cache_dir=seeded_cache, progress=False))
        )
        folder = tmp_path / "export" / cid
        proc = run_cli("export", tmp_path / "runs" / "hs", cid, "--out", folder, env={"HIST_KEY": KEY})
        assert proc.returncode == 0, describe(proc)
        rows = run.records[(run.records["config_id"] == cid) & (run.records["history_turns"] > 0)]
        assert len(rows) == 2
        first = rows.iloc[0]  # ragsweep ask: a follow-up of the dataset is asked with its conversation
        asked = run_cli("ask", tmp_path / "runs" / "hs", cid, first["question"], env={"HIST_KEY": KEY})
        assert asked.returncode == 0, describe(asked)
        assert "asked with the conversation before it (2 turns)" in asked.stdout
        assert " ".join(first["answer"].split())[:40] in " ".join(asked.stdout.split())
        pipeline = ragsweep.load_pipeline(folder)
        try:
            assert isinstance(pipeline.chat_engine, CondensePlusContextChatEngine)
            with running(make_app(pipeline)) as url:
                client = OpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0)
                for row in rows.to_dict("records"):
                    turns = [dict(t) for t in run_history(run, row["qid"])]
                    assert len(turns) >= 2  # with the follow-up: a conversation of three turns or more
                    messages = [{"role": "system", "content": "Answer briefly."}, *turns]
                    reply = client.chat.completions.create(
                        model=cid, messages=[*messages, {"role": "user", "content": row["question"]}]
                    )
                    assert reply.choices[0].message.content == row["answer"]
                    keys = ("doc_id", "start", "end", "score")
                    want = [tuple(s[k] for k in keys) for s in row["sources"]]
                    assert [tuple(s[k] for k in keys) for s in reply.model_extra["sources"]] == want
                    body = httpx.post(
                        f"{url}/query", json={"question": row["question"], "history": turns}, timeout=120
                    ).json()
                    assert (
                        body["answer"] == row["answer"] and [tuple(s[k] for k in keys) for s in body["sources"]] == want
                    )
                    alone = httpx.post(f"{url}/query", json={"question": row["question"]}, timeout=120).json()
                    assert alone["answer"] != row["answer"]  # without the conversation: another question
                bad = httpx.post(
                    f"{url}/query", json={"question": "And then?", "history": [{"role": "system", "content": "x"}]}
                )
                assert bad.status_code == 400 and "history.0.role" in bad.json()["error"]["message"]
        finally:
            pipeline.close()


def run_history(run, qid: str) -> list:
    """A question's conversation as ``questions.parquet`` keeps it."""
    import pandas as pd

    questions = pd.read_parquet(run.run_dir / "questions.parquet")
    return list(questions.set_index("qid").loc[qid, "history"])


def test_generate_writes_follow_ups_with_their_conversation(tmp_path):
    """``generate``'s conversational type: offline, a follow-up on another fact of the document the conversation
    named; by an LLM, its "Earlier: ... Follow-up: ..." split into the history and the follow-up. Evidence verified
    in the corpus either way; the file loads as a questions table with its history."""
    from ragsweep.config import GenerateSpec, TableQuestions
    from ragsweep.datasets.demo import load_demo_corpus
    from ragsweep.datasets.questions_table import load_table_questions
    from ragsweep.generate import prompts
    from ragsweep.generate.llm_source import candidate
    from ragsweep.generate.output import write
    from ragsweep.generate.run import generate_questions
    from ragsweep.generate.verify import Checker

    docs = load_demo_corpus()
    spec = GenerateSpec(questions=8, mix={"conversational": 1.0})
    outcome = generate_questions(spec, docs)
    assert len(outcome.questions) == 8 and {q["type"] for q in outcome.questions} == {"conversational"}
    titles = {d.doc_id: d.metadata.get("title", "") for d in docs}
    for q in outcome.questions:
        (doc,) = {e["doc_id"] for e in q["evidence"]}
        assert [t["role"] for t in q["history"]] == ["user", "assistant"] and titles[doc] in q["history"][0]["content"]
        assert titles[doc] not in q["question"]  # the follow-up leaves the document to the conversation
    out = tmp_path / "follow-ups.jsonl"
    write(out, outcome, {})
    loaded, unlocated = load_table_questions(TableQuestions(format="jsonl", path=out), docs)
    assert not unlocated and all(len(q.history) == 2 and q.evidence for q in loaded)

    follow = prompts.follow_up("Earlier: What does the Parking Ordinance cover?\nFollow-up: How long can I park there?")
    assert follow == (
        "How long can I park there?",
        [{"role": "user", "content": "What does the Parking Ordinance cover?"}],
    )
    parsed = {"question": "How long can I park there?", "answer": "2 hours", "quotes": [], "absent_terms": []}
    passage = type("P", (), {"doc_id": "parking-ordinance", "title": "t", "text": "x"})()
    unsplit = candidate("conversational", [passage], parsed, "m")
    assert unsplit.history == []
    assert Checker({"parking-ordinance": "x"}).check("q", unsplit)[1].startswith("no earlier question")
