"""``ragsweep generate``: offline and LLM (a local OpenAI-compatible server over real HTTP) test sets whose every
evidence span is verified in the corpus, with rejections counted, near-duplicates removed, dry run, budget, cache."""

from __future__ import annotations

import json

import pytest
import yaml
from fake_openai import FakeOpenAI

from ragsweep.config import GenerateSpec
from ragsweep.datasets.demo import load_demo_corpus
from ragsweep.datasets.types import Document
from ragsweep.generate.candidates import Candidate, Quote
from ragsweep.generate.run import generate_questions, quotas
from ragsweep.generate.verify import Checker


def describe(r) -> str:
    return f"exit {r.returncode}\nstdout:\n{r.stdout[-3000:]}\nstderr:\n{r.stderr[-3000:]}"


@pytest.fixture(scope="module")
def demo_docs():
    return load_demo_corpus([])


def _assert_verified(questions, docs):
    texts = {d.doc_id: d.text for d in docs}
    for q in questions:
        if q["type"] == "out_of_scope":
            assert q["evidence"] == [] and q["reference_answer"] in (None, "The documents do not say.")
            continue
        assert q["evidence"], q
        for e in q["evidence"]:
            assert texts[e["doc_id"]][e["start"] : e["end"]] == e["text"] and len(e["text"]) >= 20


def test_quotas_split_by_largest_remainder():
    assert quotas({"simple": 0.5, "vague": 0.25, "double": 0.25}, 10) == {"simple": 5, "vague": 3, "double": 2}
    q = quotas(GenerateSpec(generator="llm").weights(), 37)
    assert sum(q.values()) == 37 and len(q) == 11


def test_offline_demo_set_is_verified_typed_and_deterministic(demo_docs):
    spec = GenerateSpec(questions=70)
    a = generate_questions(spec, demo_docs)
    b = generate_questions(spec, demo_docs)
    assert a.questions == b.questions  # seeded: the same file every time
    assert len(a.questions) == 70 and a.summary["shortfall"] == {}
    want = quotas(spec.weights(), 70)
    got = {t: sum(q["type"] == t for q in a.questions) for t in want}
    assert got == want
    _assert_verified(a.questions, demo_docs)
    assert {q["method"] for q in a.questions if q["type"] == "simple"} == {"definition", "duty", "ict"}
    # out-of-scope terms never occur in the document asked about
    checker = Checker({d.doc_id: d.text for d in demo_docs})
    for q in a.questions:
        if q["type"] == "out_of_scope":
            term = q["question"].split('"')[1]
            doc = next(d for d in demo_docs if f'"{d.metadata.get("title")}"' in q["question"])
            assert not checker.present(term, doc.doc_id), q
    # ICT: the query sentence itself is not its evidence, its neighbours are
    for q in a.questions:
        if q["method"] == "ict":
            assert all(q["question"] not in e["text"] for e in q["evidence"]) and len(q["evidence"]) == 2
    assert len({q["question"] for q in a.questions}) == 70
    assert generate_questions(GenerateSpec(questions=70, seed=1), demo_docs).questions != a.questions


def test_offline_generation_does_not_depend_on_the_hash_seed(run_cli, tmp_path):
    """Sets of terms and dictionaries are ordered explicitly: the same file under any PYTHONHASHSEED."""
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / f"q{seed}.jsonl"
        r = run_cli("generate", "demo", "--out", out, "--questions", "60", env={"PYTHONHASHSEED": seed})
        assert r.returncode == 0, describe(r)
        outs.append(out.read_text())
    assert outs[0] == outs[1]


