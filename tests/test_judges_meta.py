"""Judges you can trust: groundedness detectors checked against human labels (``ragsweep judges evaluate``),
and judged metrics with prediction-powered CIs from a few human labels (``ragsweep judges import``)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from conftest import describe
from fake_openai import FakeOpenAI

from ragsweep.evaluation.ppi import ppi_mean
from ragsweep.groundedness import meta
from ragsweep.groundedness.detectors.quip import quip_score
from ragsweep.groundedness.labels import DEMO_LABELS, load_labels


def _labels(tmp_path):
    """The first 24 labelled demo answers, as a labels file."""
    labels = tmp_path / "labels.jsonl"
    rows = [json.loads(line) for line in DEMO_LABELS.read_text().splitlines()][:24]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return labels


def _evaluate(run_cli, tmp_path, labels, fake, model: str, *args, prices: dict | None = None, out: str = "meta.json"):
    """``judges evaluate LABELS ARGS`` with a spec whose LLM is ``model`` on ``fake``, the cache ``tmp_path/c``:
    (the process, its --out file)."""
    import yaml

    spec = tmp_path / "j.yaml"
    llm = {"model": model, "base_url": fake.base_url, "api_key_env": None}
    data = {"splitters": [{"kind": "sentence"}], "retrievers": [{"kind": "bm25"}], "llm": llm}
    spec.write_text(yaml.safe_dump({**data, **({"prices": prices} if prices else {})}))
    path = tmp_path / out
    r = run_cli("judges", "evaluate", labels, "--spec", spec, *args, "--cache", tmp_path / "c", "--out", path)
    return r, path


def test_quip_counts_quoted_character_ngrams():
    ctx = ["The Controller shall notify the Data Protection Officer within 72 hours."]
    assert quip_score("the controller shall notify the data protection officer", ctx) == 1.0
    assert quip_score("Bananas are yellow and grow in warm climates everywhere.", ctx) == 0.0
    half = quip_score("The Controller shall notify the Mayor by carrier pigeon at once.", ctx)
    assert 0 < half < 1
    assert quip_score("72 hours", ctx) == 1.0 and quip_score("48 hours", ctx) == 0.0  # shorter than n: whole
    assert quip_score("  ", ctx) is None


def test_classification_metrics_match_their_definitions():
    from sklearn.metrics import cohen_kappa_score, f1_score, roc_auc_score

    rng = np.random.default_rng(0)
    y = rng.random(200) < 0.4
    s = y * 0.3 + rng.random(200)
    pred = s >= 0.6
    assert meta.macro_f1(y, pred) == pytest.approx(f1_score(y, pred, average="macro"))
    assert meta.kappa(y, pred) == pytest.approx(cohen_kappa_score(y, pred))
    assert meta.auroc(y, s) == pytest.approx(roc_auc_score(y, s))
    t = meta.tune_threshold(np.array([0.1, 0.2, 0.8, 0.9]), np.array([False, False, True, True]))
    assert 0.2 < t < 0.8


def test_demo_labels_are_well_formed():
    items = load_labels("demo")
    assert len(items) >= 80 and DEMO_LABELS.is_file()
    cats = {it.category for it in items}
    assert cats == {"supported", "unsupported", "misattributed", "partly_supported"}
    assert all(it.grounded == (it.category == "supported") for it in items)
    assert all(it.correctness is not None and it.reference_answer for it in items)
    dev, test = meta.split(items, 0.5, 0)
    assert not set(dev) & set(test) and len(dev) + len(test) == len(items)
    for cat in cats:  # stratified: every category on both sides
        assert any(items[i].category == cat for i in dev) and any(items[i].category == cat for i in test)


def test_labels_errors_name_the_line(tmp_path):
    from ragsweep.errors import RagsweepError

    bad = tmp_path / "l.jsonl"
    bad.write_text('{"question": "Q?", "contexts": ["c"], "answer": "A", "grounded": "maybe"}\n')
    with pytest.raises(RagsweepError, match=r"l.jsonl:line 1: field 'grounded' must be true/false"):
        load_labels(bad)
    bad.write_text('{"question": "Q?", "contexts": [], "answer": "A", "grounded": true}\n')
    with pytest.raises(RagsweepError, match="line 1: field 'contexts' must be a non-empty list"):
        load_labels(bad)
    bad.write_text('{"question": "Q?", "contexts": ["c"], "answer": "A"}\n')
    with pytest.raises(RagsweepError, match="line 1: no label"):
        load_labels(bad)


# --------------------------------------------------------------------------- PPI
def _simulated(seed: int, n: int, big_n: int, bias: float, noise: float):
    """Human labels y ~ Bernoulli(0.6); the judge agrees except for ``noise`` flips and says yes ``bias`` more."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n + big_n) < 0.6).astype(float)
    f = np.where(rng.random(n + big_n) < noise, 1 - y, y)
    f = np.where((f == 0) & (rng.random(n + big_n) < bias), 1.0, f)
    return y, f


