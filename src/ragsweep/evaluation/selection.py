"""Two-stage selection: a cheap metric picks which configurations the expensive LLM judges see.

Stage 1 ranks every configuration on the validation questions by one metric. Stage 2 takes the
top N plus every configuration not significantly worse than the N-th, so a configuration is
dropped only on evidence, not because of noise in a small validation set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ragsweep.evaluation.paired_tests import paired_test
from ragsweep.evaluation.significance import holm, question_matrix, rank_configs
from ragsweep.evaluation.test_options import DEFAULT, TestOptions

if TYPE_CHECKING:
    import pandas as pd

RANKING_COLUMNS = ["config_id", "mean", "n", "rank", "p_vs_nth", "p_holm", "selected", "reason", "test"]
TOP_N = "top_n"
BEYOND_MAX = "beyond max_configs"
NO_VALUES = "no values"


@dataclass(frozen=True)
class Selection:
    """The configurations for stage 2 (best first), the stage-1 ranking behind them, and the rule in words."""

    selected: list[str]
    ranking: pd.DataFrame = field(compare=False)
    rule: str


def select_configurations(
    values: pd.DataFrame,
    metric: str,
    *,
    top_n: int = 3,
    max_configs: int | None = 10,
    higher_is_better: bool = True,
    tests: TestOptions = DEFAULT,
) -> Selection:
    """Select the top ``top_n`` configurations plus every one not significantly worse than the N-th.

    ``values`` has columns config_id, qid and ``metric`` for the validation questions only
    (NaN = unmeasured). Configurations are ranked by mean, ties by config_id. Each one below
    the N-th is tested against it on the questions both measured with a one-sided ``paired_test``
    (alternative: the candidate is worse; its name in ``test``) in a family of all candidates,
    whose p-values can reach the Holm thresholds however many there are, and the p-values are
    Holm-adjusted across the candidates (Holm 1979).
    The correction raises p-values, so fewer candidates count as significantly worse and more
    are kept: the cautious direction, since wrongly dropping a good configuration from stage 2
    is the error to avoid. A candidate sharing no questions with the N-th has no p-value and is
    kept. ``max_configs`` then caps the total by rank (the top N are always kept when
    ``top_n <= max_configs``); configurations with no values are never selected.
    """
    import pandas as pd

    if top_n < 1:
        raise ValueError(f"top_n must be at least 1, got {top_n}")
    if max_configs is not None and max_configs < 1:
        raise ValueError(f"max_configs must be at least 1 or None, got {max_configs}")
    alpha = tests.alpha
    rule = describe_rule(metric, top_n, alpha, max_configs, higher_is_better, tests.n_resamples)
    if values.empty:
        return Selection([], pd.DataFrame(columns=RANKING_COLUMNS), rule)

    matrix = question_matrix(values, metric)
    counts = matrix.notna().sum(axis=0)
    means = matrix.mean(axis=0, skipna=True)
    ranked = rank_configs(matrix, higher_is_better)
    measured = [c for c in ranked if counts[c] > 0]
    top, candidates = measured[:top_n], measured[top_n:]

    p_vs_nth: dict[str, float] = {}
    methods: dict[str, str] = {}
    if candidates:
        nth = matrix[top[-1]].to_numpy()
        worse = "less" if higher_is_better else "greater"
        for c in candidates:
            t = paired_test(
                matrix[c].to_numpy(),
                nth,
                worse,
                tests=tests,
                family_size=len(candidates),
            )
            p_vs_nth[c], methods[c] = t.p_value, t.method
    p_holm = dict(zip(candidates, holm([p_vs_nth[c] for c in candidates])))

    reasons: dict[str, str] = {c: TOP_N for c in top}
    for c in candidates:
        p = p_holm[c]
        if p < alpha:  # NaN (no shared questions) compares False: kept
            reasons[c] = f"significantly worse than #{top_n}"
        else:
            reasons[c] = f"not significantly worse than #{top_n} (p_holm={p:.3g})"
    kept = [c for c in measured if not reasons[c].startswith("significantly")]
    if max_configs is not None:
        for c in kept[max_configs:]:
            reasons[c] = BEYOND_MAX
        kept = kept[:max_configs]
    selected = set(kept)

    nan = float("nan")
    rank = {c: i for i, c in enumerate(measured, start=1)}
    ranking = pd.DataFrame.from_records(
        [
            {
                "config_id": c,
                "mean": float(means[c]),
                "n": int(counts[c]),
                "rank": rank.get(c),
                "p_vs_nth": p_vs_nth.get(c, nan),
                "p_holm": p_holm.get(c, nan),
                "selected": c in selected,
                "reason": reasons.get(c, NO_VALUES),
                "test": methods.get(c),
            }
            for c in ranked
        ],
        columns=RANKING_COLUMNS,
    )
    ranking["rank"] = ranking["rank"].astype("Int64")
    ranking["p_vs_nth"] = ranking["p_vs_nth"].astype(np.float64)
    ranking["p_holm"] = ranking["p_holm"].astype(np.float64)
    return Selection(kept, ranking, rule)


def describe_rule(
    metric: str,
    top_n: int,
    alpha: float,
    max_configs: int | None,
    higher_is_better: bool,
    n_resamples: int,
) -> str:
    """One sentence stating the stage-2 selection rule and its test, for the manifest and README."""
    direction = "higher" if higher_is_better else "lower"
    cap = f", at most {max_configs} in all" if max_configs is not None else ""
    return (
        f"Stage 2 takes the top {top_n} configurations by mean {metric} ({direction} is better) on the "
        f"validation questions plus every other configuration not significantly worse than #{top_n} "
        f"(one-sided paired test on the questions both measured: exact sign-flip enumeration when the "
        f"non-zero differences have at most {n_resamples} sign patterns, else the exact sign test when "
        f"they all have one size, else the paired t-test; Holm-adjusted across candidates, "
        f"alpha = {alpha}){cap}."
    )
