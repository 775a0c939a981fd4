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
demonstrable loss. When most of the chosen configuration's answers are degenerate (they echo the
prompt or chat markup, copy the retrieved context, restate themselves in a loop, or were cut at
``max_tokens``: the ``echoed_prompt`` / ``copied_context`` / ``looped`` flags of ``pipelines/degenerate.py``
and ``truncated``), the verdict says so (``flagged_note``): a metric that compares
answer text with the reference, such as BERTScore, may have rewarded the copying.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragsweep.evaluation.config_costs import argmin, config_costs
from ragsweep.evaluation.test_options import DEFAULT, TestOptions
from ragsweep.metrics.catalogue import CATALOGUE

if TYPE_CHECKING:
    import pandas as pd

VALIDATION, TEST = "validation", "test"
LOWER_IS_BETTER = {m.name for m in CATALOGUE if not m.higher_is_better}
_FLOATS = {"validation_mean", "test_mean", "test_lo", "test_hi", "optimism"}
# per-answer 1/0 (NaN: not an LLM answer, or not measured; a column older records lack is left out)
FLAGS = ("copied_context", "echoed_prompt", "looped", "truncated")
MOSTLY = 0.5  # the verdict notes degenerate answers when more than this share of the chosen one's are
_FLAG_TEXT = {
    "copied_context": "copy the retrieved context verbatim",
    "echoed_prompt": "echo the prompt's instructions",
    "looped": "restate themselves in a loop",
    "truncated": "are cut at max_tokens",
}
# metrics that compare the answer's text with the reference or the context: copying can raise them
COPY_REWARDED = ("bertscore", "answer_contains", "quip")


