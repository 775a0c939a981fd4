"""The verdict: chosen on validation, reported on test, tied set, costs, types, misses."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from ragsweep.evaluation.test_options import TestOptions
from ragsweep.evaluation.verdict import Verdict, decide
from ragsweep.pipelines.outputs.verdict_text import verdict_lines


def _records(
    means_val: dict[str, float],
    means_test: dict[str, float],
    n: int = 60,
    seed: int = 0,
    latency: dict[str, float] | None = None,
) -> pd.DataFrame:
    """Binary hits with a shared question difficulty (configurations correlated across questions, as
    in real sweeps): hit = 1[u_q < p_config] with one uniform u_q per question."""
    rng = np.random.default_rng(seed)
    rows = []
    for split, means in (("validation", means_val), ("test", means_test)):
        u = rng.random(n)
        for c, p in means.items():
            for i in range(n):
                rows.append(
                    {
                        "config_id": c,
                        "qid": f"{split[0]}{i:03d}",
                        "split": split,
                        "error": None,
                        "hit": float(u[i] < p),
                        "qtype": "simple" if i % 3 else "multi_hop",
                        "retrieval_ms": (latency or {}).get(c, 1.0),
                        "generation_ms": 0.0,
                        "prompt_tokens": 0,
                        "completion_tokens": 0,
                        "cost_usd": None,
                    }
                )
    return pd.DataFrame(rows)


def test_chosen_on_validation_and_reported_on_test() -> None:
    # "lucky" leads on validation only; on test it is mid-field: the verdict must still pick it
    # (validation decides) and show its test figure and the optimism, never re-pick on test.
    val = {"lucky": 0.9, "good": 0.85, "bad": 0.3}
    test = {"lucky": 0.6, "good": 0.85, "bad": 0.3}
    v = decide(_records(val, test), "hit", tests=TestOptions(seed=0))
    assert v.chosen == "lucky" and v.chosen_on == "validation" and v.n_validation == v.n_test == 60
    assert v.optimism == pytest.approx(v.validation_mean - v.test_mean) and v.optimism > 0.2
    assert v.test_lo <= v.test_mean <= v.test_hi
    assert "good" in v.better and "bad" in v.worse
    assert "significantly better on test" in v.why()


def test_tied_set_costs_and_breakdowns() -> None:
    val = {"a": 0.8, "b": 0.78, "c": 0.2}
    test = {"a": 0.8, "b": 0.78, "c": 0.2}
    v = decide(_records(val, test, latency={"a": 9.0, "b": 2.0, "c": 1.0}), "hit", chunks={"a": 500, "b": 120, "c": 50})
    assert v.chosen == "a" and v.tied == ["b"] and v.worse == ["c"] and not v.better
    assert v.fastest == "b" and v.smallest == "b"
    assert {t["qtype"] for t in v.by_type} == {"simple", "multi_hop"} and sum(t["n"] for t in v.by_type) == 60
    assert "exact sign test" in v.test_method  # exact sign-flip where few questions differ
    lines = "\n".join(verdict_lines(v))
    assert "use [bold]a[/bold]" in lines and "tied with it (1 of 2" in lines and "fastest: b" in lines
    assert "smallest index: b (120 chunks)" in lines and "by question type" in lines


def test_questions_every_configuration_misses() -> None:
    recs = _records({"a": 0.5, "b": 0.4}, {"a": 0.5, "b": 0.4})
    v = decide(recs, "hit")
    test = recs[recs["split"] == "test"]
    expected = sorted(test.groupby("qid")["hit"].max().loc[lambda s: s == 0].index)
    assert v.missed_by_all == expected and v.missed_metric == "hit" and expected


def test_same_result_whatever_the_row_order_and_json_round_trip() -> None:
    recs = _records({"a": 0.7, "b": 0.7, "c": 0.5}, {"a": 0.7, "b": 0.6, "c": 0.5})
    v1 = decide(recs, "hit")
    v2 = decide(recs.sample(frac=1.0, random_state=3), "hit")
    assert v1.to_dict() == v2.to_dict()
    back = Verdict.from_dict(json.loads(json.dumps(v1.to_dict())))
    assert verdict_lines(back) == verdict_lines(v1)


def test_no_validation_questions_is_said_not_hidden() -> None:
    recs = _records({"a": 0.7}, {"a": 0.7, "b": 0.4})
    recs = recs[recs["split"] == "test"]
    v = decide(recs, "hit")
    assert v.chosen == "a" and v.chosen_on == v.reported_on == "test" and math.isnan(v.optimism)
    assert "no validation values of hit" in v.note and "optimistic" in v.why() and "optimistic" in verdict_lines(v)[0]


def test_no_test_values_reports_on_validation_and_says_so() -> None:
    recs = _records({"a": 0.7, "b": 0.3}, {"a": 0.7, "b": 0.3})
    v = decide(recs[recs["split"] == "validation"], "hit")
    assert v.chosen == "a" and v.chosen_on == v.reported_on == "validation" and not v.held_out
    assert "no test values of hit" in v.note and "validation hit" in verdict_lines(v)[1]


def test_nothing_compared_is_not_called_significantly_worse() -> None:
    one = decide(_records({"a": 0.7}, {"a": 0.7}), "hit")
    assert one.chosen == "a" and "only configuration" in one.why() and "worse" not in one.why()
    recs = _records({"a": 0.7, "b": 0.5}, {"a": 0.7, "b": 0.5})
    recs.loc[(recs["config_id"] == "b") & (recs["split"] == "test"), "hit"] = np.nan
    v = decide(recs, "hit")
    assert v.untested == ["b"] and not v.worse and not v.tied
    assert "not compared" in v.why() and "significantly worse" not in v.why()
    assert any("not compared" in line for line in verdict_lines(v))


def test_ci_label_follows_the_confidence() -> None:
    v = decide(_records({"a": 0.7, "b": 0.3}, {"a": 0.7, "b": 0.3}), "hit", tests=TestOptions(confidence=0.9))
    back = Verdict.from_dict(json.loads(json.dumps(v.to_dict())))
    assert "(90% CI)" in verdict_lines(back)[1]


def test_no_values() -> None:
    recs = _records({"a": 0.7}, {"a": 0.7}).assign(hit=np.nan)
    v = decide(recs, "hit")
    assert v.chosen is None and "no configuration has values" in verdict_lines(v)[0]


def test_a_verdict_on_partial_data_says_what_is_missing_and_leaves_out_the_nearly_empty() -> None:
    """After a server died mid-run: "dead" lost 11 of its 12 answers (as the issue's kill -9 left two
    configurations), "holey" one. The nearly empty one is left out of the verdict (its mean and tests stand on one
    question) and named; the pick and the tied ones say how many of their questions are missing."""
    val = {"pick": 0.8, "holey": 0.78, "dead": 0.95}
    test = {"pick": 0.8, "holey": 0.79, "dead": 0.95}
    recs = _records(val, test, n=6)
    dead = recs["config_id"].eq("dead") & ~recs["qid"].eq("v000")
    recs.loc[dead, "error"] = "generation failed: APIConnectionError: Connection error."
    recs.loc[dead, "hit"] = np.nan
    holey = recs["config_id"].eq("holey") & recs["qid"].eq("t003")
    recs.loc[holey, "error"] = "generation failed: APIConnectionError: Connection error."
    recs.loc[holey, "hit"] = np.nan
    recs = recs[~(recs["config_id"].eq("pick") & recs["qid"].eq("t005"))]  # never answered
    v = decide(recs, "hit", tests=TestOptions(seed=0))
    assert v.chosen != "dead" and v.left_out == [["dead", 11, 12]]
    assert "dead" not in v.tied + v.worse + v.better + v.untested and v.n_configs == 2
    assert v.missing["pick"] == [1, 12] if v.chosen == "pick" else v.missing["holey"] == [1, 12]
    lines = " ".join(verdict_lines(v))
    assert (
        "left out of the verdict, missing more than 20 % of their questions (scoring.max_missing): dead (11 of 12"
        in lines
    )
    assert "questions missing (failed or not answered), of the pick and the tied:" in lines
    again = Verdict.from_dict(json.loads(json.dumps(v.to_dict())))  # verdict.json keeps it
    assert again.left_out == v.left_out and again.missing == v.missing
    # a looser rule keeps it in
    assert decide(recs, "hit", max_missing=1.0, tests=TestOptions(seed=0)).left_out == []


def test_the_verdicts_metric_follows_the_data_when_unset() -> None:
    from ragsweep.evaluation.default_metric import choose

    assert choose("hit", "extractive", True) == ("hit", "scoring.metric")
    metric, why = choose(None, "extractive", True)
    assert metric == "mrr" and "extractive generator" in why and "MRR" in why
    assert choose(None, "llm", True)[0] == "bertscore_f1_rescaled" and "LLM writes" in choose(None, "llm", True)[1]
    assert choose(None, "extractive", False) == (
        "bertscore_f1_rescaled",
        "scoring.metric is unset and the questions have no gold evidence spans to rank by",
    )
    v = decide(_records({"a": 0.9, "b": 0.3}, {"a": 0.9, "b": 0.3}, n=20), "hit", tests=TestOptions(seed=0))
    v.metric_why = choose(None, "extractive", True)[1]
    assert any(line.startswith("  by hit because the extractive generator") for line in verdict_lines(v))


def _judged_run(tmp_path, agree: bool):
    """A run's records judged by faithfulness on validation and test (two configurations, 30 questions each), and
    human labels of 20 of the pick's test answers that agree with the judge, or contradict it at random."""
    from types import SimpleNamespace

    rng = np.random.default_rng(1)
    rows = []
    for cid, p in (("a", 0.8), ("b", 0.5)):
        for split in ("validation", "test"):
            for i in range(30):
                rows.append(
                    {
                        "config_id": cid,
                        "qid": f"{split[0]}{i:02d}",
                        "split": split,
                        "error": None,
                        "faithfulness": float(rng.random() < p),
                        "hit": 1.0,
                    }
                )
    recs = pd.DataFrame(rows)
    mine = recs[(recs["config_id"] == "a") & (recs["split"] == "test")].head(20)
    lines = [
        {"config_id": "a", "qid": q, "grounded": bool(f) if agree else bool(rng.random() < 0.5)}
        for q, f in zip(mine["qid"], mine["faithfulness"])
    ]
    (tmp_path / "human_labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    meta = {"spec": {"seed": 0, "generator": {"kind": "extractive"}, "scoring": {"bootstrap_samples": 200}}}
    return SimpleNamespace(path=tmp_path, records=recs, meta=meta)


def test_human_labels_correct_a_judges_verdict_or_overrule_the_judge(tmp_path) -> None:
    from ragsweep.results.label_verdict import label_flags
    from ragsweep.results.verdict_view import run_verdict

    (tmp_path / "good").mkdir()
    good = _judged_run(tmp_path / "good", agree=True)
    v = run_verdict(good, "faithfulness")
    assert v.metric == "faithfulness" and v.chosen == "a" and v.chosen_on == "validation"
    assert label_flags(good) == {} and set(v.ppi) >= {"a"} and v.ppi["a"]["n_labelled"] == 20
    assert v.ppi["a"]["lo"] <= v.ppi["a"]["ppi"] <= v.ppi["a"]["hi"]
    assert any("corrected by the human labels (PPI++" in line for line in verdict_lines(v))
    (tmp_path / "bad").mkdir()
    bad = _judged_run(tmp_path / "bad", agree=False)
    flags = label_flags(bad)
    assert "faithfulness" in flags and "20 human labels" in flags["faithfulness"]
    v = run_verdict(bad, "faithfulness")  # the labels show the judge no better than chance: it does not decide
    assert v.metric == "mrr" and v.metric_why.startswith("the faithfulness judge cannot decide it (its agreement")
