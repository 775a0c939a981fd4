"""Adaptive retrieval (HyPA-RAG): the complexity classifier (deterministic, cross-fitted on validation),
its agreement measures, the spec's checks, and a sweep whose adaptive configuration routes each question
by its predicted class without changing the fixed configurations beside it."""

from __future__ import annotations

import json
import random

import pytest
from conftest import seed_cache

from ragsweep.adaptive.agreement import confusion, macro_f1, macro_f1_ci
from ragsweep.adaptive.classifier import ClassifierSettings, TooFewExamples, fit, folds, out_of_fold, predict
from ragsweep.config import parse_spec
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.grid import expand

SIMPLE = [
    "what is the fee",
    "what is the deadline",
    "who is the officer",
    "what is the limit",
    "when is the meeting",
    "what is the fine",
    "who signs the permit",
    "what is the notice period",
]
COMPLEX = [
    "compare the fee under the old ordinance with the new one and explain the difference",
    "how do the two councils differ in their rules on public comment and why",
    "which obligations apply if a contractor breaches both the policy and its amendment",
    "explain how the retention rule interacts with the deletion request procedure",
    "contrast the duties of the controller and the processor after a breach",
    "under which conditions do both the permit and the exemption apply together",
]


def _data(order: list[int] | None = None):
    texts = SIMPLE + COMPLEX
    labels = ["simple"] * len(SIMPLE) + ["complex"] * len(COMPLEX)
    ids = [f"q{i:02d}" for i in range(len(texts))]
    rows = list(zip(ids, texts, labels))
    if order is not None:
        rows = [rows[i] for i in order]
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def test_classifier_is_deterministic_and_blind_to_input_order():
    settings = ClassifierSettings(folds=3, seed=5)
    ids, texts, labels = _data()
    probe = ["what is the penalty", "compare the duties under both rules and explain why they differ"]
    first = predict(fit(ids, texts, labels, settings), probe)
    assert first == predict(fit(ids, texts, labels, settings), probe)
    assert first == ["simple", "complex"]
    oof = out_of_fold(ids, texts, labels, settings)
    order = list(range(len(ids)))
    random.Random(3).shuffle(order)
    sids, stexts, slabels = _data(order)
    assert predict(fit(sids, stexts, slabels, settings), probe) == first
    assert out_of_fold(sids, stexts, slabels, settings) == oof
    assert sorted(oof) == sorted(ids)


def test_out_of_fold_predictions_never_train_on_the_question_itself():
    settings = ClassifierSettings(folds=4, seed=0)
    ids, texts, labels = _data()
    parts = folds(ids, labels, settings)
    held = [q for _, h in parts for q in h]
    assert sorted(held) == sorted(ids)  # every question held out exactly once
    for train, h in parts:
        assert not set(train) & set(h) and set(train) | set(h) == set(ids)
        assert {labels[ids.index(q)] for q in h} == {"simple", "complex"}  # stratified
    # a question only its own label explains: the full model learns it, its out-of-fold prediction cannot
    odd_ids, odd_texts, odd_labels = ids + ["zz"], texts + ["xylophone quartz zephyr"], labels + ["complex"]
    text_of = dict(zip(odd_ids, odd_texts))
    oof = out_of_fold(odd_ids, odd_texts, odd_labels, settings)
    for train, h in folds(odd_ids, odd_labels, settings):
        if "zz" in h:  # the same prediction as a model fitted on the other folds alone
            lab = dict(zip(odd_ids, odd_labels))
            model = fit(train, [text_of[q] for q in train], [lab[q] for q in train], settings)
            assert oof["zz"] == predict(model, [text_of["zz"]])[0]
    full = fit(odd_ids, odd_texts, odd_labels, ClassifierSettings(folds=4, C=100.0))
    assert predict(full, ["xylophone quartz zephyr"]) == ["complex"]


def test_too_few_examples_of_a_class():
    with pytest.raises(TooFewExamples, match="class 'complex' has 1 training question"):
        fit(["a", "b", "c"], ["x", "y", "z"], ["simple", "simple", "complex"], ClassifierSettings())