@dataclass
class Verdict:
    """The recommendation for one metric, and everything needed to explain it."""

    metric: str
    chosen: str | None
    chosen_on: str  # the split it was chosen on: "validation" (else "test"/"all", and ``note`` says why)
    reported_on: str  # the split its figure is on: "test" (else the same split as chosen_on)
    n_validation: int  # questions the choice was made on
    n_test: int  # questions the figure and the comparisons are on
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
    untested: list[str] = field(default_factory=list)  # no question in common with it: no test made
    confidence: float = 0.95
    # the chosen one's answers on ``reported_on`` with the flags: n, and how many copy / echo / either
    flagged: dict = field(default_factory=dict)
    # the pick against each reference baseline on ``reported_on`` (``evaluation.reference``)
    baselines: list = field(default_factory=list)
    # questions missing (failed or unanswered) of the chosen and tied ones: config_id -> [missing, questions]
    missing: dict = field(default_factory=dict)
    # configurations missing more than ``max_missing`` of their questions, left out: [config_id, missing, questions]
    left_out: list = field(default_factory=list)
    max_missing: float = 0.2
    metric_why: str | None = None  # why the verdict decides by ``metric`` (``default_metric``), when the data chose it
    # by a judge with human labels: the pick's and the tied set's PPI++ figures (``results.label_verdict``)
    ppi: dict = field(default_factory=dict)

    @property
    def held_out(self) -> bool:
        """Chosen on some questions and reported on others (the honest case)."""
        return self.chosen_on != self.reported_on

    @property
    def ci_label(self) -> str:
        return f"{100 * float(self.confidence):g}%"

    def to_dict(self) -> dict:
        """JSON-ready (``verdict.json``): every field but the comparisons table, NaN as None."""
        out = {}
        for k, v in self.__dict__.items():
            if k == "comparisons":
                continue
            out[k] = None if isinstance(v, float) and math.isnan(v) else v
        out["flagged_note"] = self.flagged_note()
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Verdict":
        known: dict[str, Any] = {
            k: (math.nan if v is None and k in _FLOATS else v) for k, v in data.items() if k in cls.__dataclass_fields__
        }
        return cls(**known)

    def flagged_note(self, label: str | None = None) -> str | None:
        """A sentence when most (> ``MOSTLY``) of the chosen configuration's answers echo the prompt or copy
        the context, else None (``label``: the metric's display name)."""
        f = self.flagged or {}
        n, either = f.get("n") or 0, f.get("either") or 0
        if not n or either / n <= MOSTLY:
            return None
        which = [k for k in FLAGS if f.get(k)]
        head = f"{either} of its {n} {self.reported_on} answers "
        head += (
            f"{_FLAG_TEXT[which[0]]} ({which[0]})"
            if len(which) == 1
            else (
                "copy the prompt or its context: "
                if set(which) <= {"copied_context", "echoed_prompt"}
                else "are degenerate: "
            )
            + ", ".join(f"{f[k]} {_FLAG_TEXT[k]} ({k})" for k in which)
        )
        rewards = self.metric.startswith(COPY_REWARDED) and any(f.get(k) for k in ("copied_context", "echoed_prompt"))
        return f"note: {head}" + (f"; its {label or self.metric} may reward copying" if rewards else "")

    def why(self, label: str | None = None) -> str:
        """One sentence saying why this configuration is recommended (``label``: the metric's display name)."""
        name = label or self.metric
        if self.chosen is None:
            return self.note or f"no configuration has values of {name}"
        chose = (
            f"it has the best mean {name} on the {self.n_validation} validation questions ({self.validation_mean:.3f})"
            if self.held_out
            else f"it has the best mean {name} ({self.note})"
        )
        where = f"the {self.n_test} {self.reported_on} questions"
        others = self.n_configs - 1
        if others == 0:
            return f"Recommended because {chose}; it is the only configuration with values of {name}."
        parts = []
        if self.tied:
            parts.append(f"{len(self.tied)} other configuration(s) are statistically tied with it on {where}")
        if self.worse:
            parts.append(
                f"every other configuration is significantly worse on {where}"
                if len(self.worse) == others
                else f"{len(self.worse)} are significantly worse"
            )
        if self.better:
            parts.append(
                f"{len(self.better)} configuration(s) are significantly better on {self.reported_on}, so "
                f"the choice did not carry over"
            )
        if self.untested:
            parts.append(f"{len(self.untested)} share no {self.reported_on} question with it and were not compared")
        return (
            f"Recommended because {chose}; "
            + "; ".join(parts)
            + f" (paired tests, Holm over {others}, alpha = {self.alpha})."
        )


def _mean_ci(values, n_boot: int, confidence: float, seed: int) -> tuple[float, float, float]:
    """``bootstrap_ci``, imported here: printing a stored verdict must not import numpy."""
    from ragsweep.evaluation.bootstrap import bootstrap_ci

    return bootstrap_ci(values, n_boot, confidence, seed)


def best_configuration(values: pd.DataFrame, metric: str) -> str:
    """The configuration with the best mean ``metric`` in ``values`` (config_id, qid, metric; ties go to the
    smaller id): the choice the verdict makes on the validation questions, and ``comparisons.csv`` too."""
    from ragsweep.evaluation.significance import question_matrix, rank_configs

    matrix = question_matrix(values[["config_id", "qid", metric]], metric)
    return rank_configs(matrix, metric not in LOWER_IS_BETTER)[0]


def _by_type(test: pd.DataFrame, config: str, metric: str, tests: TestOptions) -> list[dict]:
    rows: list[dict] = []
    r = test[test["config_id"] == config]
    if "qtype" not in r.columns:
        return rows
    for qtype, group in sorted(r.groupby(r["qtype"].fillna("(untyped)")), key=lambda kv: str(kv[0])):
        vals = group[metric].dropna().to_numpy(dtype=float)
        if vals.size:
            mean, lo, hi = _mean_ci(vals, tests.n_boot, tests.confidence, tests.seed)
            rows.append({"qtype": str(qtype), "n": int(vals.size), "mean": mean, "lo": lo, "hi": hi})
    return rows