def test_ppi_covers_the_truth_where_the_biased_judge_mean_does_not():
    covered_ppi = covered_judge = 0
    widths_ppi, widths_human = [], []
    for seed in range(200):
        y, f = _simulated(seed, 40, 600, bias=0.3, noise=0.05)
        truth = 0.6
        r = ppi_mean(f[40:], f[:40], y[:40])
        covered_ppi += r.lo <= truth <= r.hi
        se = f.std(ddof=1) / np.sqrt(len(f))
        covered_judge += f.mean() - 1.96 * se <= truth <= f.mean() + 1.96 * se
        widths_ppi.append(r.hi - r.lo)
        widths_human.append(r.human_hi - r.human_lo)
    assert covered_ppi >= 180  # ~95 % of 200
    assert covered_judge <= 20  # the judge says yes too often: its own CI misses
    assert np.median(widths_ppi) < 0.8 * np.median(widths_human)  # a good judge narrows the human CI


def test_ppi_gives_a_useless_judge_no_weight():
    rng = np.random.default_rng(1)
    y = (rng.random(60) < 0.5).astype(float)
    r = ppi_mean(rng.random(500), rng.random(60), y)
    assert r.lam < 0.4 and abs(r.estimate - r.human_mean) < 0.05  # lambda ~ sample covariance noise
    with pytest.raises(ValueError, match="at least 2"):
        ppi_mean([1.0], [1.0], [0.0])


# --------------------------------------------------------------------------- the commands
def test_judges_evaluate_demo_offline(run_cli, tmp_path):
    out = tmp_path / "meta.json"
    r = run_cli("judges", "evaluate", "demo", "--detectors", "quip", "--out", out)
    assert r.returncode == 0, describe(r)
    res = json.loads(out.read_text())
    [row] = res["rows"]
    assert row["detector"] == "quip" and row["n_test"] + row["n_dev"] == res["items"]
    for key in ("macro_f1", "kappa", "auroc"):
        e = row[key]
        assert e["lo"] <= e["value"] <= e["hi"]
    assert set(row["per_category"]) == {"supported", "unsupported", "misattributed", "partly_supported"}
    assert "macro-F1" in r.stdout and "misattributed" in r.stdout
    bad = run_cli("judges", "evaluate", "demo", "--detectors", "claims")
    assert bad.returncode == 2 and "need an LLM; give --spec" in bad.stderr


def test_judges_evaluate_llm_detectors_over_http(run_cli, tmp_path):

    labels = _labels(tmp_path)
    with FakeOpenAI() as fake:
        r, out = _evaluate(
            run_cli,
            tmp_path,
            labels,
            fake,
            "judge",
            "--detectors",
            "llm_faithfulness,claims,llm_correctness",
            prices={"judge": {"input": 1.0, "output": 2.0}},
        )
        assert r.returncode == 0, describe(r)
        by_kind = fake.stats()["by_kind"]
        assert by_kind["faithfulness"] == 24 and by_kind["correctness"] == 24 and by_kind["claim_split"] == 24
        assert by_kind["claim_check"] >= 24
        res = json.loads(out.read_text())
        claims = next(r for r in res["rows"] if r["detector"] == "claims")
        usd = claims["usd_per_item"]
        assert 0 < usd["lo"] <= usd["value"] <= usd["hi"] and claims["unscored"] == 0
        assert set(res["scores"]["claims"]) == {json.loads(line)["id"] for line in labels.read_text().splitlines()}
        # again: every reply cached, the same scores
        prices = {"judge": {"input": 1.0, "output": 2.0}}
        again, again_out = _evaluate(
            run_cli, tmp_path, labels, fake, "judge", "--detectors", "claims", prices=prices, out="again.json"
        )
        assert again.returncode == 0 and fake.stats()["by_kind"]["claim_split"] == 24, describe(again)
        assert json.loads(again_out.read_text())["scores"]["claims"] == res["scores"]["claims"]


