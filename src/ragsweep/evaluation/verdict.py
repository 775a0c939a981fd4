"""The verdict: which configuration to use, which ones are tied with it, and what the choice costs.

The configuration is **chosen on the validation questions and reported on the test questions**:
the maximum of many noisy means is biased upwards (the winner's curse; Thaler 1988, "Anomalies:
The Winner's Curse", J. Econ. Perspect. 2(1); for model selection Cawley & Talbot 2010, "On
Over-fitting in Model Selection and Subsequent Selection Bias in Performance Evaluation", JMLR
11), so the figure that chose it cannot also report it. The optimism (validation - test of the
chosen configuration) shows how much of its lead was luck. Configurations **tied** with it are
those a paired test on the test questions cannot tell apart from it, with Holm's correction over
the n - 1 comparisons of the best against each other (``significance.compare_to_best``); among
the tied ones the cheapest and the fastest are named, since the user may prefer them at no
demonstrable loss.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

VALIDATION, TEST = "validation", "test"
LOWER_IS_BETTER = {"retrieval_ms", "query_embedding_ms", "generation_ms"}
_FLOATS = {"validation_mean", "test_mean", "test_lo", "test_hi", "optimism"}


@dataclass
class Verdict:
    """The recommendation for one metric, and everything needed to explain it."""

    metric: str
    chosen: str | None
    chosen_on: str  # "validation", or "test" when there are no validation questions (then optimistic)
    reported_on: str
    n_validation: int
    n_test: int
    validation_mean: float
    test_mean: float
    test_lo: float
    test_hi: float
    optimism: float
    alpha: float
    tied: list[str] = field(default_factory=list)
    better: list[str] = field(default_factory=list)  # significantly better on test than the chosen one
    worse: list[str] = field(default_factory=list)
    n_configs: int = 0
    comparisons: pd.DataFrame | None = field(default=None, repr=False)
    costs: list[dict] = field(default_factory=list)  # chosen and tied: config_id, latency_ms, tokens, chunks
    fastest: str | None = None
    cheapest: str | None = None
    smallest: str | None = None
    by_type: list[dict] = field(default_factory=list)
    missed_by_all: list[str] = field(default_factory=list)
    missed_metric: str | None = None
    test_method: str = ""
    note: str | None = None

    def to_dict(self) -> dict:
        """JSON-ready (``verdict.json``): every field but the comparisons table, NaN as None."""
        out = {}
        for k, v in self.__dict__.items():
            if k == "comparisons":
                continue
            out[k] = None if isinstance(v, float) and math.isnan(v) else v
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Verdict":
        known = {k: (math.nan if v is None and k in _FLOATS else v) for k, v in data.items()
                 if k in cls.__dataclass_fields__}
        return cls(**known)

    def why(self, label: str | None = None) -> str:
        """One sentence saying why this configuration is recommended (``label``: the metric's display name)."""
        name = label or self.metric
        if self.chosen is None:
            return self.note or f"no configuration has values of {name}"
        chose = (f"it has the best mean {name} on the {self.n_validation} validation questions "
                 f"({self.validation_mean:.3f})" if self.chosen_on == VALIDATION else
                 f"it has the best mean {name} (no validation questions: chosen and reported on the same "
                 f"questions, so the figure is optimistic)")
        tied = (f"{len(self.tied)} other configuration(s) are statistically tied with it on the {self.n_test} test "
                f"questions" if self.tied else f"every other configuration is significantly worse on the "
                f"{self.n_test} test questions" if not self.better else "")
        better = (f"{len(self.better)} configuration(s) are significantly better on test, so the validation "
                  f"choice did not carry over" if self.better else "")
        parts = [p for p in (tied, better) if p]
        return f"Recommended because {chose}; " + "; ".join(parts) + f" (paired tests, Holm, alpha = {self.alpha})."


def _mean_ci(values, n_boot: int, confidence: float, seed: int) -> tuple[float, float, float]:
    from ragsweep.evaluation.bootstrap import bootstrap_ci

    return bootstrap_ci(values, n_boot, confidence, seed)


def _costs(records: pd.DataFrame, configs: list[str], chunks: dict[str, int] | None) -> list[dict]:
    """Per configuration: median latency per question (retrieval + generation, ms), mean LLM tokens
    per question, total LLM cost (USD, when priced) and chunks in its index."""
    import pandas as pd

    out = []
    for c in configs:
        r = records[records["config_id"] == c]
        lat = (pd.to_numeric(r.get("retrieval_ms"), errors="coerce").fillna(0)
               + pd.to_numeric(r.get("generation_ms"), errors="coerce").fillna(0))
        tokens = (pd.to_numeric(r.get("prompt_tokens"), errors="coerce").fillna(0)
                  + pd.to_numeric(r.get("completion_tokens"), errors="coerce").fillna(0))
        cost = pd.to_numeric(r.get("cost_usd"), errors="coerce")
        out.append({"config_id": c, "latency_ms": float(lat.median()) if len(lat) else math.nan,
                    "tokens": float(tokens.mean()) if len(tokens) else math.nan,
                    "cost_usd": float(cost.sum()) if cost.notna().any() else None,
                    "chunks": (chunks or {}).get(c)})
    return out


def _argmin(costs: list[dict], key: str) -> str | None:
    """The configuration with the smallest ``key`` (ties: the first, i.e. the chosen or better-ranked one)."""
    have = [c for c in costs if c.get(key) is not None and not (isinstance(c[key], float) and math.isnan(c[key]))]
    if not have:
        return None
    return min(have, key=lambda c: c[key])["config_id"]


def _by_type(test: pd.DataFrame, config: str, metric: str, n_boot: int, confidence: float, seed: int) -> list[dict]:
    rows = []
    r = test[test["config_id"] == config]
    if "qtype" not in r.columns:
        return rows
    for qtype, group in sorted(r.groupby(r["qtype"].fillna("(untyped)")), key=lambda kv: str(kv[0])):
        vals = group[metric].dropna().to_numpy(dtype=float)
        if vals.size:
            mean, lo, hi = _mean_ci(vals, n_boot, confidence, seed)
            rows.append({"qtype": str(qtype), "n": int(vals.size), "mean": mean, "lo": lo, "hi": hi})
    return rows


def _missed(test: pd.DataFrame, metric: str) -> tuple[list[str], str | None]:
    """Test questions every configuration misses: hit = 0 everywhere (retrieval), else the metric = 0
    everywhere when it is a 0/1 metric."""
    for m in ("hit", metric):
        if m not in test.columns:
            continue
        vals = test[["qid", m]].dropna()
        if vals.empty or not vals[m].isin([0.0, 1.0]).all():
            continue
        best = vals.groupby("qid")[m].max()
        return sorted(best[best == 0].index.astype(str)), m
    return [], None


def decide(
    records: pd.DataFrame,
    metric: str,
    *,
    alpha: float = 0.05,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    chunks: dict[str, int] | None = None,
) -> Verdict:
    """The verdict from per-question records (config_id, qid, split, error, ``metric``, latency and
    token columns, qtype). Error rows and unmeasured values are left out; ties in a mean go to the
    smaller config_id, so the result does not depend on row order."""
    from ragsweep.evaluation.significance import compare_to_best, question_matrix, rank_configs

    higher = metric not in LOWER_IS_BETTER
    ok = records[records["error"].isna()] if "error" in records.columns else records
    ok = ok[ok[metric].notna()] if metric in ok.columns else ok.iloc[0:0]
    ok = ok.sort_values(["config_id", "qid"], kind="stable")  # bootstrap CIs must not depend on row order
    val, test = ok[ok["split"] == VALIDATION], ok[ok["split"] == TEST]
    nan = math.nan
    empty = Verdict(metric, None, VALIDATION, TEST, 0, 0, nan, nan, nan, nan, nan, alpha)
    if ok.empty:
        empty.note = f"no configuration has values of {metric} (no reference answers, or nothing answered yet)"
        return empty
    chosen_on = VALIDATION
    if val.empty or test.empty:  # e.g. --limit left one split empty: say so, do not pretend
        val = test = ok
        chosen_on = TEST if not ok.empty else VALIDATION
    chosen = rank_configs(question_matrix(val[["config_id", "qid", metric]], metric), higher)[0]
    test_vals = test.loc[test["config_id"] == chosen, metric].to_numpy(dtype=float)
    val_vals = val.loc[val["config_id"] == chosen, metric].to_numpy(dtype=float)
    t_mean, t_lo, t_hi = _mean_ci(test_vals, n_boot, confidence, seed) if test_vals.size else (nan, nan, nan)
    v_mean = float(val_vals.mean()) if val_vals.size else nan
    comp = compare_to_best(test[["config_id", "qid", metric]], metric, best=chosen, higher_is_better=higher,
                           alpha=alpha, n_boot=n_boot, confidence=confidence, seed=seed) \
        if test["config_id"].eq(chosen).any() else None
    tied, better, worse = [], [], []
    for r in ([] if comp is None else comp.to_dict("records")):
        sign = 1.0 if higher else -1.0
        if not r["significant"]:
            tied.append(r["other"])
        elif sign * r["diff"] < 0:
            better.append(r["other"])
        else:
            worse.append(r["other"])
    costs = _costs(test, [chosen] + tied, chunks)
    missed, missed_metric = _missed(test, metric)
    method = ""
    if comp is not None and "test" in comp.columns and len(comp):
        method = ", ".join(sorted(set(map(str, comp["test"].dropna()))))
    return Verdict(
        metric=metric, chosen=chosen, chosen_on=chosen_on, reported_on=TEST if chosen_on == VALIDATION else "all",
        n_validation=int(val["qid"].nunique()) if chosen_on == VALIDATION else 0,
        n_test=int(test["qid"].nunique()), validation_mean=v_mean, test_mean=t_mean, test_lo=t_lo, test_hi=t_hi,
        optimism=(v_mean - t_mean) if chosen_on == VALIDATION else nan, alpha=alpha, tied=tied, better=better,
        worse=worse, n_configs=int(ok["config_id"].nunique()), comparisons=comp, costs=costs,
        fastest=_argmin(costs, "latency_ms"), cheapest=_argmin(costs, "tokens"), smallest=_argmin(costs, "chunks"),
        by_type=_by_type(test, chosen, metric, n_boot, confidence, seed), missed_by_all=missed,
        missed_metric=missed_metric, test_method=method,
        note=None if chosen_on == VALIDATION else "no separate validation questions: chosen and reported on the "
        "same questions (optimistic)",
    )