def _flagged(records: pd.DataFrame, config: str, split: str) -> dict:
    """How many of ``config``'s answers on ``split`` (failed ones aside) copy the context, echo the prompt,
    or either, of the ``n`` that carry the flags; {} when none does (extractive answers, older records)."""
    import pandas as pd

    have = [f for f in FLAGS if f in records.columns]
    if not {"copied_context", "echoed_prompt"} <= set(have) or "split" not in records.columns:
        return {}
    r = records[(records["config_id"] == config) & (records["split"] == split)]
    if "error" in r.columns:
        r = r[r["error"].isna()]
    flags = r[have].apply(lambda c: pd.to_numeric(c.astype(float), errors="coerce"))
    flags = flags[flags[["copied_context", "echoed_prompt"]].notna().any(axis=1)]  # an LLM answer's flags
    if flags.empty:
        return {}
    hit = flags.eq(1)
    counts = {k: int(hit[k].sum()) for k in have if k in ("copied_context", "echoed_prompt") or hit[k].any()}
    return {"n": int(len(flags)), **counts, "either": int(hit.any(axis=1).sum())}


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
    tests: TestOptions = DEFAULT,
    chunks: dict[str, int] | None = None,
    max_missing: float = 0.2,
) -> Verdict:
    """The verdict from per-question records (config_id, qid, split, error, ``metric``, latency and
    token columns, qtype). Error rows and unmeasured values are left out, and so is a configuration missing
    more than ``max_missing`` of its questions (``coverage``); ties in a mean go to the smaller config_id, so
    the result does not depend on row order."""
    from ragsweep.baselines.rows import configurations, references
    from ragsweep.evaluation.coverage import missing_questions, too_incomplete
    from ragsweep.evaluation.significance import compare_to_best

    higher = metric not in LOWER_IS_BETTER
    refs = references(records)  # measured against the pick, never chosen
    records = configurations(records)
    missing = missing_questions(records)
    left_out = too_incomplete(missing, max_missing)
    records = records[~records["config_id"].isin(left_out)] if left_out else records
    ok = records[records["error"].isna()] if "error" in records.columns else records
    ok = ok[ok[metric].notna()] if metric in ok.columns else ok.iloc[0:0]
    ok = ok.sort_values(["config_id", "qid"], kind="stable")  # bootstrap CIs must not depend on row order
    val, test = ok[ok["split"] == VALIDATION], ok[ok["split"] == TEST]
    nan = math.nan
    empty = Verdict(metric, None, VALIDATION, TEST, 0, 0, nan, nan, nan, nan, nan, tests.alpha)
    empty.left_out = [[c, *missing[c]] for c in left_out]
    empty.max_missing = max_missing
    if ok.empty:
        empty.note = f"no configuration has values of {metric} (no reference answers, or nothing answered yet)"
        if left_out:
            empty.note = f"every configuration with values of {metric} is missing too many questions"
        return empty
    chosen_on, reported_on, note = VALIDATION, TEST, None
    if val.empty or test.empty:  # say so, do not pretend: the figure is then not held out
        present = {str(x) for x in ok["split"].unique()}
        if not val.empty:  # no test values: e.g. --limit left the test split empty
            test, reported_on = val, VALIDATION
            note = (
                f"no test values of {metric}: chosen and reported on the same validation questions, "
                f"so the figure is optimistic"
            )
        else:  # no validation values: a judge metric (judged on test only), a tiny --limit, or no split
            only = TEST if not test.empty else (sorted(present)[0] if present else "all")
            val = test = test if not test.empty else ok
            chosen_on = reported_on = only
            note = (
                f"no validation values of {metric}: chosen and reported on the same {only} questions, "
                f"so the figure is optimistic"
            )
    chosen = best_configuration(val, metric)
    test_vals = test.loc[test["config_id"] == chosen, metric].to_numpy(dtype=float)
    val_vals = val.loc[val["config_id"] == chosen, metric].to_numpy(dtype=float)
    n_boot, confidence, seed = tests.n_boot, tests.confidence, tests.seed
    t_mean, t_lo, t_hi = _mean_ci(test_vals, n_boot, confidence, seed) if test_vals.size else (nan, nan, nan)
    if f"{metric}_repeats" in test.columns and test_vals.size:  # a repeated judge: questions, then repeats
        from ragsweep.evaluation.bootstrap import nested_bootstrap_ci

        mine = test.loc[test["config_id"] == chosen, f"{metric}_repeats"]
        runs = [[v if v is not None else nan for v in r] for r in mine if hasattr(r, "__len__")]
        t_mean, t_lo, t_hi = nested_bootstrap_ci(runs, n_boot, confidence, seed)
    v_mean = float(val_vals.mean()) if val_vals.size else nan
    comp = (
        compare_to_best(
            test[["config_id", "qid", metric]],
            metric,
            best=chosen,
            higher_is_better=higher,
            tests=tests,
        )
        if test["config_id"].eq(chosen).any()
        else None
    )
    tied, better, worse, untested = [], [], [], []
    for r in [] if comp is None else comp.to_dict("records"):
        sign = 1.0 if higher else -1.0
        if r["n"] == 0 or r["p_value"] != r["p_value"]:  # no shared questions: nothing was tested
            untested.append(r["other"])
        elif not r["significant"]:
            tied.append(r["other"])
        elif sign * r["diff"] < 0:
            better.append(r["other"])
        else:
            worse.append(r["other"])
    seen = {chosen, *tied, *better, *worse, *untested}
    untested += sorted(c for c in ok["config_id"].unique() if c not in seen)  # no value on the reported split
    costs = config_costs(test, [chosen] + tied, chunks)
    missed, missed_metric = _missed(test, metric)
    method = ""
    if comp is not None and "test" in comp.columns and len(comp):
        method = ", ".join(sorted(set(map(str, comp["test"].dropna()))))
    held_out = chosen_on != reported_on
    return Verdict(
        metric=metric,
        chosen=chosen,
        chosen_on=chosen_on,
        reported_on=reported_on,
        n_validation=int(val["qid"].nunique()),
        n_test=int(test["qid"].nunique()),
        validation_mean=v_mean,
        test_mean=t_mean,
        test_lo=t_lo,
        test_hi=t_hi,
        optimism=(v_mean - t_mean) if held_out else nan,
        alpha=tests.alpha,
        tied=tied,
        better=better,
        worse=worse,
        n_configs=int(ok["config_id"].nunique()),
        comparisons=comp,
        costs=costs,
        fastest=argmin(costs, "latency_ms"),
        cheapest=argmin(costs, "tokens"),
        smallest=argmin(costs, "chunks"),
        by_type=_by_type(test, chosen, metric, tests),
        missed_by_all=missed,
        missed_metric=missed_metric,
        test_method=method,
        note=note,
        untested=untested,
        confidence=confidence,
        flagged=_flagged(records, chosen, reported_on),
        baselines=_references(refs, test, (chosen, reported_on), metric, tests),
        missing={c: list(missing[c]) for c in [chosen, *tied] if c in missing},
        left_out=[[c, *missing[c]] for c in left_out],
        max_missing=max_missing,
    )


def _references(refs, test, pick: tuple[str, str], metric: str, tests: TestOptions) -> list:
    """The pick (its id, and the split it is reported on) against the reference baselines, on those questions."""
    chosen, split = pick
    if refs.empty or metric not in refs.columns:
        return []
    from ragsweep.evaluation.reference import against_baselines

    ok = refs[refs["error"].isna()] if "error" in refs.columns else refs
    ok = ok[(ok["split"] == split) & ok[metric].notna()].sort_values(["config_id", "qid"], kind="stable")
    mine = test[test["config_id"] == chosen]
    return against_baselines(ok, mine, metric, n_boot=tests.n_boot, confidence=tests.confidence, seed=tests.seed)