def test_macro_f1_and_its_interval_on_a_hand_made_case():
    truth, pred = ["a", "a", "b", "b"], ["a", "b", "b", "b"]
    # F1(a) = 2/3, F1(b) = 4/5: macro 11/15
    assert macro_f1(truth, pred, ["a", "b"]) == pytest.approx(11 / 15)
    from sklearn.metrics import f1_score

    assert macro_f1(truth, pred, ["a", "b"]) == pytest.approx(f1_score(truth, pred, average="macro"))
    assert confusion(truth, pred, ["a", "b"]) == [[1, 1], [0, 2]]
    assert macro_f1_ci(["a", "b"] * 5, ["a", "b"] * 5, ["a", "b"]) == (1.0, 1.0, 1.0)
    f1, lo, hi = macro_f1_ci(truth * 10, pred * 10, ["a", "b"], n_resamples=500, seed=1)
    assert f1 == pytest.approx(11 / 15) and lo < f1 < hi and 0.5 < lo and hi < 0.95
    assert (f1, lo, hi) == macro_f1_ci(truth * 10, pred * 10, ["a", "b"], n_resamples=500, seed=1)
    # a class missing from both sides is not averaged in: scikit-learn's labels-present rule
    assert macro_f1(["a", "a"], ["a", "a"], ["a", "b", "c"]) == 1.0


BASE = {
    "splitters": [{"kind": "sentence"}],
    "retrievers": [{"kind": "bm25"}, {"kind": "fusion"}],
    "rerankers": [{"kind": "none"}, {"kind": "late_interaction"}],
    "top_k": [3, 5],
}
HYPA = {
    "name": "hypa",
    "retriever": "fusion",
    "labels": {"simple": ["simple"], "complex": ["complex", "comparative"]},
    "classes": {"simple": {"top_k": 5}, "complex": {"top_k": 10, "reranker": "maxsim"}},
}


def test_spec_ids_hashes_and_untouched_fixed_configurations():
    before = {c.config_id: c.config_hash for c in expand(parse_spec(BASE))}
    spec = parse_spec({**BASE, "adaptive": [HYPA]})
    configs = expand(spec)
    assert {c.config_id: c.config_hash for c in configs if c.adaptive is None} == before
    adaptive = configs[-1]
    assert adaptive.config_id == "sentence512-minilm-fusion-adaptive-hypa"
    assert adaptive.labels()["top_k"] is None and adaptive.labels()["retriever"] == "fusion+adaptive-hypa"
    assert spec.retrieval_depth == 20  # the reranker's candidates; a class's top_k counts too
    assert (
        parse_spec(
            {
                **BASE,
                "rerankers": [{"kind": "none"}, {"kind": "late_interaction", "candidates": 30}],
                "adaptive": [
                    {**HYPA, "classes": {"simple": {"top_k": 5}, "complex": {"top_k": 30, "reranker": "maxsim-c30"}}}
                ],
            }
        ).retrieval_depth
        == 30
    )
    # what routes the questions is the configuration's identity
    hashes = {adaptive.config_hash}
    for change in (
        {"classes": {"simple": {"top_k": 3}, "complex": HYPA["classes"]["complex"]}},
        {"labels": {"simple": ["simple", "paraphrase"], "complex": ["complex"]}},
        {"classifier": {"C": 10}},
        {"default_class": "simple"},
    ):
        hashes.add(expand(parse_spec({**BASE, "adaptive": [{**HYPA, **change}]}))[-1].config_hash)
    hashes.add(expand(parse_spec({**BASE, "seed": 3, "adaptive": [HYPA]}))[-1].config_hash)
    assert len(hashes) == 6
    assert expand(parse_spec({**BASE, "adaptive": [{**HYPA, "name": None}]}))[-1].config_id.endswith("fusion-adaptive")


@pytest.mark.parametrize(
    "change, message",
    [
        ({"retriever": "vectr"}, r"adaptive\[0\]\.retriever: 'vectr' is not among retrievers \['bm25', 'fusion'\]"),
        (
            {"classes": {"simple": {"top_k": 5}, "complex": {"top_k": 10, "reranker": "colbert"}}},
            r"adaptive\[0\]\.classes\.complex\.reranker: 'colbert' is not among rerankers \['maxsim'\]",
        ),
        (
            {"classes": {"simple": {"top_k": 5, "query_transform": "rm3"}, "complex": {"top_k": 10}}},
            r"adaptive\[0\]\.classes\.simple\.query_transform: 'rm3' is not among query_transforms",
        ),
        (
            {"classes": {"simple": {"top_k": 5}, "complex": {"top_k": 30, "reranker": "maxsim"}}},
            r"classes\.complex\.top_k \(30\) is larger than reranker 'maxsim'",
        ),
        ({"labels": {"easy": ["simple"]}}, r"labels names class 'easy', which is not among classes"),
        ({"labels": {"simple": ["simple"], "complex": ["simple"]}}, r"type 'simple' is listed under both"),
        ({"classes": {"simple": {"top_k": 5}}}, r"adaptive\[0\]\.classes: Dictionary should have at least 2 items"),
        ({"classes": {"simple": {"top_k": 0}, "complex": {"top_k": 5}}}, r"adaptive\[0\]\.classes\.simple\.top_k"),
    ],
)
def test_spec_errors_name_the_field(change, message):
    with pytest.raises(RagsweepError, match=message):
        parse_spec({**BASE, "adaptive": [{**HYPA, **change}]})


