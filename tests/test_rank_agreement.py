"""Ranking agreement between two question sets (``evaluation.rank_agreement``), ``compare``'s ranking
table and ``report --against``.

The statistics are checked on simulated score matrices (a known spread of configuration means, or
none) and on exact cases; the wiring on the reference sweep (``base_run``), against a copy of itself
whose questions or scores are changed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import procwait
import pytest
from conftest import describe
from scipy.stats import kendalltau, spearmanr

from ragsweep.evaluation.rank_agreement import rank_agreement
from ragsweep.results import load_run


def simulated(seed: int, means: np.ndarray, questions: int = 80, noise: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """Two independent question sets scoring the same configurations: true mean plus per-question noise."""
    rng = np.random.default_rng(seed)
    draw = lambda: means[:, None] + rng.normal(0, noise, (len(means), questions))  # noqa: E731
    return draw(), draw()


# --------------------------------------------------------------------------- statistics
def test_spread_configurations_rank_alike_and_the_ci_excludes_zero():
    a, b = simulated(1, np.linspace(0.3, 0.7, 30))
    r = rank_agreement(a, b, n_boot=200, seed=0)
    assert r.spearman > 0.85 and 0 < r.ci_lo <= r.ci_hi <= 1
    assert r.spearman == pytest.approx(spearmanr(a.mean(axis=1), b.mean(axis=1)).statistic)
    assert r.kendall == pytest.approx(kendalltau(a.mean(axis=1), b.mean(axis=1)).statistic)
    assert (r.n_configs, r.n_questions_a, r.n_questions_b, r.k, r.n_boot, r.n_degenerate) == (30, 80, 80, 5, 200, 0)


def test_without_differences_between_configurations_the_ci_includes_zero():
    covered = 0
    for seed in range(20):
        a, b = simulated(100 + seed, np.full(30, 0.5))
        r = rank_agreement(a, b, n_boot=200, seed=seed)
        covered += r.ci_lo <= 0 <= r.ci_hi
    assert covered >= 16


def test_identical_and_reversed_rankings():
    a, _ = simulated(2, np.linspace(0.2, 0.8, 8), questions=30)
    same = rank_agreement(a, a.copy(), n_boot=100)
    assert same.spearman == 1.0 and same.kendall == pytest.approx(1.0)
    assert same.top1_same and same.top_k_overlap == 1.0
    rev = rank_agreement(a, 1.0 - a, n_boot=100)
    assert rev.spearman == -1.0 and rev.kendall == pytest.approx(-1.0)
    assert not rev.top1_same and rev.top_k_overlap == 2 / 5  # top 5 and bottom 5 of 8 share 2


def test_missing_scores_are_left_out_of_the_means():
    a, b = simulated(3, np.linspace(0.2, 0.8, 6), questions=20)
    a[0, :10] = np.nan  # fewer questions for one configuration
    a[:, 5] = np.nan  # a question nobody answered
    b[2] = np.nan  # a configuration without scores in B: left out
    r = rank_agreement(a, b, n_boot=100)
    keep = [0, 1, 3, 4, 5]
    assert r.n_configs == 5 and r.n_questions_a == 19 and r.n_questions_b == 20
    assert r.spearman == pytest.approx(spearmanr(np.nanmean(a[keep], axis=1), b[keep].mean(axis=1)).statistic)


def test_constant_resamples_are_skipped_and_counted():
    a = np.zeros((4, 10))
    a[0, 0] = 1.0  # most resamples miss question 0: every configuration's mean is 0
    b = np.tile(np.arange(4.0)[:, None], (1, 10))
    r = rank_agreement(a, b, n_boot=200, seed=1)
    assert 0 < r.n_degenerate < 200 and r.ci_lo == r.ci_hi  # only resamples with question 0: rho is one value


def test_same_seed_same_interval():
    a, b = simulated(4, np.linspace(0.4, 0.6, 12))
    first, again = (rank_agreement(a, b, n_boot=200, seed=7) for _ in range(2))
    assert first == again
    other = rank_agreement(a, b, n_boot=200, seed=8)
    assert (other.ci_lo, other.ci_hi) != (first.ci_lo, first.ci_hi) and other.spearman == first.spearman


def test_refuses_what_it_cannot_rank():
    with pytest.raises(ValueError, match="at least 3 configurations"):
        rank_agreement(np.ones((2, 5)), np.ones((2, 5)))
    with pytest.raises(ValueError, match="at least 3 configurations with scores in both"):
        rank_agreement(np.ones((3, 5)), np.array([[1.0] * 5, [np.nan] * 5, [2.0] * 5]))
    with pytest.raises(ValueError, match="same configurations"):
        rank_agreement(np.ones((3, 5)), np.ones((4, 5)))
    with pytest.raises(ValueError, match="matrix"):
        rank_agreement(np.ones(3), np.ones(3))


def test_a_large_grid_is_quick():
    import time

    a, b = simulated(5, np.linspace(0.3, 0.7, 216), questions=300)
    start = time.perf_counter()
    rank_agreement(a, b, n_boot=1000)
    assert time.perf_counter() - start < procwait.scaled(5)


# --------------------------------------------------------------------------- compare and report
def other_questions(run, metric: str | None = None):
    """The run as if over another question set: other qids (unpaired), ``metric`` reversed if given."""
    run.records["qid"] = "other-" + run.records["qid"]
    run.records["question"] = "other " + run.records["question"]
    if metric:
        run.records[metric] = 1.0 - run.records[metric]
    return run


def test_compare_ranks_the_shared_configurations_per_metric(base_run):
    from ragsweep.results.compare import compare_runs
    from ragsweep.results.ranking import COLUMNS

    a = load_run(base_run.run_dir)
    b = other_questions(load_run(base_run.run_dir), "ndcg")
    result = compare_runs(a, b, metrics=["ndcg", "hit", "bertscore_f1_rescaled"])
    rk = result.ranking.set_index("metric")
    assert list(result.ranking.columns) == COLUMNS and result.questions_paired == 0
    n = a.records["config_id"].nunique()
    n_test = a.records.loc[a.records["split"] == "test", "qid"].nunique()
    assert (rk["n_configs"] == n).all() and (rk["n_a"] == n_test).all() and (rk["n_b"] == n_test).all()
    assert rk.loc["hit", "spearman"] == rk.loc["bertscore_f1_rescaled", "spearman"] == 1.0  # same scores
    assert rk.loc["bertscore_f1_rescaled", "top1_same"] and rk.loc["bertscore_f1_rescaled", "top5_overlap"] == 1.0
    assert rk.loc["ndcg", "spearman"] == -1.0  # reversed
    # the configuration means it ranks are compare's own
    means = result.table[result.table["metric"] == "ndcg"].set_index("config_id")
    assert spearmanr(means["mean_a"], means["mean_b"]).statistic == pytest.approx(-1.0)


def test_compare_with_fewer_than_three_shared_configurations_has_no_ranking(base_run):
    from ragsweep.results.compare import compare_runs

    a, b = load_run(base_run.run_dir), load_run(base_run.run_dir)
    keep = list(dict.fromkeys(b.records["config_id"]))[:2]
    b.records = b.records[b.records["config_id"].isin(keep)]
    assert compare_runs(a, b, metrics=["ndcg"]).ranking is None


def test_compare_and_report_against_on_the_command_line(base_run, run_cli, tmp_path):
    """A copy of the reference run over "other" questions (same scores): rho = 1 for every metric."""
    import shutil

    other = tmp_path / "other"
    shutil.copytree(base_run.run_dir, other)
    recs = pd.read_parquet(other / "records.parquet")
    recs["qid"] = "other-" + recs["qid"]
    recs["question"] = "other " + recs["question"]
    recs.to_parquet(other / "records.parquet")

    proc = run_cli("compare", base_run.run_dir, other, "--metric", "ndcg", "--csv", tmp_path / "cmp.csv")
    assert proc.returncode == 0, describe(proc)
    assert "Ranking agreement (Spearman of the configurations' means" in proc.stdout
    assert "ranks the configurations as the human one does" in proc.stdout
    ranking = pd.read_csv(tmp_path / "cmp.ranking.csv")
    assert ranking["metric"].tolist() == ["ndcg"] and ranking["spearman"].tolist() == [1.0]

    out = tmp_path / "report.html"
    proc = run_cli("report", base_run.run_dir, "--against", other, "--out", out, "--metric", "ndcg")
    assert proc.returncode == 0, describe(proc)
    page = out.read_text(encoding="utf-8")
    assert "Ranking agreement with" in page and 'id="ranking-agreement"' in page and 'href="#agreement"' in page
    assert "Spearman \u03c1 = 1.00" in page  # the scatter's title, in its caption
