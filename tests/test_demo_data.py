"""The shipped demo files (package data) are exactly what their sources in scripts/demo-data/ build: the YAML
documents and questions, checked quote by quote by build_demo.py, and the groundedness set."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ROOT / "scripts" / "demo-data"
DEMO = ROOT / "src" / "ragsweep" / "datasets" / "demo"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(f"demo_data_{name}", SOURCES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lines(rows: list[dict]) -> list[str]:
    return [json.dumps(r, ensure_ascii=False) for r in rows]


def test_shipped_corpus_and_questions_are_built_from_the_yaml_sources():
    build = _script("build_demo")
    docs = build.build_documents()
    build.check_documents(docs)
    questions, _ = build.build_questions(docs)
    assert _lines(docs) == (DEMO / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    assert _lines(questions) == (DEMO / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    assert {d["id"] for d in docs if d["id"] in build.PDF_LIKE} == build.PDF_LIKE and len(build.PDF_LIKE) == 2


def test_shipped_groundedness_set_is_built_from_its_source():
    records = _script("demo_groundedness").build(DEMO / "corpus.jsonl", DEMO / "questions.jsonl")
    assert _lines(records) == (DEMO / "groundedness.jsonl").read_text(encoding="utf-8").splitlines()


def test_a_malformed_source_is_one_line_naming_the_file(tmp_path):
    import shutil
    import subprocess
    import sys

    for f in ("build_demo.py", "documents.yaml"):
        shutil.copy(SOURCES / f, tmp_path / f)
    (tmp_path / "questions.yaml").write_text("- type: [oops\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, str(tmp_path / "build_demo.py")], capture_output=True, text=True)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"{tmp_path / 'questions.yaml'}: while parsing")