def test_human_labels_of_a_run_give_ppi_intervals(report_run, run_cli, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(report_run.run_dir, run_dir)
    rec = report_run.records
    judged = rec[rec["faithfulness"].notna()]
    cid = sorted(judged["config_id"].unique())[0]
    mine = judged[judged["config_id"] == cid].head(12)
    labels = tmp_path / "human.jsonl"
    # the human disagrees with the judge on a third of the answers
    labels.write_text(
        "".join(
            json.dumps({"config_id": cid, "qid": q, "grounded": bool(f) if i % 3 else not bool(f)}) + "\n"
            for i, (q, f) in enumerate(zip(mine["qid"], mine["faithfulness"]))
        )
    )
    before = json.loads((run_dir / "verdict.json").read_text())
    r = run_cli("judges", "import", run_dir, labels)
    assert r.returncode == 0, describe(r)
    assert "PPI++" in r.stdout and cid in r.stdout
    # verdict.json recomputed with the labels: the same pick (the scripted judges are constant, so they give way to
    # the stage-1 metric and say why), what failed kept
    after = json.loads((run_dir / "verdict.json").read_text())
    assert after["chosen"] == before["chosen"] and after["metric"] == before["metric"]
    assert after["failed"] == before["failed"] and "cannot decide it" in after["metric_why"]
    shown = run_cli("show", run_dir)
    assert shown.returncode == 0 and "PPI++" in shown.stdout, describe(shown)
    rep = run_cli("report", run_dir)
    assert rep.returncode == 0 and 'id="ppi"' in (run_dir / "report.html").read_text()
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text(json.dumps({"config_id": cid, "qid": "nope", "grounded": True}) + "\n")
    bad = run_cli("judges", "import", run_dir, wrong)
    assert bad.returncode == 2 and "has no answer of configuration" in bad.stderr


# --------------------------------------------------------------------------- unmeasured items, chance
def _scored(scores, errors=None):
    from ragsweep.groundedness.detectors.base import Scored

    errors = errors or [None] * len(scores)
    return [Scored(s, 1.0, 0.0, e) for s, e in zip(scores, errors)]


def test_constant_or_chance_level_detectors_are_flagged_and_good_ones_not():
    items = load_labels("demo")
    labelled = meta.LabelledSplit(items, *meta.split(items, 0.5, 0))
    y = [it.grounded for it in items]
    good = meta.evaluate("good", "grounded", labelled, _scored([0.9 if g else 0.1 for g in y]), n_boot=200)
    assert not good.no_better_than_chance and good.chance_reason is None and good.kappa.lo > 0
    const = meta.evaluate("const", "grounded", labelled, _scored([0.0] * len(items)), n_boot=200)
    assert const.no_better_than_chance and const.chance_reason == "every test item scored 0"
    rng = np.random.default_rng(3)
    noise = meta.evaluate("noise", "grounded", labelled, _scored(list(rng.random(len(items)))), n_boot=200)
    assert noise.no_better_than_chance and "kappa's 95% CI" in noise.chance_reason
    # one decision for every test item, though the scores vary
    assert (
        meta.constant_output(np.array([0.2, 0.3]), np.array([True, True]))
        == "every test item judged grounded at the threshold"
    )
    k = meta.Estimate(-0.3, -0.5, -0.1)
    assert (
        meta.chance_reason(np.array([0.1, 0.9]), np.array([False, True]), k)
        == "kappa's 95% CI [-0.500, -0.100] is below 0"
    )


def test_unmeasured_items_are_counted_with_the_first_reason():
    long = "reply does not start with YES or NO: '" + "blah " * 40 + "'"
    n, why = meta.unmeasured(_scored([1.0, None, None, 0.0], [None, None, long, "other"]))
    assert n == 2 and why.startswith("reply does not start with YES or NO: 'blah") and len(why) == 100
    assert meta.unmeasured(_scored([None], [None])) == (1, None) and meta.unmeasured(_scored([1.0])) == (0, None)


def test_judges_evaluate_prints_unmeasured_reasons_and_a_judge_no_better_than_chance(run_cli, tmp_path):
    """A faithfulness judge that says No to everything is flagged; unparseable correctness and claim-split replies
    are counted, with their reasons, in the table, its notes and the JSON."""
    from fake_openai import DEFAULT_MALFORMED_REPLY

    labels = _labels(tmp_path)
    again = "Your reply could not be read"  # a repair re-ask: unreadable once more, the item is unmeasured
    rules = [
        {"kind": "faithfulness", "action": "reply", "reply": "No"},
        {"kind": "correctness", "match": again, "action": "malformed", "times": 3},
        {"kind": "correctness", "action": "malformed", "times": 3},
        {"kind": "claim_split", "match": again, "action": "reply", "reply": "-", "times": 2},
        {"kind": "claim_split", "action": "reply", "reply": "-", "times": 2},
    ]
    with FakeOpenAI(rules=rules, structured="ignore") as fake:
        r, out = _evaluate(
            run_cli, tmp_path, labels, fake, "chance-judge", "--detectors", "llm_faithfulness,llm_correctness,claims"
        )
    assert r.returncode == 0, describe(r)
    reason = f"first line is not a score: {DEFAULT_MALFORMED_REPLY!r}"
    res = {row["detector"]: row for row in json.loads(out.read_text())["rows"]}
    faith, corr = res["llm_faithfulness"], res["llm_correctness"]
    assert faith["no_better_than_chance"] and faith["chance_reason"] == "every test item scored 0"
    assert faith["unscored"] == 0 and faith["unmeasured_example"] is None and faith["n_items"] == 24
    assert corr["unscored"] == 3 and corr["unmeasured_example"] == reason
    assert res["claims"]["unscored"] == 2 and res["claims"]["unmeasured_example"] == "no claims in the split reply: '-'"
    assert "llm_faithfulness (!)" in r.stdout and "(!) no better than chance on the" in r.stdout
    assert "    llm_faithfulness: every test item scored 0" in r.stdout
    assert (
        f"llm_correctness: 3/24 items unmeasured (unparseable replies, failed calls; left out of the figures), "
        f"e.g. {reason}" in r.stdout
    )
    assert "claims: 2/24 items unmeasured" in r.stdout
    assert "3/24" in r.stdout and "0/24" in r.stdout  # the table's unmeasured column
    # the call cache says which detector made each call
    import sqlite3

    db = sqlite3.connect(str(tmp_path / "c" / "llm_calls.sqlite"))
    made = dict(db.execute("SELECT judge, COUNT(*) FROM calls WHERE stage = 'judges' GROUP BY judge").fetchall())
    db.close()
    assert set(made) == {"llm_faithfulness", "llm_correctness", "claims"} and made["llm_faithfulness"] == 24


def test_judges_evaluate_repeats_show_a_random_judge_and_a_consistent_one(tmp_path, run_cli):
    """``--repeats 3``: the faithfulness judge scripted at random (its reply a function of the whole request, the
    repeat's seed in it) disagrees with itself (alpha's CI reaches 0, items flip); the correctness judge scripted
    consistently (a function of the prompt alone) agrees with itself perfectly."""

    labels = _labels(tmp_path)
    rules = [
        {"kind": "faithfulness", "choices": ["YES", "NO"], "choose_by": "request"},
        {"kind": "correctness", "choices": ["1\nNo.", "3\nSo so.", "5\nYes."], "choose_by": "prompt"},
    ]
    with FakeOpenAI(rules=rules) as fake:
        r, out = _evaluate(
            run_cli,
            tmp_path,
            labels,
            fake,
            "repeat-judge",
            "--detectors",
            "llm_faithfulness,llm_correctness",
            "--repeats",
            "3",
        )
        judged = [c for c in fake.calls() if c["kind"] in ("faithfulness", "correctness")]
    assert r.returncode == 0, describe(r)
    assert len(judged) == len({c["key"] for c in judged}) == 2 * 24 * 3  # each repeat a request of its own
    res = {row["detector"]: row for row in json.loads(out.read_text())["rows"]}
    coin, steady = res["llm_faithfulness"]["self_agreement"], res["llm_correctness"]["self_agreement"]
    assert coin["no_better_than_chance"] and coin["lo"] <= 0.0 and coin["flips"] > 0.4 and coin["repeats"] == 3
    assert steady["alpha"] == 1.0 and steady["flips"] == 0.0 and not steady["no_better_than_chance"]
    table = " ".join(r.stdout.split())
    assert "(3 repeats)" in table and "flips" in table  # the table has the columns (their headers may wrap)
