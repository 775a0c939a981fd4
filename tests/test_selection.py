"""Stage-2 configuration selection: top N plus the configurations not significantly worse than #N."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ragsweep.evaluation.paired_tests import paired_test
from ragsweep.evaluation.selection import RANKING_COLUMNS, Selection, select_configurations
from ragsweep.evaluation.significance import holm
from ragsweep.evaluation.test_options import TestOptions

N_Q = 40


def _long(columns: dict[str, np.ndarray | list[float]]) -> pd.DataFrame:
    rows = [
        {"config_id": c, "qid": f"q{i:02d}", "mrr": float(v)} for c, vals in columns.items() for i, v in enumerate(vals)
    ]
    return pd.DataFrame(rows)


def _sweep() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    base = rng.uniform(0.2, 0.8, N_Q)
    return _long(
        {
            "c1": base + 0.30,
            "c2": base + 0.20,
            "c3": base + 0.10,
            "close": base + 0.10 + rng.normal(0, 0.05, N_Q) - 0.005,  # indistinguishable from #3
            "worse": base - 0.20 + rng.normal(0, 0.02, N_Q),  # clearly worse than #3
            "blank": [np.nan] * N_Q,
        }
    )


def _ranking(sel: Selection) -> pd.DataFrame:
    return sel.ranking.set_index("config_id")


def test_worse_dropped_indistinguishable_kept():
    sel = select_configurations(_sweep(), "mrr", top_n=3, tests=TestOptions(n_resamples=2000))
    assert sel.selected == ["c1", "c2", "c3", "close"]
    r = _ranking(sel)
    assert list(sel.ranking.columns) == RANKING_COLUMNS
    assert list(r.index) == ["c1", "c2", "c3", "close", "worse", "blank"]
    assert r.loc[["c1", "c2", "c3"], "reason"].tolist() == ["top_n"] * 3
    assert r.loc["close", "reason"].startswith("not significantly worse than #3 (p_holm=")
    assert r.loc["worse", "reason"] == "significantly worse than #3"
    assert r.loc["blank", "reason"] == "no values" and not r.loc["blank", "selected"]
    assert r["selected"].tolist() == [True, True, True, True, False, False]
    assert r["rank"].tolist()[:5] == [1, 2, 3, 4, 5] and pd.isna(r.loc["blank", "rank"])
    assert r.loc["worse", "n"] == N_Q and r.loc["blank", "n"] == 0
    assert r.loc["worse", "p_holm"] < 0.05
    assert r.loc[["close", "worse"], "p_holm"].tolist() == pytest.approx(holm(r.loc[["close", "worse"], "p_vs_nth"]))
    assert math.isnan(r.loc["c1", "p_vs_nth"])
    assert "top 3" in sel.rule and "Holm" in sel.rule and "mrr" in sel.rule


def test_deterministic_and_row_order_free():
    values = _sweep()
    a = select_configurations(values, "mrr", tests=TestOptions(n_resamples=2000, seed=3))
    b = select_configurations(
        values.sample(frac=1.0, random_state=1), "mrr", tests=TestOptions(n_resamples=2000, seed=3)
    )
    assert a == b
    pd.testing.assert_frame_equal(a.ranking, b.ranking)


def test_max_configs_cap():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.3, 0.7, N_Q)
    # Eight near-identical configurations: none is significantly worse than #2.
    values = _long({f"k{i}": base + rng.normal(0, 0.01, N_Q) for i in range(8)})
    sel = select_configurations(values, "mrr", top_n=2, max_configs=5, tests=TestOptions(n_resamples=1000))
    assert len(sel.selected) == 5
    r = sel.ranking
    assert r["selected"].tolist() == [True] * 5 + [False] * 3
    assert r["reason"].tolist()[5:] == ["beyond max_configs"] * 3
    assert "at most 5" in sel.rule
    uncapped = select_configurations(values, "mrr", top_n=2, max_configs=None, tests=TestOptions(n_resamples=1000))
    assert len(uncapped.selected) == 8
    # top_n larger than the cap: the cap wins
    capped = select_configurations(values, "mrr", top_n=4, max_configs=2, tests=TestOptions(n_resamples=1000))
    assert len(capped.selected) == 2 and capped.ranking["reason"].tolist()[2:4] == ["beyond max_configs"] * 2


def test_ties_ranked_by_config_id():
    values = _long({"b": [0.5, 0.6], "a": [0.6, 0.5], "c": [0.1, 0.1]})
    sel = select_configurations(values, "mrr", top_n=1, tests=TestOptions(n_resamples=100))
    assert sel.ranking["config_id"].tolist() == ["a", "b", "c"]
    assert sel.selected[0] == "a"
    assert sel.ranking["rank"].tolist() == [1, 2, 3]


def test_fewer_than_top_n_and_lower_is_better():
    values = _long({"x": [0.2, 0.4], "y": [0.1, 0.3], "z": [np.nan, np.nan]})
    sel = select_configurations(values, "mrr", top_n=3)
    assert sel.selected == ["x", "y"]
    assert sel.ranking["reason"].tolist() == ["top_n", "top_n", "no values"]
    low = select_configurations(values, "mrr", top_n=1, higher_is_better=False, tests=TestOptions(n_resamples=100))
    assert low.selected[0] == "y" and "lower is better" in low.rule


def test_lower_is_better_drops_clearly_higher():
    rng = np.random.default_rng(2)
    base = rng.uniform(1.0, 2.0, N_Q)
    values = _long({"fast": base, "slow": base + 1.0 + rng.normal(0, 0.05, N_Q)})
    sel = select_configurations(values, "mrr", top_n=1, higher_is_better=False, tests=TestOptions(n_resamples=1000))
    assert sel.selected == ["fast"]
    assert _ranking(sel).loc["slow", "reason"] == "significantly worse than #1"


def test_partial_overlap_uses_shared_questions():
    values = _long({"a": [0.9, 0.8, 0.7, 0.9, 0.8, 0.9], "b": [np.nan, np.nan, 0.1, 0.2, 0.1, 0.2]})
    sel = select_configurations(values, "mrr", top_n=1, tests=TestOptions(n_resamples=100))
    r = _ranking(sel)
    # 4 shared questions, all worse: the exact one-sided p-value is 1/16
    assert r.loc["b", "p_vs_nth"] == pytest.approx(1 / 16)
    assert r.loc["b", "n"] == 4


def test_empty_and_invalid():
    empty = select_configurations(pd.DataFrame(columns=["config_id", "qid", "mrr"]), "mrr")
    assert empty.selected == [] and list(empty.ranking.columns) == RANKING_COLUMNS
    values = _long({"a": [0.1]})
    with pytest.raises(ValueError):
        select_configurations(values, "mrr", top_n=0)
    with pytest.raises(ValueError):
        select_configurations(values, "mrr", max_configs=0)
    with pytest.raises(ValueError):
        select_configurations(values, "mrr", tests=TestOptions(alpha=1.5))
    with pytest.raises(ValueError):
        select_configurations(pd.concat([values, values]), "mrr")  # duplicate (config_id, qid)


def test_candidates_use_paired_test_one_sided_in_their_family():
    """Each candidate below #N is tested with ``paired_test`` (alternative: worse than #N; family: the
    candidates), and the ranking names the test."""
    values = _sweep()
    sel = select_configurations(values, "mrr", top_n=3, tests=TestOptions(n_resamples=2000, seed=1))
    r = _ranking(sel)
    wide = values.pivot(index="qid", columns="config_id", values="mrr")
    for c in ("close", "worse"):
        t = paired_test(wide[c], wide["c3"], "less", family_size=2, tests=TestOptions(n_resamples=2000, seed=1))
        assert r.loc[c, "p_vs_nth"] == t.p_value and r.loc[c, "test"] == t.method == "paired t-test"
    assert r.loc[["c1", "c2", "c3", "blank"], "test"].isna().all()
    assert "paired t-test" in sel.rule and "exact sign test" in sel.rule and "2000 sign patterns" in sel.rule


def test_binary_metric_uses_the_exact_sign_test():
    rng = np.random.default_rng(3)
    hits = (rng.uniform(size=(100, 1)) < 0.6).astype(float)  # questions found by every configuration
    top = hits[:, 0].copy()
    low = top.copy()
    low[np.flatnonzero(top)[:20]] = 0.0  # misses 20 that the others find
    values = _long({"a": top, "b": top, "low": low})
    sel = select_configurations(values, "mrr", top_n=2)
    r = _ranking(sel)
    assert r.loc["low", "test"] == "exact sign test"
    assert r.loc["low", "p_vs_nth"] == pytest.approx(0.5**20) and not r.loc["low", "selected"]
