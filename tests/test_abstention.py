"""Abstention: refusal detection, the extractive threshold tuned on validation questions, the two rates
with bootstrap CIs, negative questions (demo and ``dataset.negatives``), the prompt-template axis, and
sweeps that abstain: the extractive baseline on the demo, an LLM on the scripted OpenAI server."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import describe

from ragsweep.config import parse_spec
from ragsweep.errors import RagsweepError
from ragsweep.metrics.abstention import REFUSAL, abstains, abstention_scores, is_refusal, top_score, tune_threshold
from ragsweep.pipelines.grid import expand

ROOT = Path(__file__).resolve().parents[1]
NEGATIVES = ROOT / "bench" / "data" / "negative_questions.jsonl"
DEMO_QUESTIONS = ROOT / "src" / "ragsweep" / "datasets" / "demo" / "questions.jsonl"


# --------------------------------------------------------------------------- detection
@pytest.mark.parametrize(
    "answer",
    [
        REFUSAL,
        "i cannot answer this from the provided documents",
        "\u201cI CANNOT answer this from the provided documents.\u201d",
        "  I cannot answer this from the provided documents!  ",
        "I cannot answer this from the provided documents. The context is about leases.",
        "I can\u2019t help with that.",
        "I'm sorry, but I cannot assist with that request.",
        "Sorry, I can't provide that.",
        "I don't know.",
        "The provided context does not mention a tourist levy for Ashby Vale.",
        "The documents do not say how many councillors there are.",
        "There is no information about opening hours in the context.",
        "Empty Response",
    ],
)
def test_refusals_are_detected(answer):
    assert is_refusal(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "A tenant cannot sublet the dwelling without the Landlord's written consent.",
        "The Controller cannot refuse a request; it must answer within 30 days.",
        "Employees who cannot attend must give notice. I cannot answer this from the provided documents.",
        "The fee is $85 per dwelling, payable every 3 years.",
        "I can confirm the notice period is 30 days.",
        "",
        None,
    ],
)
def test_answers_are_not_refusals(answer):
    assert not is_refusal(answer)


def test_a_configured_refusal_is_matched_too():
    mine = "Not in the corpus, sorry."
    assert is_refusal("not in the corpus, sorry", mine) and is_refusal("\u2018Not in the corpus, sorry\u2019.", mine)
    assert not is_refusal("not in the corpus, sorry")  # only when it is the configured sentence
    assert is_refusal(REFUSAL, mine)  # the default sentence always counts


# --------------------------------------------------------------------------- threshold
def test_abstains_and_top_score():
    assert top_score([]) == -math.inf and top_score([None, None]) is None and top_score([0.2, None, 0.5]) == 0.5
    assert abstains(0.1, 0.35) and not abstains(0.35, 0.35) and not abstains(0.1, None)
    assert abstains(-math.inf, 0.0) and not abstains(None, 0.9)


def test_tuning_maximises_balanced_accuracy_with_ties_to_the_lower_threshold():
    # (top score, unanswerable): unanswerable ones score low, but one answerable does too
    points = [(0.9, False), (0.8, False), (0.3, False), (0.7, False), (0.2, True), (0.25, True), (0.6, True)]
    out = tune_threshold(points)
    # at 0.3: 2/3 abstain on unanswerable, 4/4 answer -> (2/3 + 1) / 2 = 0.833; at 0.7: 3/3 and 3/4 -> 0.875
    assert out["threshold"] == 0.7 and out["balanced_accuracy"] == pytest.approx(0.875)
    assert out["candidates"][0] == [None, 0.5]  # never abstain: the lowest candidate
    assert out["n_validation"] == 7 and out["n_unanswerable"] == 3
    # 0.6 and 1.0 both reach 0.75: the lower one wins
    tied = tune_threshold([(0.5, True), (0.6, False), (0.9, True), (1.0, False)])
    assert tied["threshold"] == 0.6 and [c for c in tied["candidates"] if c[1] == 0.75] == [[0.6, 0.75], [1.0, 0.75]]
    assert tune_threshold([(0.5, False), (0.6, False)])["threshold"] is None  # nothing to separate
    assert "reason" in tune_threshold([(0.5, True)])


def _tune_ctx(scores: dict[str, float]):
    """A stage context over the demo questions whose retriever returns one node scored by ``scores``."""
    from ragsweep.datasets.load import load_dataset

    spec = parse_spec(
        {
            "splitters": [{"kind": "sentence"}],
            "retrievers": [{"kind": "bm25"}],
            "seed": 7,
            "generator": {"kind": "extractive", "abstain_below": "tune"},
        }
    )
    dataset = load_dataset(spec.dataset)
    node = lambda s: SimpleNamespace(score=s)  # noqa: E731
    retriever = SimpleNamespace(retrieve=lambda bundle: [node(scores[bundle.query_str])])
    return SimpleNamespace(spec=spec, dataset=dataset, abstain_thresholds={}), expand(spec)[0], retriever


def test_the_threshold_sees_validation_questions_only():
    from ragsweep.evaluation.split import question_split
    from ragsweep.pipelines.stages.abstain import abstention_rule

    ctx, config, _ = _tune_ctx({})
    split = question_split(ctx.spec, ctx.dataset)
    scores = {q.question: (0.2 if not q.evidence else 0.8) for q in ctx.dataset.questions}
    ctx, config, retriever = _tune_ctx(scores)
    rule = abstention_rule(ctx, config, retriever)
    n_val = sum(v == "validation" for v in split.values())
    assert rule.threshold == 0.8 and rule.tuning["balanced_accuracy"] == 1.0
    assert rule.tuning["n_validation"] == n_val == 54
    assert rule.tuning["n_unanswerable"] == sum(
        1 for q in ctx.dataset.questions if split[q.qid] == "validation" and not q.evidence
    )
    # the test questions' scores change nothing, a validation question's do
    test_q = next(q for q in ctx.dataset.questions if split[q.qid] == "test" and q.evidence)
    val_q = next(q for q in ctx.dataset.questions if split[q.qid] == "validation" and q.evidence)

    def seen(rule):
        return {k: v for k, v in rule.tuning.items() if k != "tuning_ms"}

    assert seen(
        abstention_rule(
            ctx,
            config,
            SimpleNamespace(
                retrieve=lambda b: [
                    SimpleNamespace(score=0.01 if b.query_str == test_q.question else scores[b.query_str])
                ]
            ),
        )
    ) == seen(rule)
    moved = abstention_rule(
        ctx,
        config,
        SimpleNamespace(
            retrieve=lambda b: [SimpleNamespace(score=0.5 if b.query_str == val_q.question else scores[b.query_str])]
        ),
    )
    assert seen(moved) != seen(rule)
    answer, abstained = rule.apply([SimpleNamespace(score=0.3)], "some sentence")
    assert (answer, abstained) == (REFUSAL, True) and rule.apply([SimpleNamespace(score=0.9)], "x") == ("x", False)


# --------------------------------------------------------------------------- ids, hashes, spec errors
def test_defaults_keep_ids_and_hashes_and_new_settings_change_them(tmp_path):
    base = {"splitters": [{"kind": "sentence"}], "retrievers": [{"kind": "bm25"}]}
    before = [(c.config_id, c.config_hash) for c in expand(parse_spec(base))]
    fixed = expand(parse_spec({**base, "generator": {"kind": "extractive", "abstain_below": 0.35}}))
    tuned = expand(parse_spec({**base, "generator": {"kind": "extractive", "abstain_below": "tune"}}))
    assert [c.config_id for c in fixed] == [c.config_id for c in tuned] == [i for i, _ in before]
    assert len({before[0][1], fixed[0].config_hash, tuned[0].config_hash}) == 3
    seeded = expand(parse_spec({**base, "seed": 3, "generator": {"kind": "extractive", "abstain_below": "tune"}}))
    assert seeded[0].config_hash != tuned[0].config_hash  # the tuning split is part of the hash
    llm = {**base, "llm": {"model": "m", "api_key_env": None}}
    plain = expand(parse_spec({**llm, "generator": {"kind": "llm"}}))[0]
    refusing = expand(parse_spec({**llm, "generator": {"kind": "llm", "refusal": REFUSAL}}))[0]
    assert plain.config_id == refusing.config_id and plain.config_hash != refusing.config_hash
    assert "refusal" not in plain.generator and "abstain_below" not in plain.generator
    with pytest.raises(RagsweepError, match=r"generator\.abstain_below"):
        parse_spec({**base, "generator": {"kind": "extractive", "abstain_below": "tuned"}})


def test_the_default_prompt_gains_the_refusal_instruction():
    from llama_index.core.prompts import PromptTemplate

    from ragsweep.pipelines.generator_prompts import refusal_template

    # as the synthesizer fills it: the refusal's braces reach the model as written (they arrived doubled)
    sent = PromptTemplate(refusal_template("Say {nothing}.")).format(context_str="C", query_str="Q")
    assert "reply exactly: Say {nothing}.\n" in sent and sent.endswith("Query: Q\nAnswer: ")


def _prompt(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.txt"
    path.write_text(body, encoding="utf-8")
    return path


def test_a_prompt_file_with_other_braces_is_estimated_as_it_is_sent(tmp_path):
    """A template that shows JSON ({"answer": ...}) is sent as written (LlamaIndex fills its two slots only); the
    dry run counts it the same way (it raised KeyError formatting the template with ``str.format``)."""
    from ragsweep.config import parse_spec
    from ragsweep.pipelines.estimate import estimate_run

    json_prompt = _prompt(
        tmp_path, "json", 'Reply as {"answer": "..."}.\nContext:\n{context_str}\nQuery: {query_str}\n'
    )
    spec = parse_spec(
        {
            "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
            "splitters": [{"kind": "token", "chunk_size": 128}],
            "retrievers": [{"kind": "bm25"}],
            "top_k": [3],
            "generator": {"kind": "llm", "prompt_file": str(json_prompt)},
            "llm": {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None},
        }
    )
    est = {e.stage: e for e in estimate_run(spec, run_dir=tmp_path / "run", cache_dir=tmp_path / "cache", limit=3)}
    assert est["generation"].calls == 3


def test_prompt_files_multiply_configurations(tmp_path):
    from ragsweep.config import load_spec
    from ragsweep.pipelines.preflight import check_llm_settings

    good = "Context:\n{context_str}\nQuery: {query_str}\nAnswer: "
    _prompt(tmp_path, "concise", good)
    _prompt(tmp_path, "strict", "Be strict.\n" + good)
    spec_path = tmp_path / "s.yaml"
    llm = {"model": "m", "api_key_env": None}
    spec_path.write_text(
        json.dumps(
            {
                "splitters": [{"kind": "sentence"}],
                "retrievers": [{"kind": "bm25"}],
                "top_k": [3, 5],
                "llm": llm,
                "generator": {"kind": "llm", "prompt_files": ["concise.txt", "strict.txt"]},
            }
        )
    )
    configs = expand(load_spec(spec_path))
    assert [c.config_id for c in configs] == [
        "sentence512-bm25-k3-pconcise",
        "sentence512-bm25-k3-pstrict",
        "sentence512-bm25-k5-pconcise",
        "sentence512-bm25-k5-pstrict",
    ]
    assert len({c.config_hash for c in configs}) == 4 and configs[0].labels()["prompt"] == "concise"
    single = expand(
        parse_spec(
            {
                "splitters": [{"kind": "sentence"}],
                "retrievers": [{"kind": "bm25"}],
                "top_k": [3, 5],
                "llm": llm,
                "generator": {"kind": "llm"},
            }
        )
    )
    assert [c.config_id for c in single] == ["sentence512-bm25-k3", "sentence512-bm25-k5"]
    _prompt(tmp_path, "strict", "no placeholders")
    with pytest.raises(RagsweepError, match=r"^generator\.prompt_files\[1\]: .*strict\.txt needs the placeholders"):
        check_llm_settings(load_spec(spec_path))
    spec_path.write_text(spec_path.read_text().replace("strict.txt", "missing.txt"))
    with pytest.raises(RagsweepError, match=r"generator\.prompt_files\[1\]: .*missing\.txt does not exist"):
        load_spec(spec_path)


# --------------------------------------------------------------------------- rates with CIs
def test_rates_per_question_and_in_the_summary_with_cis(tmp_path):
    from ragsweep.datasets.types import EvidenceSpan, Question
    from ragsweep.pipelines.journal import Journal
    from ragsweep.pipelines.outputs.records import build_records, question_rows
    from ragsweep.pipelines.outputs.summary import build_summary

    assert abstention_scores(True, False)["abstention_rate"] == 1.0
    assert math.isnan(abstention_scores(True, False)["false_abstention_rate"])
    assert abstention_scores(True, True)["false_abstention_rate"] == 1.0
    assert all(math.isnan(v) for v in abstention_scores(None, True).values())
    gold = (EvidenceSpan("d", 0, 5),)
    questions = [Question(f"a{i}", f"answerable {i}", "ref", gold, "simple") for i in range(4)] + [
        Question(f"u{i}", f"unanswerable {i}", None, (), "negative-irrelevant") for i in range(4)
    ]
    journal = Journal(tmp_path / "journal.sqlite")
    refused = {"a0", "u0", "u1", "u2"}
    for q in questions:  # an LLM config (detected from the text) and an extractive one (its own record)
        journal.add_answer(
            "h1",
            q.qid,
            "llm-cfg",
            {"answer": REFUSAL if q.qid in refused else "An answer.", "generator": "llm:m", "error": None},
        )
        journal.add_answer(
            "h2",
            q.qid,
            "ext-cfg",
            {"answer": "x", "generator": "extractive-baseline", "abstained": q.qid == "u3", "error": None},
        )
    journal.flush()
    configs = [{"config_id": "llm-cfg", "config_hash": "h1"}, {"config_id": "ext-cfg", "config_hash": "h2"}]
    records = build_records(question_rows(questions, {q.qid: "test" for q in questions}), configs, journal)
    llm = records[records["config_id"] == "llm-cfg"]
    assert llm["abstained"].tolist() == [True, False, False, False, True, True, True, False]
    summary = build_summary(records, configs, {"bootstrap_samples": 200, "confidence": 0.95}, seed=0)
    row = summary[(summary["config_id"] == "llm-cfg") & (summary["split"] == "test")].iloc[0]
    assert row["abstention_rate"] == 0.75 and row["false_abstention_rate"] == 0.25
    assert row["abstention_rate_n"] == 4 and row["false_abstention_rate_n"] == 4
    assert 0 <= row["abstention_rate_lo"] <= 0.75 <= row["abstention_rate_hi"] <= 1
    ext = summary[(summary["config_id"] == "ext-cfg") & (summary["split"] == "test")].iloc[0]
    assert ext["abstention_rate"] == 0.25 and ext["false_abstention_rate"] == 0.0
    journal.close()


# --------------------------------------------------------------------------- negative questions
def test_negatives_file_loads_with_prefixed_ids():
    from ragsweep.datasets.negatives import NEGATIVE_TYPES, load_negatives

    qs = load_negatives(NEGATIVES)
    assert len(qs) == 30 and all(q.qid.startswith("neg-") and not q.evidence for q in qs)
    assert {q.qtype for q in qs} == set(NEGATIVE_TYPES)
    with pytest.raises(RagsweepError, match=r"'neg-irr01' appears twice"):
        load_negatives(NEGATIVES, {"neg-irr01"})


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"id": "x", "question": "q", "type": "negative-irrelevant"}\nnot json', r":2: not valid JSON"),
        ('{"id": "x", "question": "q", "type": "irrelevant"}', r":1: 'type' is 'irrelevant'; choose one of negative-"),
        ('{"id": "x", "question": "q", "type": "negative-unsafe", "evidence": []}', r":1: unknown key\(s\) evidence"),
        ('{"id": "x", "question": "", "type": "negative-unsafe"}', r":1: 'question' must be a non-empty string"),
        (
            '{"id": "x", "question": "q", "type": "negative-unsafe"}\n{"id": "x", "question": "r", "type": '
            '"negative-unsafe"}',
            r":2: question id 'neg-x' appears twice",
        ),
    ],
)
def test_a_bad_negatives_file_is_one_line_naming_file_and_line(tmp_path, line, message):
    from ragsweep.datasets.negatives import load_negatives

    path = tmp_path / "neg.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(RagsweepError, match=message) as err:
        load_negatives(path)
    assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)


def test_any_dataset_can_append_negatives(tmp_path):
    from ragsweep.config import load_spec
    from ragsweep.datasets.load import load_dataset

    spec_path = tmp_path / "s.yaml"
    minimal = {"splitters": [{"kind": "sentence"}], "retrievers": [{"kind": "bm25"}]}
    spec_path.write_text(
        json.dumps(
            {
                **minimal,
                "dataset": {
                    "questions": {"format": "jsonl", "path": str(DEMO_QUESTIONS)},
                    "fuzzy_evidence": 0.9,
                    "negatives": str(NEGATIVES),
                },
            }
        )
    )
    dataset = load_dataset(load_spec(spec_path).dataset)
    assert len(dataset.questions) == 107 + 30 and dataset.questions[107].qid == "neg-irr01"
    assert any("appended 30 negative" in n for n in dataset.notes)
    spec_path.write_text(json.dumps({**minimal, "dataset": {"negatives": "nowhere.jsonl"}}))
    with pytest.raises(RagsweepError, match=r"dataset\.negatives: .*nowhere\.jsonl does not exist"):
        load_spec(spec_path)


def test_demo_negatives_and_split():
    from ragsweep.datasets.load import load_dataset

    spec = parse_spec({"seed": 7, "splitters": [{"kind": "sentence"}], "retrievers": [{"kind": "bm25"}]})
    qs = load_dataset(spec.dataset).questions
    neg = [q for q in qs if (q.qtype or "").startswith("negative-")]
    assert len(qs) == 107 and [q.qid for q in neg] == [f"q{i}" for i in range(100, 108)]
    assert all(not q.evidence and q.reference_answer is None for q in neg)


# --------------------------------------------------------------------------- sweeps
def test_demo_sweep_with_a_tuned_threshold(make_spec, run_cli, read_run, seeded_cache):
    """Extractive BM25 on the demo with ``abstain_below: tune``: the threshold is chosen on all validation
    questions (whatever --limit says) and recorded; abstaining answers are the refusal; the rates are in
    the summary with CIs. Its own cache (seeded): tuning searches every validation question."""
    spec = make_spec(
        "abstain",
        splitters=[{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
        retrievers=[{"kind": "bm25"}],
        top_k=[3],
        embeddings=[{"kind": "sentence_transformers", "model": "minilm"}],
        generator={"kind": "extractive", "abstain_below": "tune"},
        scoring={"metric": "mrr", "bootstrap_samples": 200, "bertscore": {"baseline": "none"}},
    )
    proc = run_cli("run", str(spec.path), "--limit", "10", "--cache", str(seeded_cache), "--no-progress")
    assert proc.returncode == 0, describe(proc)
    run = read_run(spec.run_dir, proc)
    entry = run.manifest["abstain_thresholds"]["sentence256-bm25-k3"]
    tuning = entry["tuning"]
    assert tuning["n_validation"] == 54 and tuning["n_unanswerable"] == 9  # 5 out of scope + 4 negative
    assert entry["threshold"] == tuning["threshold"]
    best = max(c[1] for c in tuning["candidates"])
    assert tuning["balanced_accuracy"] == best and tuning["balanced_accuracy"] > 0.5
    assert next(c for c in tuning["candidates"] if c[1] == best)[0] == entry["threshold"]  # the lowest best
    recs = run.records
    assert len(recs) == 10 and recs["abstained"].eq(recs["answer"] == REFUSAL).all()
    scores = recs["sources"].map(lambda s: max(x["score"] for x in s))
    assert recs["abstained"].eq(scores < entry["threshold"]).all()
    row = run.summary.iloc[0]
    assert math.isnan(row["abstention_rate"])  # the first 10 demo questions are all answerable
    assert row["false_abstention_rate"] == pytest.approx(recs["abstained"].mean())
    assert {"false_abstention_rate_lo", "false_abstention_rate_hi"} <= set(run.summary.columns)
    show = run_cli("show", str(spec.run_dir), "--metric", "false_abstention_rate")
    assert show.returncode == 0 and "fAbst" in show.stdout, describe(show)


def test_llm_sweep_abstention_rates_against_the_fake_server(make_spec, run_cli, read_run, tmp_path):
    """Two prompt templates (an axis); the scripted server refuses some questions under the strict one
    (in several wordings); both rates come out exactly."""
    from fake_openai import FakeOpenAI

    rows = [json.loads(line) for line in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines()]
    answerable = [r for r in rows if r["evidence"]][:4]
    unanswerable = [r for r in rows if r["type"] == "out_of_scope"][:2] + [
        r for r in rows if r["type"].startswith("negative-")
    ][:2]
    qfile = tmp_path / "questions.jsonl"
    qfile.write_text("".join(json.dumps(r) + "\n" for r in answerable + unanswerable), encoding="utf-8")
    body = "Context information is below.\n---------------------\n{context_str}\n---------------------\n"
    concise = _prompt(tmp_path, "concise", body + "Answer briefly.\nQuery: {query_str}\nAnswer: ")
    strict = _prompt(
        tmp_path,
        "strict",
        body + f"If the context does not answer, reply exactly: {REFUSAL}\nStrict query: {{query_str}}\nAnswer: ",
    )
    refusals = {
        unanswerable[0]["question"]: REFUSAL,
        unanswerable[1]["question"]: "I'm sorry, but I can't help.",
        unanswerable[2]["question"]: "\u201ci cannot answer this from the provided documents\u201d",
        answerable[0]["question"]: "The provided context does not mention that.",
    }
    rules = [{"kind": "generation", "match": f"Strict query: {q}", "reply": r} for q, r in refusals.items()]
    with FakeOpenAI(rules=rules, api_key="sk-abstain") as fake:
        spec = make_spec(
            "abstain-llm",
            dataset={
                "corpus": {"format": "demo"},
                "questions": {"format": "jsonl", "path": str(qfile)},
                "fuzzy_evidence": 0.9,
            },
            splitters=[{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
            retrievers=[{"kind": "bm25"}],
            top_k=[3],
            llm={"model": "fake-gen", "base_url": fake.base_url, "api_key_env": "FAKE_KEY"},
            generator={"kind": "llm", "prompt_files": [str(concise), str(strict)], "refusal": REFUSAL},
            scoring={"metric": "mrr", "bootstrap_samples": 200, "bertscore": {"baseline": "none"}},
        )
        proc = run_cli(
            "run", str(spec.path), "--cache", str(tmp_path / "cache"), "--no-progress", env={"FAKE_KEY": "sk-abstain"}
        )
    assert proc.returncode == 0, describe(proc)
    run = read_run(spec.run_dir, proc)
    by_id = run.summary.set_index("config_id")
    assert set(by_id.index) == {"sentence256-bm25-k3-pconcise", "sentence256-bm25-k3-pstrict"}
    strict_row, concise_row = by_id.loc["sentence256-bm25-k3-pstrict"], by_id.loc["sentence256-bm25-k3-pconcise"]
    assert strict_row["abstention_rate"] == 0.75 and strict_row["false_abstention_rate"] == 0.25
    assert concise_row["abstention_rate"] == 0.0 and concise_row["false_abstention_rate"] == 0.0
    recs = run.records[run.records["config_id"] == "sentence256-bm25-k3-pstrict"].set_index("qid")
    assert recs.loc[unanswerable[3]["id"], "abstained"] == False  # noqa: E712 - answered, not refused
    # a negative question has no reference: its answer metrics are undefined, not a failure
    neg = run.records[run.records["qid"] == unanswerable[2]["id"]]
    assert neg["token_f1"].isna().all() and neg["bertscore_f1"].isna().all()
    assert run.manifest["generator"]["prompt_files"] == [str(concise), str(strict)]


def test_a_bad_abstain_below_names_both_accepted_forms_in_one_line():
    spec = {
        "splitters": [{"kind": "sentence"}],
        "retrievers": [{"kind": "bm25"}],
        "generator": {"kind": "extractive", "abstain_below": "sometimes"},
    }
    with pytest.raises(RagsweepError) as err:
        parse_spec(spec, "s.yaml")
    line = str(err.value)
    assert "\n" not in line and "more problem" not in line
    assert line.startswith("s.yaml: generator.abstain_below: Input should be a valid number")
    assert line.endswith("; or Input should be 'tune'")
