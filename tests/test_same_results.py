"""bench/same_results.py, the check that a refactor changed no result: measured times are left out, any computed
value that differs is named."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))


def test_same_results_names_a_changed_value_and_ignores_measured_times(base_run, tmp_path):
    import json

    import pandas as pd
    from same_results import differences

    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        shutil.copytree(base_run.run_dir, d)
    records = pd.read_parquet(b / "records.parquet")
    records["retrieval_ms"] = records["retrieval_ms"] + 1.0
    records.to_parquet(b / "records.parquet")
    verdict = json.loads((b / "verdict.json").read_text())
    for c in verdict["costs"]:
        c["latency_ms"] = 1.0
    (b / "verdict.json").write_text(json.dumps(verdict))
    assert differences(a, b) == []

    records.loc[records.index[3], "answer"] = "something else"
    records.to_parquet(b / "records.parquet")
    verdict["chosen"] = "another"
    (b / "verdict.json").write_text(json.dumps(verdict))
    assert differences(a, b) == ["records.parquet: answer", "verdict.json: chosen"]


def test_same_results_refuses_a_directory_that_is_not_a_finished_run(tmp_path, monkeypatch, capsys):
    from same_results import main

    monkeypatch.setattr(sys, "argv", ["same_results.py", str(tmp_path), str(tmp_path)])
    assert main() == 2
    assert "not a finished run directory (no records.parquet, summary.csv, verdict.json)" in capsys.readouterr().err