def test_checker_locates_in_tiers_and_rejects_what_it_cannot_verify():
    doc = "§ 2 Deposits\nThe landlord shall return the “deposit” within 14 days of the end of the tenancy.\n"
    c = Checker({"lease": doc, "other": "Nothing about money here at all, only gardens."}, min_chars=20)
    ok = Candidate(
        "simple",
        "llm",
        "When is the deposit returned?",
        "14 days",
        [Quote('The landlord shall  return the "deposit" within 14 days', "lease")],
    )
    spans, reason = c.check("g1", ok)
    assert reason is None and doc[spans[0].start : spans[0].end].startswith("The landlord shall return")
    assert c.tiers()["normalised"] == 1
    wrong_doc = Candidate("simple", "llm", "Q?", None, [Quote("The landlord shall return the", "other")])
    assert c.check("g2", wrong_doc)[1] is None  # found elsewhere in the corpus: still verified
    made_up = Candidate("simple", "llm", "Q?", None, [Quote("The tenant must repaint every wall each year.", "lease")])
    assert c.check("g3", made_up)[1].startswith("evidence not in corpus")
    assert c.check("g4", Candidate("simple", "llm", "Q?", None, [Quote("14 days", "lease")]))[1].startswith(
        "evidence too short"
    )
    assert c.check("g5", Candidate("simple", "llm", "Q?", None, []))[1] == "no evidence"
    assert c.check("g6", Candidate("simple", "llm", "  ", None, []))[1] == "empty question"
    absent = Candidate("out_of_scope", "llm", "Pets?", None, source={"absent_terms": ["pet policy"]})
    assert c.check("g7", absent)[1] is None
    present = Candidate("out_of_scope", "llm", "Deposits?", None, source={"absent_terms": ["Deposit"]})
    assert c.check("g8", present)[1].startswith("out-of-scope term in corpus")
    assert c.check("g9", Candidate("out_of_scope", "llm", "Q?", None))[1] == "no out-of-scope term"
    # an absent term is checked where it is asked about: a term of "other" asked of "lease"
    scoped = Candidate("out_of_scope", "absent_term", "Gardens?", None, out_of_scope_term="gardens", doc_id="lease")
    assert c.check("g10", scoped)[1] is None
    assert c.check("g11", Candidate("out_of_scope", "absent_term", "Gardens?", None, out_of_scope_term="gardens"))[
        1
    ].startswith("out-of-scope term")


def test_near_duplicates_are_dropped_and_counted():
    docs = [
        Document("a", 'Rules A\n(1) "Vehicle" means any motor vehicle used on a public road by a driver.\n'),
        Document("b", 'Rules B\n(1) "Vehicle" means any motor vehicle used on a public road by a driver.\n'),
    ]
    out = generate_questions(GenerateSpec(questions=6, mix={"vague": 1}, methods=["definition"]), docs)
    # the same unanchored definition question twice: one kept, the other a near-duplicate
    assert [q["question"] for q in out.questions] == ['What does "Vehicle" mean?']
    assert out.summary["rejected"] == {"near-duplicate": 1} and out.summary["shortfall"] == {"vague": 5}


def test_spec_errors_name_the_field(run_cli, tmp_path):
    r = run_cli("generate", "demo", "--out", tmp_path / "q.jsonl", "--mix", "simpel=1")
    assert r.returncode == 2 and "generate.mix: unknown question type 'simpel'; did you mean 'simple'?" in r.stderr
    r = run_cli("generate", "demo", "--out", tmp_path / "q.jsonl", "--mix", "complex=1")
    assert r.returncode == 2 and "the offline generator cannot write complex" in r.stderr
    r = run_cli("generate", "demo", "--out", tmp_path / "q.jsonl", "--generator", "llm")
    assert r.returncode == 2 and "--generator llm: needs an endpoint" in r.stderr
    r = run_cli("generate", "demo", "--out", tmp_path / "q.jsonl", "--mix", "simple")
    assert r.returncode == 2 and "--mix: 'simple' is not TYPE=WEIGHT" in r.stderr
    r = run_cli("generate", tmp_path / "nothing.txt", "--out", tmp_path / "q.jsonl")
    assert r.returncode == 2 and "not a spec (.yaml), a folder" in r.stderr


