"""Human labels for a run's judged answers (``ragsweep judges import RUN LABELS``) and the judged metrics with
prediction-powered CIs (``evaluation.ppi``) that ``show`` and the report print next to the plain judge mean.

A label line names the answer (``config_id``, ``qid``) and gives ``grounded`` (true/false; checks the
faithfulness judge) and/or ``correctness`` (1-5; checks the correctness judge); other fields are ignored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ragsweep.errors import RagsweepError

if TYPE_CHECKING:
    import pandas as pd

    from ragsweep.results.run import RunData

LABELS_FILE = "human_labels.jsonl"
JUDGE_OF_LABEL = {"grounded": "faithfulness", "correctness": "correctness"}
COLUMNS = [
    "judge",
    "config_id",
    "n_judged",
    "n_labelled",
    "judge_mean",
    "judge_lo",
    "judge_hi",
    "human_mean",
    "human_lo",
    "human_hi",
    "ppi",
    "ppi_lo",
    "ppi_hi",
    "lam",
]
MIN_LABELLED = 2


def load_run_labels(path: Path) -> list[dict]:
    from ragsweep.datasets.jsonl_corpus import iter_jsonl
    from ragsweep.groundedness.labels import parse_grounded

    out = []
    for n, obj in iter_jsonl(Path(path)):
        where = f"{path}:line {n}"
        if not isinstance(obj.get("config_id"), str) or not isinstance(obj.get("qid"), (str, int)):
            raise RagsweepError(f"{where}: needs 'config_id' and 'qid' (which answer of the run the label is for)")
        corr = obj.get("correctness")
        if corr is not None and (isinstance(corr, bool) or not isinstance(corr, (int, float)) or not 1 <= corr <= 5):
            raise RagsweepError(f"{where}: field 'correctness' must be a number from 1 to 5, got {corr!r}")
        grounded = parse_grounded(obj.get("grounded"), where)
        if grounded is None and corr is None:
            raise RagsweepError(f"{where}: no label; give 'grounded' (true/false) and/or 'correctness' (1-5)")
        out.append(
            {
                "config_id": obj["config_id"],
                "qid": str(obj["qid"]),
                "grounded": grounded,
                "correctness": None if corr is None else float(corr),
            }
        )
    if not out:
        raise RagsweepError(f"{path}: no labels")
    return out


def import_labels(run: RunData, path: Path) -> Path:
    """Check every label names an answer the matching judge scored, then keep them as ``RUN/human_labels.jsonl``."""
    labels = load_run_labels(path)
    rec = run.records
    seen: set[tuple] = set()
    for i, lab in enumerate(labels, 1):
        key = (lab["config_id"], lab["qid"])
        if key in seen:
            raise RagsweepError(f"{path}: label {i}: ({key[0]}, {key[1]}) is labelled twice; keep one")
        seen.add(key)
        rows = rec[(rec["config_id"] == lab["config_id"]) & (rec["qid"].astype(str) == lab["qid"])]
        if rows.empty:
            raise RagsweepError(
                f"{path}: label {i}: the run has no answer of configuration {lab['config_id']!r} to "
                f"question {lab['qid']!r}; label answers the run has (records.parquet)"
            )
        for field, judge in JUDGE_OF_LABEL.items():
            if lab[field] is not None and (judge not in rows.columns or rows[judge].isna().all()):
                raise RagsweepError(
                    f"{path}: label {i}: {field} checks the {judge} judge, which did not score "
                    f"({lab['config_id']}, {lab['qid']}); label answers stage 2 judged"
                )
    out = Path(run.path) / LABELS_FILE
    out.write_text("".join(json.dumps(lab) + "\n" for lab in labels), encoding="utf-8")
    return out


def ppi_table(run: RunData) -> pd.DataFrame | None:
    """Per judge and configuration with at least ``MIN_LABELLED`` labels: the judge mean, the human mean and the
    PPI++ mean, each with a normal 95% CI; None when the run has no labels."""
    import numpy as np
    import pandas as pd

    from ragsweep.evaluation.ppi import ppi_mean

    path = Path(run.path) / LABELS_FILE
    if not path.is_file():
        return None
    labels = pd.DataFrame(load_run_labels(path))
    rows = []
    for field, judge in JUDGE_OF_LABEL.items():
        if judge not in run.records.columns or labels[field].isna().all():
            continue
        judged = run.records[run.records[judge].notna()][["config_id", "qid", judge]].copy()
        judged["qid"] = judged["qid"].astype(str)
        human = labels[labels[field].notna()].set_index(["config_id", "qid"])[field].astype(float)
        for cid, g in judged.groupby("config_id", sort=True):
            keys = list(zip([cid] * len(g), g["qid"]))
            mask = np.array([k in human.index for k in keys])
            if mask.sum() < MIN_LABELLED:
                continue
            f = g[judge].to_numpy(float)
            y = np.array([human[k] for k, m in zip(keys, mask) if m])
            r = ppi_mean(f[~mask], f[mask], y)
            se = f.std(ddof=1) / np.sqrt(len(f)) if len(f) > 1 else 0.0
            rows.append(
                {
                    "judge": judge,
                    "config_id": cid,
                    "n_judged": len(f),
                    "n_labelled": int(mask.sum()),
                    "judge_mean": f.mean(),
                    "judge_lo": f.mean() - 1.96 * se,
                    "judge_hi": f.mean() + 1.96 * se,
                    "human_mean": r.human_mean,
                    "human_lo": r.human_lo,
                    "human_hi": r.human_hi,
                    "ppi": r.estimate,
                    "ppi_lo": r.lo,
                    "ppi_hi": r.hi,
                    "lam": r.lam,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


TITLE = "Judged metrics with human labels: judge mean, human labels alone, and PPI++ (95% CIs)"
NOTE = (
    "PPI++ corrects the judge mean by the judge's error on the labelled answers (Angelopoulos et al. 2023); "
    "lambda: the weight it gives the judge (0: the judge adds nothing beyond the human labels)."
)


def lines(table: pd.DataFrame) -> list[tuple]:
    return [
        (
            r.judge,
            r.config_id,
            f"{r.n_labelled}/{r.n_judged}",
            f"{r.judge_mean:.3f} [{r.judge_lo:.3f}, {r.judge_hi:.3f}]",
            f"{r.human_mean:.3f} [{r.human_lo:.3f}, {r.human_hi:.3f}]",
            f"{r.ppi:.3f} [{r.ppi_lo:.3f}, {r.ppi_hi:.3f}]",
            f"{r.lam:.2f}",
        )
        for r in table.itertuples(index=False)
    ]


HEAD = ("judge", "configuration", "labelled/judged", "judge mean", "human labels", "PPI++", "lambda")


def print_ppi(table: pd.DataFrame, console) -> None:
    from rich.table import Table

    t = Table(title=TITLE, caption=NOTE)
    for col in HEAD:
        t.add_column(col, justify="left" if col in ("judge", "configuration") else "right")
    for row in lines(table):
        t.add_row(*row)
    console.print(t)


def ppi_html(run: RunData) -> str:
    import html

    table = ppi_table(run)
    if table is None or table.empty:
        return ""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEAD)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in lines(table))
    return (
        f'<h3>{html.escape(TITLE)}</h3><div class="scroll"><table id="ppi"><thead><tr>{head}</tr></thead>'
        f'<tbody>{body}</tbody></table></div><p class="muted">{html.escape(NOTE)}</p>'
    )