def test_unmapped_types_and_too_few_validation_questions_are_one_line_errors():
    from ragsweep.adaptive.config_map import resolve
    from ragsweep.datasets.load import load_dataset
    from ragsweep.pipelines.stages.adaptive import classify

    spec = parse_spec(
        {**BASE, "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}}, "adaptive": [HYPA]}
    )
    dataset = load_dataset(spec.dataset)
    with pytest.raises(
        RagsweepError,
        match=r"^adaptive\[0\]\.labels: no class for 'disambiguation' \(\d+\), .*"
        r"map them in adaptive\[0\]\.labels .* "
        r"or set adaptive\[0\]\.default_class$",
    ):
        classify(spec, dataset, resolve(spec, 0))
    few = parse_spec(
        {
            **spec.model_dump(mode="json", exclude_none=True),
            "adaptive": [
                {
                    **HYPA,
                    "labels": {
                        "simple": ["simple", "paraphrase", "comparative", "complex", "disambiguation"],
                        "complex": ["multi_hop"],
                    },
                    "default_class": "simple",
                    "classes": {**HYPA["classes"], "rare": {"top_k": 3}},
                }
            ],
        }
    )
    with pytest.raises(RagsweepError, match=r"^adaptive\[0\]\.classes: class 'rare' has 0 training question"):
        classify(few, dataset, resolve(few, 0))


def test_labels_file_replaces_question_types(tmp_path):
    from ragsweep.adaptive.labels import gold_classes
    from ragsweep.config.adaptive import AdaptiveSpec
    from ragsweep.datasets.types import Question

    qs = [Question(qid=f"q{i}", question=f"question {i}") for i in range(3)]
    path = tmp_path / "labels.jsonl"
    path.write_text(
        "\n".join(json.dumps({"qid": f"q{i}", "label": lab}) for i, lab in enumerate(["easy", "hard", "hard"])) + "\n",
        encoding="utf-8",
    )
    spec = AdaptiveSpec(
        retriever="bm25",
        labels_file=path,
        labels={"simple": ["easy"], "complex": ["hard"]},
        classes={"simple": {"top_k": 3}, "complex": {"top_k": 5}},
    )
    assert gold_classes(spec, qs) == {"q0": "simple", "q1": "complex", "q2": "complex"}
    path.write_text('{"qid": "q0", "label": "easy"}\nnot json\n', encoding="utf-8")
    with pytest.raises(RagsweepError, match=r"labels_file: .*1 bad line\(s\): line 2: not JSON"):
        gold_classes(spec, qs)


SWEEP = {
    "splitters": [{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
    "retrievers": [{"kind": "bm25"}],
    "query_transforms": [{"kind": "none"}, {"kind": "rm3"}],
    "top_k": [3],
    "scoring": {"metric": "mrr", "bootstrap_samples": 200, "bertscore": {"baseline": "none"}},
}
ROUTED = {
    "name": "hypa",
    "retriever": "bm25",
    "default_class": "simple",
    "labels": {"simple": ["simple", "paraphrase"], "complex": ["complex", "comparative", "multi_hop"]},
    "classes": {"simple": {"top_k": 3}, "complex": {"top_k": 12, "query_transform": "rm3"}},
}


@pytest.fixture(scope="module")
def adaptive_runs(make_spec, run_cli, read_run, tmp_path_factory, base_run, shared_cache):
    """The same sweep without and with an adaptive configuration, on a cache of their own (seeded)."""
    cache = seed_cache(tmp_path_factory.mktemp("adaptive-cache"), shared_cache)
    runs = []
    for spec in (make_spec("fixed", **SWEEP), make_spec("adaptive", **SWEEP, adaptive=[ROUTED])):
        proc = run_cli("run", spec.path, "--limit", "10", "--cache", cache, "--no-progress")
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs.append(read_run(spec.run_dir, proc))
    return runs


def test_sweep_routes_each_question_and_leaves_fixed_rows_alone(adaptive_runs, run_cli):
    """The adaptive configuration's records carry each question's class and top_k (rm3's expansion where
    the class asks for it), metrics at that top_k; the manifest holds the classifier's record; adding it
    changes no fixed configuration's rows (though the indexes are now searched deeper)."""
    plain, adaptive = adaptive_runs
    cid = "sentence256-bm25-adaptive-hypa"
    assert "adaptive bm25-adaptive-hypa: classifier macro-F1" in adaptive.stdout
    rows = adaptive.records[adaptive.records["config_id"] == cid]
    assert len(rows) == 10 and rows["error"].isna().all()
    assert set(rows["adaptive_class"]) == {"simple", "complex"}
    for r in rows.itertuples():
        assert r.top_k == (12 if r.adaptive_class == "complex" else 3)
        assert len(r.sources) <= r.top_k and (r.expanded_query is not None) == (r.adaptive_class == "complex")
    # the simple class is the fixed bm25-k3 configuration itself: same sources, same metrics
    base = adaptive.records[adaptive.records["config_id"] == "sentence256-bm25-k3"].set_index("qid")
    for r in rows[rows["adaptive_class"] == "simple"].itertuples():
        assert [s["node_id"] for s in r.sources] == [s["node_id"] for s in base.loc[r.qid, "sources"]]
        assert r.mrr == base.loc[r.qid, "mrr"]
    cols = ["config_id", "config_hash", "qid", "answer", "mrr", "ndcg", "hit", "expanded_query"]
    key = ["config_id", "qid"]
    a = adaptive.records[adaptive.records["config_id"] != cid][cols].sort_values(key).reset_index(drop=True)
    b = plain.records[cols].sort_values(key).reset_index(drop=True)
    assert a.equals(b)
    record = adaptive.manifest["adaptive"]["bm25-adaptive-hypa"]
    assert record["classes"] == ["complex", "simple"]
    test = record["test"]
    assert test["n"] + record["validation_out_of_fold"]["n"] == adaptive.manifest["dataset"]["questions"]
    assert test["macro_f1_lo"] <= test["macro_f1"] <= test["macro_f1_hi"]
    assert sum(map(sum, test["confusion"])) == test["n"] == sum(test["labelled"].values())
    summary = adaptive.summary[adaptive.summary["config_id"] == cid]
    assert len(summary) and summary["top_k"].isna().all()
    shown = run_cli("show", adaptive.run_dir)
    assert shown.returncode == 0 and "adaptive bm25-adaptive-hypa" in shown.stdout


@pytest.mark.slow
def test_report_and_plots_take_a_configuration_without_top_k(adaptive_runs, run_cli, tmp_path):
    """The heatmap gives adaptive configurations a panel of their own; the report's explorer no top_k."""
    adaptive = adaptive_runs[1]
    reported = run_cli("report", adaptive.run_dir, "--out", tmp_path / "r.html")
    assert reported.returncode == 0, reported.stderr[-2000:]
    plotted = run_cli("plot", adaptive.run_dir, "--out", tmp_path / "plots")
    assert plotted.returncode == 0 and (tmp_path / "plots" / "heatmap.png").is_file(), plotted.stderr[-2000:]


def test_dry_run_counts_each_class_llm_steps_as_an_upper_bound(tmp_path):
    """An adaptive fusion whose complex class uses HyDE and an LLM reranker, beside fixed configurations that
    use them on other retrievers: the classes are unknown before the run, so the estimate counts every
    question in that class: one more rerank per question (its own index and retriever), no more HyDE
    (what HyDE writes for a question is shared by every retriever)."""
    from ragsweep.pipelines.estimate import estimate_run

    llm = {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None}
    data = {
        **BASE,
        "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
        "llm": llm,
        "retrievers": [{"kind": "vector"}, {"kind": "fusion"}],
        "top_k": [5],
        "query_transforms": [{"kind": "none"}, {"kind": "hyde", "apply_to": ["vector"]}],
        "rerankers": [{"kind": "none"}, {"kind": "llm", "candidates": 10, "batch_size": 10, "apply_to": ["vector"]}],
        "adaptive": [
            {
                **HYPA,
                "classes": {
                    "simple": {"top_k": 5},
                    "complex": {"top_k": 10, "reranker": "llmrerank-c10", "query_transform": "hyde"},
                },
            }
        ],
    }
    spec = parse_spec(data)
    est = {e.stage: e for e in estimate_run(spec, run_dir=tmp_path / "run", cache_dir=tmp_path / "cache", limit=7)}
    assert est["query_transform"].calls == 7
    assert est["rerank"].calls == 3 * 7  # vector and vector+hyde (fixed), then fusion+hyde (the adaptive one)
    assert any("an upper bound" in n for n in est["rerank"].notes)
