"""The command line, run as a user would: a subprocess, exit codes, one-line errors on stderr."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import inproc
import procwait
import pytest

from ragsweep.config import load_spec
from ragsweep.pipelines.outputs.manifest import FORMAT_VERSION

ROOT = Path(__file__).resolve().parents[1]
DEMO_SPEC = ROOT / "specs" / "demo.yaml"
COMMANDS = ("run", "validate", "show", "ask")
HEAVY = (
    "torch",
    "llama_index",
    "chromadb",
    "pandas",
    "transformers",
    "sentence_transformers",
    "langchain_core",
    "langchain_experimental",
    "bm25s",
)


def env() -> dict[str, str]:
    e = dict(os.environ)
    e.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", NO_COLOR="1", COLUMNS="120", PYTHONWARNINGS="ignore")
    return e


def cli(*args: str, cwd: Path = ROOT, timeout: int = 120) -> subprocess.CompletedProcess:
    return procwait.run([sys.executable, "-m", "ragsweep.cli", *map(str, args)], cwd=cwd, env=env(), stall=timeout)


def here(*args, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``cli`` in this process (``tests/inproc.py``: the same output and exit code without an interpreter's
    start-up); ``cli`` stays for what is about a fresh process (imports, library logging, ``--verbose``)."""
    return inproc.run([str(a) for a in args], cwd=cwd, env=env())


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    """Exit status 2, no traceback, exactly one non-empty stderr line starting with 'error: '."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), lines[0]
    return lines[0]


# --------------------------------------------------------------------------- help and imports
def test_help_lists_the_four_commands():
    proc = cli("--help")
    assert proc.returncode == 0, proc.stderr
    for name in COMMANDS:  # "| run       Run (or resume) ..." in the Commands panel
        assert re.search(rf"^[\W_]*{name}\s{{2,}}\S", proc.stdout, re.M), (name, proc.stdout)
    assert "Sweep chunking" in proc.stdout


def test_no_arguments_shows_help():
    proc = cli()
    assert proc.returncode == 2  # click's no_args_is_help exit status
    assert "Usage" in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert all(name in proc.stdout + proc.stderr for name in COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_command_help(command):
    proc = cli(command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "Usage" in proc.stdout


def test_help_imports_no_heavy_library():
    code = (
        "import sys, json\n"
        "import ragsweep.cli\n"
        "from typer.testing import CliRunner\n"
        "r = CliRunner().invoke(ragsweep.cli.app, ['--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        "r = CliRunner().invoke(ragsweep.cli.app, ['validate', '--help'])\n"
        "assert r.exit_code == 0, r.output\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == []


def test_validate_help_shows_the_schema_that_errors_point_to():
    proc = cli("validate", "--help")
    assert proc.returncode == 0
    for key in ("splitters", "retrievers", "embeddings", "top_k", "chunk_size"):
        assert key in proc.stdout, key


# --------------------------------------------------------------------------- validate
def test_validate_demo_spec_lists_50_configurations():
    proc = here("validate", "specs/demo.yaml")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0].startswith("specs/demo.yaml: valid. dataset demo: 28 documents, 107 questions")
    assert "50 configurations:" in out
    listed = [ln.strip() for ln in out[out.index("50 configurations:") + 1 :] if ln.startswith("  ")]
    assert len(listed) == 50 == len(set(listed))
    assert "sentence256-minilm-fusion-k5" in listed
    assert "token128-bm25-k3" in listed
    assert "semantic-minilm-vector-k3" in listed
    assert "token128-minilm-bm25-k3" not in listed  # bm25 carries no embedding
    assert "pattern-kg-k5" in listed and "pattern-minilm-hybrid-kg-k3" in listed


def test_validate_from_another_directory(tmp_path):
    proc = here("validate", DEMO_SPEC, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "50 configurations:" in proc.stdout


@pytest.mark.parametrize(
    "text, field",
    [
        ("splitters:\n  - {kind: token, chunk_size: -5}\nretrievers: [{kind: bm25}]\n", "splitters[0].chunk_size"),
        ("splitters:\n  - {kind: token, chunk_sise: 5}\nretrievers: [{kind: bm25}]\n", "splitters[0].chunk_sise"),
        ("splitters: [{kind: token}]\nretrievers: [{kind: bm25}]\ntop_k: [3, 3]\n", "top_k"),
        (
            "splitters: [{kind: token}]\nretrievers: [{kind: bm25}]\n"
            "dataset: {corpus: {format: jsonl, path: missing.jsonl}}\n",
            "dataset.corpus.path",
        ),
    ],
)
def test_validate_bad_spec_one_line_exit_2(tmp_path, text, field):
    p = tmp_path / "bad.yaml"
    p.write_text(text, encoding="utf-8")
    line = one_error_line(here("validate", p))
    assert line.startswith(f"error: {p}: {field}: "), line
    assert len(line) > len(f"error: {p}: {field}: ") + 5


def test_validate_malformed_yaml(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("splitters: [\n  - {kind: token\n", encoding="utf-8")
    line = one_error_line(here("validate", p))
    assert line.startswith(f"error: {p}: malformed YAML at line ")


def test_validate_missing_spec_file(tmp_path):
    p = tmp_path / "nothere.yaml"
    line = one_error_line(here("validate", p))
    assert line == f"error: {p}: spec file not found"


def _empty_corpus_spec(tmp_path: Path) -> Path:
    (tmp_path / "corpus.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "questions.jsonl").write_text(
        json.dumps({"id": "q1", "question": "What?", "reference_answer": "That."}) + "\n", encoding="utf-8"
    )
    p = tmp_path / "spec.yaml"
    p.write_text(
        "splitters: [{kind: token}]\nretrievers: [{kind: bm25}]\n"
        "dataset:\n  corpus: {format: jsonl, path: corpus.jsonl}\n"
        "  questions: {format: jsonl, path: questions.jsonl}\n",
        encoding="utf-8",
    )
    return p


def test_validate_empty_corpus_is_one_line(tmp_path):
    """A schema-valid spec whose dataset cannot be used also fails with one line (not a traceback)."""
    line = one_error_line(here("validate", _empty_corpus_spec(tmp_path)))
    assert "no documents" in line


def test_validate_empty_corpus_names_the_corpus_file(tmp_path):
    line = one_error_line(here("validate", _empty_corpus_spec(tmp_path)))
    assert str(tmp_path / "corpus.jsonl") in line
    assert "questions.jsonl" not in line


# --------------------------------------------------------------------------- show
def test_show_missing_directory(tmp_path):
    d = tmp_path / "no-such-run"
    line = one_error_line(here("show", d))
    assert line.startswith(f"error: {d}: no such run directory") and "ragsweep run SPEC" in line


def test_show_directory_without_manifest(tmp_path):
    line = one_error_line(here("show", tmp_path))
    assert line.startswith(f"error: {tmp_path}: not a ragsweep run directory (no manifest.json)")
    assert "ragsweep run" in line


def test_show_invalid_manifest(tmp_path):
    (tmp_path / "manifest.json").write_text("{not json", encoding="utf-8")
    line = one_error_line(here("show", tmp_path))
    assert f"{tmp_path / 'manifest.json'}" in line and "not valid JSON" in line


def test_show_unsupported_format_version(tmp_path):
    (tmp_path / "manifest.json").write_text(json.dumps({"format_version": 99}), encoding="utf-8")
    line = one_error_line(here("show", tmp_path))
    assert "run format 99" in line and "newer ragsweep" in line and "upgrade" in line


# --------------------------------------------------------------------------- ask
@pytest.fixture()
def fake_run(tmp_path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    manifest = {"format_version": FORMAT_VERSION, "spec": load_spec(DEMO_SPEC).model_dump(mode="json")}
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return run


def test_ask_unknown_config_id(fake_run):
    line = one_error_line(here("ask", fake_run, "token999-minilm-vector-k7", "What is a controller?"))
    assert "'token999-minilm-vector-k7'" in line
    assert str(fake_run) in line
    # it suggests real configuration ids
    assert "pattern-bm25-k3" in line


def test_ask_on_missing_run(tmp_path):
    line = one_error_line(here("ask", tmp_path / "gone", "token128-bm25-k3", "Q?"))
    assert "no such run directory" in line


def test_ask_with_invalid_spec_in_manifest(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    spec = load_spec(DEMO_SPEC).model_dump(mode="json")
    spec["top_k"] = [0]
    (run / "manifest.json").write_text(json.dumps({"format_version": FORMAT_VERSION, "spec": spec}), encoding="utf-8")
    line = one_error_line(here("ask", run, "token128-bm25-k3", "Q?"))
    assert line.startswith(f"error: {run}/manifest.json: top_k: ")


@pytest.mark.parametrize(
    "body, code, err",
    [("raise SystemExit(3)", 3, ""), ("pass", 0, ""), ("raise ValueError('boom')", 1, "ValueError: boom")],
)
def test_the_command_ends_with_its_exit_code_after_the_exit_handlers(body, code, err):
    """``process_exit.run_then_exit`` skips the C++ teardown (pyarrow's abort) but not Python's exit handlers,
    the command's output or its exit code."""
    script = (
        "import atexit, sys\n"
        "from ragsweep.process_exit import run_then_exit\n"
        "atexit.register(lambda: print('handler ran'))\n"
        "def command():\n"
        "    print('output', end='')\n"
        f"    {body}\n"
        "run_then_exit(command)\n"
        "print('not reached')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == code
    assert proc.stdout == "outputhandler ran\n"
    assert err in proc.stderr


# --------------------------------------------------------------------------- a PDF corpus: quiet logs, pages, gold
LIBRARY_LOG = re.compile(r"\b(DEBUG|INFO)\b")


@pytest.fixture(scope="module")
def pdf_run(tmp_path_factory) -> dict:
    """A finished BM25 run over a folder with a two-page PDF and a text file (one ``ragsweep run``)."""
    from pdf_files import paged_pdf

    d = tmp_path_factory.mktemp("pdf-run")
    (d / "corpus").mkdir()
    (d / "corpus" / "handbook.pdf").write_bytes(
        paged_pdf(
            [
                "Employees accrue vacation at two days per month of service. Unused vacation carries over to the next "
                "year up to ten days in total.",
                "Expense reports must be filed within thirty days of travel. Receipts are required for every expense "
                "above twenty five euros.",
            ]
        )
    )
    (d / "corpus" / "notes.txt").write_text(
        "The office opens at nine and closes at five on weekdays.\n", encoding="utf-8"
    )
    rows = [
        {
            "id": "q1",
            "question": "When must expense reports be filed?",
            "reference_answer": "Within thirty days of travel.",
            "evidence": [{"doc_id": "handbook.pdf", "text": "must be filed within thirty days of travel"}],
        },
        {
            "id": "q2",
            "question": "When does the office open?",
            "reference_answer": "At nine.",
            "evidence": [{"doc_id": "notes.txt", "text": "The office opens at nine"}],
        },
    ]
    (d / "qs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    spec = d / "spec.yaml"
    spec.write_text(
        "name: pages\ndataset:\n  corpus: {format: folder, path: corpus}\n"
        "  questions: {format: jsonl, path: qs.jsonl}\n"
        "splitters: [{kind: token, chunk_size: 32, chunk_overlap: 0}]\nretrievers: [{kind: bm25}]\n"
        "top_k: [2]\nscoring: {bootstrap_samples: 100, bertscore: {baseline_pairs: 20}}\n"
        f"output_dir: {d / 'runs'}\ncache_dir: {d / 'cache'}\n",
        encoding="utf-8",
    )
    proc = cli("run", spec, "--no-progress", timeout=300)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    return {"spec": spec, "run": d / "runs" / "pages", "run_proc": proc}


def test_no_library_log_line_reaches_stderr(pdf_run):
    """bm25s logs DEBUG lines and LlamaIndex's file readers install an INFO root handler; none of it shows."""
    procs = {
        "run": pdf_run["run_proc"],
        "validate": cli("validate", pdf_run["spec"]),
        "ask": cli("ask", pdf_run["run"], "token32-bm25-k2", "the of and"),
        "report": cli("report", pdf_run["run"], "--out", pdf_run["run"] / "r.html"),
    }
    for name, proc in procs.items():
        assert proc.returncode == 0, (name, proc.stderr)
        assert not LIBRARY_LOG.search(proc.stderr), (name, proc.stderr)


def test_verbose_shows_library_info_logs(pdf_run):
    proc = cli("--verbose", "ask", pdf_run["run"], "token32-bm25-k2", "the of and")  # no search terms left
    assert proc.returncode == 0, proc.stderr
    assert "INFO bm25s: The query is empty" in proc.stderr
    assert "DEBUG" not in proc.stderr


def test_ask_shows_pages_and_marks_gold_sources(pdf_run):
    proc = here("ask", pdf_run["run"], "token32-bm25-k2", "  when must EXPENSE reports be filed? ")
    assert proc.returncode == 0, proc.stderr
    assert "dataset question q1 (same text): 1 gold evidence span(s)" in proc.stdout
    rows = [[c.strip() for c in ln.split("│")[1:-1]] for ln in proc.stdout.splitlines() if re.match(r"│ \d", ln)]
    header = next(ln for ln in proc.stdout.splitlines() if "rank" in ln and "document" in ln)
    columns = [c.strip() for c in header.split("┃")[1:-1]]
    assert columns[:5] == ["rank", "score", "document", "page", "span"] and "gold" in columns
    by_page = {(r[2], r[3]): r[columns.index("gold")] for r in rows}
    assert by_page[("handbook.pdf", "2")] == "✓"  # the chunk holding the evidence, on page 2


def test_ask_qid_names_the_question_whose_gold_is_marked(pdf_run):
    proc = here("ask", pdf_run["run"], "token32-bm25-k2", "office hours?", "--qid", "q2")
    assert proc.returncode == 0, proc.stderr
    assert "dataset question q2 (named by --qid)" in proc.stdout
    marked = [ln for ln in proc.stdout.splitlines() if "✓" in ln and "│" in ln]
    assert len(marked) == 1 and "notes.txt" in marked[0]


def test_ask_unknown_qid_is_one_line(pdf_run):
    line = one_error_line(here("ask", pdf_run["run"], "token32-bm25-k2", "Q?", "--qid", "q9"))
    assert "--qid: 'q9' is not a question" in line and "q1" in line
