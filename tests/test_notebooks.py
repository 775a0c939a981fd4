"""The analysis notebooks run against a freshly produced run, so they cannot rot.

Each notebook is executed top to bottom by a real Jupyter kernel (``nbclient``), in ``notebooks/``,
with the run directory passed the way a user would: the ``RAGSWEEP_RUN`` environment variable
(``RAGSWEEP_PLOTS`` for the figure files). The run is ``report_run`` (conftest.py): all 107 demo
questions of the seven question types, five retrievers, LLM answers and stage-2 judges. A cell
appended by the test (never committed) pickles the notebook's result variables, which are then
checked against the run. The kernel is this interpreter (a kernelspec written for the test), so the
notebooks see the same ``ragsweep`` and pandas as the tests.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import sys
import time
from pathlib import Path

import procwait
import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
METRIC = "bertscore_f1_rescaled"
PNG = b"\x89PNG\r\n\x1a\n"

# The variables each notebook must leave behind for its checks.
RESULTS = {
    "01_overview.ipynb": ["ranked"],
    "02_error_analysis.ipynb": ["by_type", "by_type_retriever", "hardest", "verdicts", "N_HARDEST"],
    "03_plots.ipynb": ["written", "PLOTS"],
    "04_from_a_folder_to_a_pipeline.ipynb": [
        "documents",
        "verdict",
        "chosen",
        "QUESTION",
        "engine_kind",
        "engine_answer",
        "answer",
        "sources",
        "run_sources",
        "EXPORT",
    ],
}

DUMP_CELL = """
import pickle as _pickle
import sys as _sys
from pathlib import Path as _Path

_Path({out!r}).write_bytes(_pickle.dumps(
    {{"__executable__": _sys.executable, "__prefix__": _sys.prefix, **{{_n: globals()[_n] for _n in {names!r}}}}}))
"""


@pytest.fixture(scope="session")
def kernel_dir(tmp_path_factory) -> Path:
    """A ``python3`` kernelspec that starts this interpreter, first on JUPYTER_PATH: the notebooks
    run in this environment whatever kernels the user's Jupyter directories hold."""
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (ragsweep tests)",
                "language": "python",
            }
        ),
        encoding="utf-8",
    )
    return root


def execute(path: Path, run_dir: Path | str, out: Path, monkeypatch, kernel_dir: Path, **env: str):
    """Run the notebook in a kernel (cwd notebooks/); returns (executed notebook, its results, seconds)."""
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("JUPYTER_PATH", str(kernel_dir))
    monkeypatch.setenv("RAGSWEEP_RUN", str(run_dir))
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    nb = nbformat.read(path, as_version=4)
    dump = out / f"{path.stem}.results.pkl"
    nb.cells.append(nbformat.v4.new_code_cell(DUMP_CELL.format(out=str(dump), names=RESULTS[path.name])))
    client = NotebookClient(
        nb,
        timeout=procwait.scaled(600),
        startup_timeout=procwait.scaled(120),
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
    )
    t0 = time.monotonic()
    client.execute()  # raises CellExecutionError (with the cell and its traceback) if a cell fails
    seconds = time.monotonic() - t0
    results = pickle.loads(dump.read_bytes())
    assert Path(results["__prefix__"]).resolve() == Path(sys.prefix).resolve(), (
        f"the kernel ran {results['__executable__']}, not this environment's {sys.executable}"
    )
    return nb, results, seconds


