"""``ragsweep validate`` on messy evidence, as a user runs it: tiers, every unlocated text in a file, copies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml
from test_cli import env
from test_evidence_location import CLEAN, PDF_PAGE

ROOT = Path(__file__).resolve().parents[1]


def _spec(tmp_path: Path, rows: list[dict], **dataset) -> Path:
    clause = "Each party shall keep the Confidential Information secret for five years after disclosure."
    (tmp_path / "corpus.jsonl").write_text(
        json.dumps({"id": "rules", "text": PDF_PAGE + clause})
        + "\n"
        + json.dumps({"id": "copy", "text": "Quoted: " + clause})
        + "\n",
        encoding="utf-8",
    )
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    spec = {
        "name": "messy",
        "output_dir": str(tmp_path / "runs"),
        "dataset": {
            "corpus": {"format": "jsonl", "path": "corpus.jsonl"},
            "questions": {"format": "jsonl", "path": "q.jsonl"},
            **dataset,
        },
        "splitters": [{"kind": "token", "chunk_size": 64, "chunk_overlap": 0}],
        "embeddings": [],
        "retrievers": [{"kind": "bm25"}],
        "top_k": [3],
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def _validate(spec: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ragsweep.cli", "validate", str(spec)],
        cwd=ROOT,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


ROWS = [
    {"id": "q1", "question": "Which footer?", "evidence": [{"doc_id": "rules", "text": CLEAN["footer"]}]},
    {"id": "q2", "question": "Fine?", "evidence": [{"text": CLEAN["ligature_nbsp"]}]},
    {
        "id": "q3",
        "question": "How long?",
        "evidence": [{"doc_id": "rules", "text": "Each party shall keep the Confidential Information"}],
    },
    {
        "id": "q4",
        "question": "Typo?",
        "evidence": [{"text": "The Licensee shall not disclose the Confidental Informations to any third party"}],
    },
]


def test_validate_reports_tiers_and_lists_every_unlocated_text(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path,
        ROWS
        + [
            {
                "id": "q5",
                "question": "Absent?",
                "evidence": [{"text": "Words that appear nowhere in this corpus at all."}],
            }
        ],
        unlocated_evidence="keep_question",
    )
    proc = _validate(spec)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "located exact 1, normalised 2, fuzzy off (dataset.fuzzy_evidence); unlocated 2" in out
    assert "unlocated: question 'q4'" in out and "closest in 'rules'" in out
    listed = tmp_path / "runs" / "messy" / "unlocated_evidence.jsonl"
    assert f"every unlocated text with its closest match: {listed}" in out
    rows = [json.loads(x) for x in listed.read_text(encoding="utf-8").splitlines()]
    assert [r["qid"] for r in rows] == ["q4", "q5"] and rows[0]["similarity"] > 0.85
    assert "copy span(s) count as gold too" in out and "rules -> copy" in out


def test_validate_error_names_the_file_and_fuzzy_locates(tmp_path: Path) -> None:
    spec = _spec(tmp_path, ROWS)
    proc = _validate(spec)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    line = proc.stderr.strip()
    assert "1 evidence text(s) in 1 question(s)" in line and "unlocated_evidence.jsonl" in line
    assert "dataset.fuzzy_evidence" in line
    proc = _validate(_spec(tmp_path, ROWS, fuzzy_evidence=0.85))
    assert proc.returncode == 0, proc.stderr
    assert "fuzzy 1 (similarity >= 0.85); unlocated 0" in proc.stdout
    assert not (tmp_path / "runs" / "messy" / "unlocated_evidence.jsonl").exists()


def test_bad_evidence_and_verdict_settings_are_one_line_errors(tmp_path: Path) -> None:
    from test_cli import one_error_line

    for dataset, expect in (
        ({"fuzzy_evidence": 1.5}, "fuzzy_evidence"),
        ({"duplicate_evidence": "every"}, "duplicate_evidence"),
    ):
        line = one_error_line(_validate(_spec(tmp_path, ROWS[:1], **dataset)))
        assert expect in line, line
    spec = _spec(tmp_path, ROWS[:1])
    data = yaml.safe_load(spec.read_text(encoding="utf-8"))
    data["scoring"] = {"metric": "mrr@5"}
    spec.write_text(yaml.safe_dump(data), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "ragsweep.cli", "run", str(spec), "--dry-run"],
        cwd=ROOT,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = one_error_line(proc)
    assert "scoring.metric: unknown metric 'mrr@5'" in line and "answer_contains" in line