def _spec(tmp_path, base_url: str, **generate) -> str:
    data = {
        "splitters": [{"kind": "sentence", "chunk_size": 256}],
        "retrievers": [{"kind": "bm25"}],
        "top_k": [3],
        "llm": {"model": "gen-model", "base_url": base_url, "api_key_env": "GEN_KEY"},
        "prices": {"gen-model": {"input": 1.0, "output": 2.0}},
        "dataset": {"questions": {"format": "jsonl", "path": "gen.jsonl"}},
        "scoring": {"bootstrap_samples": 100, "bertscore": {"baseline_pairs": 50}},
        "generate": {"generator": "llm", "questions": 24, **generate},
    }
    path = tmp_path / "gen.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path)


KEY = "sk-generate-secret-0123456789"


def test_llm_generation_over_http_verifies_rejects_caches_and_stops_on_budget(tmp_path, run_cli):
    env = {"GEN_KEY": KEY}
    out, cache = tmp_path / "gen.jsonl", tmp_path / "cache"
    fabricated = json.dumps(
        {
            "question": "Who repaints the moon under the ordinance?",
            "answer": "The mayor.",
            "evidence": [{"passage": 1, "quote": "The Mayor shall repaint the Moon every year."}],
        }
    )
    with FakeOpenAI(api_key=KEY) as fake:
        spec = _spec(tmp_path, fake.base_url)
        dry = run_cli("generate", spec, "--out", out, "--cache", cache, "--dry-run", env=env)
        assert dry.returncode == 0 and "generate" in dry.stdout and fake.stats()["calls"] == 0, describe(dry)
        [row] = [line for line in dry.stdout.splitlines() if line.startswith("│ generate")]
        predicted = int([c.strip() for c in row.strip().strip("│┃").split("│")][2])
        fake.set_rules(
            [
                {
                    "kind": "testset",
                    "match": "Question type: simple",
                    "action": "reply",
                    "reply": fabricated,
                    "times": 2,
                },
                # malformed, and again when asked once more: one unparseable reply
                {"kind": "testset", "match": "Question type: vague", "action": "malformed", "times": 1},
                {"kind": "testset", "match": "Your reply could not be read", "action": "malformed", "times": 1},
            ]
        )
        r = run_cli("generate", spec, "--out", out, "--cache", cache, env=env)
        # the scripted server asks one out-of-scope question only: the rest are near-duplicates, so the set is
        # short (exit 3) by two
        assert r.returncode == 3 and "short: wrote 22 of 24 questions asked" in r.stderr, describe(r)
        calls = fake.stats()["by_kind"]["testset"]
        assert calls >= predicted  # the first round is what the dry run counted; later rounds replace rejections
        questions = [json.loads(line) for line in out.read_text().splitlines()]
        summary = json.loads((tmp_path / "gen.generation.json").read_text())
        rejected = [json.loads(line) for line in (tmp_path / "gen.rejected.jsonl").read_text().splitlines()]
        _assert_verified(questions, load_demo_corpus([]))
        assert summary["rejected"]["evidence not in corpus"] == 2 and summary["rejected"]["unparseable reply"] == 1
        assert sum(summary["rejected"].values()) == len(rejected)
        assert not any("repaint" in q["question"] for q in questions)
        assert summary["per_type"]["simple"]["written"] == summary["per_type"]["simple"]["wanted"]  # replaced
        assert summary["shortfall"] == {"out_of_scope": 2}
        assert summary["llm"]["llm_calls"] == calls and summary["llm"]["cost_usd"] > 0
        assert "checked" in r.stdout and "evidence not in corpus 2" in r.stdout
        for path in (out, tmp_path / "gen.generation.json", tmp_path / "gen.rejected.jsonl"):
            assert KEY not in path.read_text()

        # the same command again: every reply from the cache, the same file
        before = out.read_text()
        again = run_cli("generate", spec, "--out", out, "--cache", cache, env=env)
        assert again.returncode == 3 and fake.stats()["by_kind"]["testset"] == calls, describe(again)
        assert out.read_text() == before

        # the generated set is a dataset: the spec that names it loads it, every span as written
        from ragsweep.config import load_spec
        from ragsweep.datasets.load import load_dataset

        ds = load_dataset(load_spec(spec).dataset)
        assert len(ds.questions) == len(questions) and not ds.evidence.get("unlocated")
        got = {q.qid: [(e.doc_id, e.start, e.end) for e in q.evidence if e.copy_of is None] for q in ds.questions}
        assert got == {q["id"]: [(e["doc_id"], e["start"], e["end"]) for e in q["evidence"]] for q in questions}

        # a budget smaller than one round: stops cleanly with what it kept (exit 4)
        spec2 = _spec(tmp_path, fake.base_url, seed=7)
        small = run_cli(
            "generate", spec2, "--out", tmp_path / "small.jsonl", "--cache", cache, "--budget", "0.004", env=env
        )
        assert small.returncode == 4, describe(small)
        s2 = json.loads((tmp_path / "small.generation.json").read_text())
        assert "budget" in s2["stopped"] and s2["written"] < 24 and s2["llm"]["cost_usd"] <= 0.004
        _assert_verified(
            [json.loads(x) for x in (tmp_path / "small.jsonl").read_text().splitlines()], load_demo_corpus([])
        )