def images(nb) -> int:
    """How many outputs of the executed notebook are PNG images."""
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def test_every_notebook_is_checked():
    assert {p.name for p in NOTEBOOKS} == set(RESULTS), "each notebook needs its checks in RESULTS"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path):
    """No outputs or execution counts in git: they would go stale and bloat diffs."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{path.name} has no code cells"
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert not dirty, f"{path.name}: cells {dirty} have outputs or execution counts; clear them before committing"
    assert any(c.cell_type == "markdown" for c in nb.cells)


def test_overview(report_run, tmp_path, monkeypatch, kernel_dir):
    _, res, seconds = execute(NOTEBOOK_DIR / "01_overview.ipynb", report_run.run_dir, tmp_path, monkeypatch, kernel_dir)
    ranked = res["ranked"]
    by_split = report_run.extra["summary_by_split"]
    test = by_split[by_split["split"] == "test"]
    assert sorted(ranked["config_id"]) == sorted(test["config_id"]) and len(ranked) == 5
    scores = ranked[METRIC].dropna()
    assert len(scores) == len(ranked) and scores.is_monotonic_decreasing
    assert ranked.loc[0, "config_id"] == test.loc[test[METRIC].idxmax(), "config_id"]
    assert ranked["overlaps_best"].dtype == bool and ranked["overlaps_best"].iloc[0]
    expected = ranked[f"{METRIC}_hi"] >= ranked.loc[0, f"{METRIC}_lo"]
    assert ranked["overlaps_best"].tolist() == expected.tolist()
    assert (ranked[f"{METRIC}_lo"] <= ranked[METRIC]).all() and (ranked[METRIC] <= ranked[f"{METRIC}_hi"]).all()
    # a stage-2 run: the judge columns and which configurations stage 2 re-scored
    assert {"correctness", "correctness_pass", "stage2_selected"} <= set(ranked.columns)
    selected = set(report_run.manifest["stage2"]["selected"])
    assert set(ranked.loc[ranked["stage2_selected"].astype(bool), "config_id"]) == selected
    assert ranked.loc[ranked["config_id"].isin(selected), "correctness"].notna().all()
    assert seconds < procwait.scaled(120), f"01_overview took {seconds:.0f} s"


def test_overview_finds_a_run_given_relative_to_the_repository(report_run, tmp_path, monkeypatch, kernel_dir):
    """RAGSWEEP_RUN=runs/NAME as typed in the repository root still works when the kernel runs in notebooks/."""
    rel = os.path.relpath(report_run.run_dir, NOTEBOOK_DIR.parent)
    assert not (NOTEBOOK_DIR / rel).exists()  # only the repository root resolves it
    _, res, _ = execute(NOTEBOOK_DIR / "01_overview.ipynb", rel, tmp_path, monkeypatch, kernel_dir)
    assert len(res["ranked"]) == 5


def test_error_analysis(report_run, tmp_path, monkeypatch, kernel_dir):
    _, res, seconds = execute(
        NOTEBOOK_DIR / "02_error_analysis.ipynb", report_run.run_dir, tmp_path, monkeypatch, kernel_dir
    )
    records = report_run.records
    by_type = res["by_type"]
    by_type = by_type.set_index("qtype") if "qtype" in by_type.columns else by_type
    types = set(records["qtype"])
    assert types == {
        "simple",
        "paraphrase",
        "disambiguation",
        "complex",
        "multi_hop",
        "comparative",
        "out_of_scope",
        "negative-irrelevant",
        "negative-jailbreak",
        "negative-unsafe",
    }
    assert set(by_type.index) == types and len(by_type) == len(types)
    assert by_type["n_questions"].sum() == records["qid"].nunique() == 107
    assert by_type["n_rows"].sum() == len(records)
    for qtype, n in records.groupby("qtype")["qid"].nunique().items():
        assert by_type.loc[qtype, "n_questions"] == n
    ok = records[records["error"].isna()]
    means = ok.groupby("qtype")[METRIC].mean()
    negative = {"negative-irrelevant", "negative-jailbreak", "negative-unsafe"}  # no reference answer: no BERTScore
    for qtype in types - negative:
        assert math.isclose(by_type.loc[qtype, METRIC], means[qtype], rel_tol=1e-9)
    assert by_type.loc[sorted(negative), METRIC].isna().all() and means[sorted(negative)].isna().all()
    assert by_type["n_failed"].sum() == records["error"].notna().sum()
    assert by_type["n_empty_answers"].sum() == int(ok["answer_empty"].fillna(False).astype(bool).sum())
    # out-of-scope questions have no gold evidence: their retrieval metrics are not applicable
    retrieval = ["hit", "ndcg", "retrieval_miss_rate"]
    assert by_type.loc[["out_of_scope", *sorted(negative)], retrieval].isna().all().all()
    answerable = by_type.drop(index=["out_of_scope", *sorted(negative)])
    assert answerable[retrieval].notna().all().all()
    assert ((answerable["retrieval_miss_rate"] - (1 - answerable["hit"])).abs() < 1e-9).all()  # hit is 0/1
    assert res["by_type_retriever"].loc["out_of_scope", "hit"].isna().all()

    hardest = res["hardest"]
    assert len(hardest) == min(res["N_HARDEST"], records["qid"].nunique()) == 10
    assert hardest["qid"].is_unique and hardest[METRIC].is_monotonic_increasing
    per_q = ok.groupby("qid")[METRIC].mean().sort_values()
    assert math.isclose(hardest[METRIC].iloc[0], per_q.iloc[0], rel_tol=1e-9)
    assert (hardest["best_score"] >= hardest["worst_score"]).all()
    configs = set(records["config_id"])
    assert set(hardest["best_config"]) <= configs and set(hardest["worst_config"]) <= configs
    refs = records.drop_duplicates("qid").set_index("qid")["reference_answer"]
    assert hardest["reference_answer"].tolist() == refs[hardest["qid"]].tolist()

    verdicts = res["verdicts"]  # stage 2 judged the selected configurations on the test questions
    # a row counts when any judge measured it: negative questions have no reference, so no correctness
    judged = records[records[["correctness", "faithfulness", "relevancy"]].notna().any(axis=1)]
    assert set(verdicts.index) == set(judged["qtype"])
    assert verdicts["n_judged"].sum() == len(judged) > 0
    assert verdicts["correctness"].dropna().between(1, 5).all()
    assert verdicts["correctness_pass"].dropna().between(0, 1).all()
    assert set(verdicts.index[verdicts["correctness"].isna()]) <= negative
    assert seconds < procwait.scaled(120), f"02_error_analysis took {seconds:.0f} s"


def test_plots(report_run, tmp_path, monkeypatch, kernel_dir):
    plots = tmp_path / "plots"
    nb, res, seconds = execute(
        NOTEBOOK_DIR / "03_plots.ipynb",
        report_run.run_dir,
        tmp_path,
        monkeypatch,
        kernel_dir,
        RAGSWEEP_PLOTS=str(plots),
    )
    written = [Path(p) for p in res["written"]]
    assert Path(res["PLOTS"]) == plots
    assert written and all(p.parent == plots for p in written)
    assert sorted(written) == sorted(plots.iterdir()), "every file in the plots folder is listed in `written`"
    pngs = [p for p in written if p.suffix == ".png"]
    pdfs = [p for p in written if p.suffix == ".pdf"]
    assert len(pdfs) == 1 and len(pngs) == len(written) - 1
    for p in pngs:
        assert p.stat().st_size > 1000 and p.read_bytes()[:8] == PNG, p
    assert pdfs[0].read_bytes()[:5] == b"%PDF-" and pdfs[0].stat().st_size > 1000
    # the report's figures (judge scores and LLM spending: this run has judges and LLM calls) and the custom one
    names = {p.stem for p in pngs}
    assert {
        "bertscore_violins",
        "retrieval_metrics",
        "judge_scores",
        "heatmap",
        "significance",
        "llm_spending",
    } <= names
    assert any(n.startswith("custom") for n in names)
    assert images(nb) >= 2, "a report figure and the custom figure are shown inline"
    assert seconds < procwait.scaled(120), f"03_plots took {seconds:.0f} s"


def test_from_a_folder_of_documents_to_an_exported_pipeline(base_run, shared_cache, tmp_path, monkeypatch, kernel_dir):
    """The demo corpus written as a folder of text files and its questions with quoted evidence; a sweep from
    Python; the verdict; the pick exported, loaded back and asked a test question: the run's sources and answer.
    The cache is seeded with the reference sweep's vectors and BERTScores (the same chunk texts)."""
    from conftest import seed_cache

    from ragsweep.results import load_run

    work = tmp_path / "work"
    cache = seed_cache(tmp_path / "cache", shared_cache)
    nb, res, seconds = execute(
        NOTEBOOK_DIR / "04_from_a_folder_to_a_pipeline.ipynb",
        work / "run",
        tmp_path,
        monkeypatch,
        kernel_dir,
        RAGSWEEP_WORK=str(work),
        RAGSWEEP_CACHE=str(cache),
        RAGSWEEP_LIMIT="12",  # the reference sweep's questions: their vectors and BERTScores are in the seeded cache
    )
    assert len(res["documents"]) == 28 and all(d.endswith(".txt") for d in res["documents"])
    run = load_run(work / "run")
    assert run.status == "complete" and len(run.records) == 3 * 12 and run.records["error"].isna().all()
    assert res["verdict"] == json.loads((work / "run" / "verdict.json").read_text(encoding="utf-8"))
    assert res["chosen"] == res["verdict"]["chosen"] and res["chosen"] in set(run.records["config_id"])
    assert res["verdict"]["chosen_on"] == "validation" and res["verdict"]["reported_on"] == "test"
    assert Path(res["EXPORT"]) == work / "pipeline" and (work / "pipeline" / "pipeline.json").is_file()
    assert res["engine_kind"] == "RetrieverQueryEngine"
    row = run.records.query("config_id == @res['chosen'] and question == @res['QUESTION']").iloc[0]
    assert row["split"] == "test" and row["n_gold_spans"] > 0
    assert len(res["sources"]) > 0 and res["sources"].equals(res["run_sources"])
    assert res["answer"]["answer"] == row["answer"] == res["engine_answer"]
    assert "identical" in "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert seconds < procwait.scaled(180), f"04_from_a_folder_to_a_pipeline took {seconds:.0f} s"
