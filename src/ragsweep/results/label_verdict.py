"""A verdict by a judge, with human labels of the run's judged answers (``ragsweep judges import``).

Two things the labels decide:

- **whether the judge may decide at all**: the judge's decisions against the humans' on the labelled answers
  (faithfulness: YES against ``grounded``; correctness: a score of at least ``stage2.correctness_threshold``
  against the human score at that threshold), Cohen's kappa with a bootstrap CI over the labelled answers. With
  ``MIN_TO_FLAG`` labels or more, a kappa whose CI reaches 0 flags the judge as no better than chance, and the
  verdict falls back to the stage-1 metric (``evaluation.default_metric.settle``).
- **the figures of the pick and the tied set**: their PPI++ means and intervals on the reported questions
  (``evaluation.ppi``): the judge mean corrected by the judge's error on the labelled answers, with a CI that
  carries both (Angelopoulos et al. 2023). The choice itself stays the judge's on validation; the figures are
  the humans'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ragsweep.evaluation.verdict import Verdict
    from ragsweep.results.run import RunData

MIN_TO_FLAG = 10  # labelled answers below which a wide kappa CI says too little to overrule the judge
# a judge's figure -> the human label that checks it, and how the label is read on the figure's scale
CHECKED_BY = {"faithfulness": "grounded", "correctness": "correctness", "correctness_pass": "correctness"}


def _labels(run: RunData):
    from pathlib import Path

    import pandas as pd

    from ragsweep.results.human_labels import LABELS_FILE, load_run_labels

    path = Path(run.path) / LABELS_FILE
    if not path.is_file():
        return None
    labels = pd.DataFrame(load_run_labels(path))
    labels["qid"] = labels["qid"].astype(str)
    return labels.set_index(["config_id", "qid"])


def _threshold(run: RunData) -> float:
    return float(((run.meta.get("spec") or {}).get("stage2") or {}).get("correctness_threshold") or 4.0)


def _kappa(y: np.ndarray, pred: np.ndarray) -> float:
    po = float(np.mean(y == pred))
    py, pp = float(np.mean(y)), float(np.mean(pred))
    pe = py * pp + (1 - py) * (1 - pp)
    return float("nan") if pe == 1 else (po - pe) / (1 - pe)


def label_flags(run: RunData, n_boot: int = 1000, seed: int = 0) -> dict[str, str]:
    """Per judge the labels show no better than chance, why (see the module)."""
    labels = _labels(run)
    if labels is None:
        return {}
    recs = run.records.assign(qid=run.records["qid"].astype(str)).set_index(["config_id", "qid"])
    threshold, out = _threshold(run), {}
    for judge, field in (("faithfulness", "grounded"), ("correctness", "correctness")):
        if judge not in recs.columns or field not in labels.columns:
            continue
        both = labels[[field]].rename(columns={field: "human"}).join(recs[[judge]], how="inner").dropna()
        if len(both) < MIN_TO_FLAG:
            continue
        human = both["human"].astype(float).to_numpy()
        mine = both[judge].astype(float).to_numpy()
        y, pred = (human >= threshold, mine >= threshold) if judge == "correctness" else (human > 0.5, mine > 0.5)
        k = _kappa(y, pred)
        rng = np.random.default_rng(seed)
        draws = [_kappa(y[i], pred[i]) for i in (rng.integers(0, len(y), len(y)) for _ in range(n_boot))]
        draws = [d for d in draws if d == d]
        lo = float(np.quantile(draws, 0.025)) if draws else float("nan")
        if k != k or not (lo > 0):
            out[judge] = (
                f"its agreement with {len(y)} human labels, Cohen's kappa "
                + ("undefined" if k != k else f"{k:.2f} (95% CI from {lo:.2f})")
                + ", reaches 0"
            )
    return out


def ppi_figures(run: RunData, verdict: Verdict) -> dict:
    """``config_id -> PPI++ figures`` for the pick and the tied set on the reported questions, where the verdict's
    metric is a judge's with human labels for it (at least 2 of a configuration's answers)."""
    from ragsweep.evaluation.ppi import ppi_mean

    field = CHECKED_BY.get(verdict.metric)
    labels = _labels(run)
    if verdict.chosen is None or field is None or labels is None or field not in labels.columns:
        return {}
    recs = run.records
    recs = recs[recs["split"].eq(verdict.reported_on) & recs[verdict.metric].notna()]
    human = labels[field].dropna().astype(float)
    if verdict.metric == "correctness_pass":
        human = (human >= _threshold(run)).astype(float)
    out = {}
    for cid in [verdict.chosen, *verdict.tied]:
        mine = recs[recs["config_id"] == cid]
        keys = list(zip(mine["config_id"], mine["qid"].astype(str)))
        mask = np.array([k in human.index for k in keys], dtype=bool)
        if mask.sum() < 2:
            continue
        f = mine[verdict.metric].to_numpy(float)
        y = np.array([human[k] for k, m in zip(keys, mask) if m])
        r = ppi_mean(f[~mask], f[mask], y, level=verdict.confidence)
        out[cid] = {
            "ppi": r.estimate,
            "lo": r.lo,
            "hi": r.hi,
            "n_labelled": r.n_labelled,
            "n_judged": len(f),
            "judge_mean": float(f.mean()),
            "human_mean": r.human_mean,
            "lam": r.lam,
        }
    return out