# -- placeholders and prompt-template echoes; exit codes for a short set --

REAL_QUOTE = '"Personal data" means any information relating to an identified or identifiable natural person.'
# the out-of-scope JSON template of generate/prompts.py written back: valid JSON, and its placeholder term
# indeed occurs nowhere in the corpus
OOS_ECHO = json.dumps(
    {
        "question": "<the question>",
        "answer": "<the reference answer>",
        "evidence": [],
        "absent_terms": ["<a term of the question absent from the passages>"],
    }
)
# the other types' template written back: not JSON ("passage": <its number>), but recognisably an echo
EVIDENCE_ECHO = (
    '{"question": "<the question>", "answer": "<the reference answer>", "evidence": [{"passage": '
    '<its number>, "quote": "<one or more whole sentences copied verbatim from that passage>"}]}'
)
INSTRUCTION_ECHO = json.dumps(
    {
        "question": "The question must make sense on its own to someone who has not seen the passages.",
        "answer": "Any information about a natural person.",
        "evidence": [{"passage": 1, "quote": REAL_QUOTE}],
    }
)


def test_placeholders_and_prompt_text_are_rejected_but_real_questions_pass():
    from ragsweep.generate import placeholders, prompts

    c = Checker(
        {
            "lease": "§ 2 Deposits\nThe landlord shall return the deposit within 14 days of the end of the "
            "tenancy [Repealed] under section 3[a].\n"
        }
    )
    quote = [Quote("The landlord shall return the deposit within 14 days", "lease")]

    def reason(question, answer="14 days", quotes=quote, qtype="simple", **source):
        return c.check("g", Candidate(qtype, "llm", question, answer, quotes, source=source))[1]

    for bad, where in [
        ("<the question>", "question"),
        ("What is <...>?", "question"),
        ("What does {question} say?", "question"),
        ("[your question here]", "question"),
    ]:
        assert reason(bad).startswith("placeholder text: ") and reason(bad).endswith(f"in the {where}"), bad
    assert reason("When is the deposit returned?", answer="<the reference answer>").endswith("in the answer")
    assert reason("When is it returned?", quotes=[Quote("<one or more whole sentences>", "lease")]).startswith(
        "placeholder text"
    )
    assert reason("<the question>", None, [], "out_of_scope", absent_terms=["pets"]).startswith("placeholder text")
    assert reason("Pets?", None, [], "out_of_scope", absent_terms=["<a term>"]).endswith("out-of-scope term")
    # text of the prompt's instructions, as a question, an answer or a term, whole or mostly
    for echo in [
        "Read the passages and write a simple question about one fact stated in the passage.",
        "What is a simple question about one fact stated in the passage?",
        "The question must make sense on its own to someone who has not seen the passages",
        "Reply with one JSON object and nothing else",
        "Question type: simple",
        "the question",
    ]:
        assert reason(echo).startswith("prompt template echo: the question"), echo
    assert reason("When is the deposit returned?", answer="the reference answer").startswith(
        "prompt template echo: the answer"
    )
    assert reason(
        "Pets?", None, [], "out_of_scope", absent_terms=["a term of the question absent from the passages"]
    ).startswith("prompt template echo")
    # every sentence of every type's prompt is recognised: the template comes from prompts.build itself
    for t in prompts.TYPE_INSTRUCTIONS:
        for sentence in prompts.build(t, []).replace(":", ".").split("."):
            if len(sentence.split()) >= 4:
                assert placeholders.template_echo(sentence), (t, sentence)
    # real questions that share words with the instructions, and brackets the corpus itself has, pass
    for ok in [
        "When is the deposit returned?",
        "Under the lease, what question must the tenant answer on their own before the deposit is returned?",
        "I am a tenant; can I get my deposit back after 14 days?",
        "Earlier: who holds the deposit? And when must the landlord return it?",
        "What does the passage on deposits say about the end of the tenancy?",
        "Is a deposit due when section 3[a] is [Repealed]?",
        "Can a tenant with rent < 500 pay later?",
    ]:
        assert reason(ok) is None, ok
    assert reason("Pets?", "The documents do not say.", [], "out_of_scope", absent_terms=["pet policy"]) is None


def test_offline_questions_over_the_demo_corpus_are_never_placeholders(demo_docs):
    from itertools import islice

    from ragsweep.generate import placeholders
    from ragsweep.generate.facts import document_facts
    from ragsweep.generate.offline import OfflineRecipes
    from ragsweep.generate.run import document_titles

    titles = document_titles(demo_docs)
    recipes = OfflineRecipes(
        [document_facts(d.doc_id, titles[d.doc_id], d.text) for d in demo_docs], tuple(GenerateSpec().methods), 0
    )
    checker = Checker({d.doc_id: d.text for d in demo_docs})
    seen = 0
    for t in ("simple", "situational", "double", "comparative", "distracting", "vague", "out_of_scope"):
        for c in islice(recipes.stream(t), 2000):
            seen += 1
            assert placeholders.problem(c, checker.verbatim) is None, (t, c)
    assert seen > 1000


def _llm_generate(tmp_path, run_cli, rules, **generate):
    """``ragsweep generate`` with the LLM generator against the scripted server; (process, questions, summary,
    rejected)."""
    out = tmp_path / "gen.jsonl"
    with FakeOpenAI(api_key=KEY) as fake:
        fake.set_rules(rules)
        r = run_cli(
            "generate",
            _spec(tmp_path, fake.base_url, **generate),
            "--out",
            out,
            "--cache",
            tmp_path / "cache",
            env={"GEN_KEY": KEY},
        )
    read = lambda p: [json.loads(line) for line in p.read_text().splitlines()]  # noqa: E731
    summary = json.loads((tmp_path / "gen.generation.json").read_text())
    return r, read(out), summary, read(tmp_path / "gen.rejected.jsonl")


def test_llm_template_echoes_are_rejected_and_a_short_set_exits_3(tmp_path, run_cli):
    rules = [
        {"kind": "testset", "match": "Question type: out_of_scope", "reply": OOS_ECHO},
        {"kind": "testset", "match": "Question type: simple", "reply": INSTRUCTION_ECHO, "times": 1},
        {"kind": "testset", "match": "Question type: simple", "reply": EVIDENCE_ECHO, "times": 1},
    ]
    r, questions, summary, rejected = _llm_generate(
        tmp_path, run_cli, rules, questions=4, mix={"simple": 0.5, "out_of_scope": 0.5}
    )
    # the echoed out-of-scope template is not a verified out-of-scope question; normal replies pass
    assert [q["type"] for q in questions] == ["simple", "simple"], describe(r)
    assert r.returncode == 3, describe(r)
    assert not any(c in q["question"] + (q["reference_answer"] or "") for q in questions for c in "<>{}")
    _assert_verified(questions, load_demo_corpus([]))
    assert summary["per_type"]["out_of_scope"] == {"wanted": 2, "written": 0}
    counts = summary["rejected"]
    assert counts["placeholder text"] >= 3 and counts["prompt template echo"] == 1, counts
    assert "unparseable reply" not in counts  # the template written back (not JSON) is counted as what it is
    assert sum(counts.values()) == len(rejected)
    example = summary["examples"]["placeholder text"][0]
    assert example["reason"].startswith("placeholder text: ") and example["type"] in ("simple", "out_of_scope")
    oos = [x for x in rejected if x["type"] == "out_of_scope"]
    assert oos and all(x["reason"] == 'placeholder text: "<the question>" in the question' for x in oos)
    [echo] = [x for x in rejected if x["reason"].startswith("prompt template echo")]
    assert echo["question"].startswith("The question must make sense") and echo["evidence"] == [REAL_QUOTE]
    assert "placeholder text" in r.stdout
    [line] = r.stderr.strip().splitlines()
    assert (
        line.startswith("short: wrote 2 of 4 questions asked; rejected placeholder text")
        and "gen.rejected.jsonl" in line
    ), line


def test_llm_generation_with_no_usable_reply_exits_2_with_one_line(tmp_path, run_cli):
    rules = [
        {"kind": "testset", "match": "Question type: out_of_scope", "reply": OOS_ECHO},
        {"kind": "testset", "match": "Question type: simple", "action": "malformed", "times": 1},
        {"kind": "testset", "match": "Your reply could not be read", "action": "malformed", "times": 1},  # its re-ask
        {"kind": "testset", "match": "Question type: simple", "reply": EVIDENCE_ECHO},
    ]
    r, questions, summary, _ = _llm_generate(
        tmp_path, run_cli, rules, questions=3, mix={"simple": 0.5, "out_of_scope": 0.5}
    )
    assert r.returncode == 2, describe(r)
    assert questions == [] and summary["written"] == 0
    [line] = r.stderr.strip().splitlines()
    assert (
        line.startswith("error: wrote none of 3 questions asked: rejected placeholder text ")
        and "unparseable reply 1" in line  # the one simple reply still malformed when asked again
        and "--generator offline" in line
        and "larger" in line
    ), line


def test_exit_status_says_how_short_and_why(tmp_path):
    from ragsweep.generate.command import exit_status

    rej = tmp_path / "q.rejected.jsonl"
    base = {"generator": "llm", "wanted": 10, "written": 10, "rejected": {"near-duplicate": 1}}
    assert exit_status(base, rej) == (0, None)
    assert exit_status({**base, "written": 3, "stopped": "budget exhausted"}, rej) == (4, None)
    code, line = exit_status(
        {
            **base,
            "written": 7,
            "rejected": {"no evidence": 4, "unparseable reply": 35, "near-duplicate": 1, "placeholder text": 2},
        },
        rej,
    )
    assert code == 3 and line == (
        f"wrote 7 of 10 questions asked; rejected unparseable reply 35, no evidence 4, placeholder text 2 (see {rej})"
    )
    code, line = exit_status({**base, "written": 0, "rejected": {}, "failed_calls": 13}, rej)
    assert code == 2 and "13 LLM calls failed" in line and "check the endpoint" in line
    code, line = exit_status({**base, "generator": "offline", "written": 0, "rejected": {}}, rej)
    assert code == 2 and "too few definitions" in line and "--generator llm" in line and "\n" not in line
