"""Dataset loaders: each format on a tiny hand-made input, plus the errors users will hit."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pdf_files import paged_pdf

from ragsweep.config import DatasetSpec, FolderCorpus, JsonlCorpus, TableQuestions
from ragsweep.datasets import load_dataset
from ragsweep.datasets.folder import html_to_text, load_folder_corpus
from ragsweep.datasets.jsonl_corpus import load_jsonl_corpus
from ragsweep.datasets.legalbench import resolve_file_path
from ragsweep.datasets.questions_table import load_table_questions
from ragsweep.datasets.types import Document, EvidenceSpan
from ragsweep.errors import RagsweepError

# shared/ sits beside the project root (as in CI)
LEGALBENCH = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "legalbench-rag"

DOCS = {
    "lease": "The tenant shall pay rent on the first day of each month.\nLate payment incurs a fee of 5%.",
    "privacy": "We collect your email address.  We never sell personal data\nto third parties.",
}


# --------------------------------------------------------------------------- helpers
def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def corpus_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "corpus.jsonl", [{"id": k, "text": v, "title": k.title()} for k, v in DOCS.items()])


def documents() -> list[Document]:
    return [Document(k, v) for k, v in DOCS.items()]


def spec(tmp_path: Path, questions: Path, fmt: str = "jsonl", **kw) -> DatasetSpec:
    return DatasetSpec(
        corpus={"format": "jsonl", "path": corpus_file(tmp_path)}, questions={"format": fmt, "path": questions}, **kw
    )


def test_folder_reads_txt_md_html_and_joins_pdf_pages(tmp_path: Path) -> None:
    root = tmp_path / "contracts"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_bytes("Clause 1. Payment is due in 30 days.\r\nCafé".encode())
    (root / "sub" / "b.md").write_text("# Title\n\nSome *markdown*.", encoding="utf-8")
    (root / "c.html").write_text(
        "<html><head><title>Policy</title><style>p {color: red}</style></head>"
        "<body><p>First &amp; foremost.</p><script>var x = 1;</script><div>Second   line</div></body></html>",
        encoding="utf-8",
    )
    (root / "d.pdf").write_bytes(paged_pdf(["Page one says hello.", "Page two says goodbye."]))
    (root / "empty.txt").write_text("  \n", encoding="utf-8")
    (root / "ignored.csv").write_text("x,y\n", encoding="utf-8")
    notes: list[str] = []

    docs = {d.doc_id: d for d in load_folder_corpus(FolderCorpus(format="folder", path=root), notes)}

    assert sorted(docs) == ["a.txt", "c.html", "d.pdf", "sub/b.md"]
    assert docs["a.txt"].text == "Clause 1. Payment is due in 30 days.\r\nCafé"  # verbatim: offsets stay valid
    assert docs["sub/b.md"].text.startswith("# Title")
    assert docs["c.html"].text == "Policy\nFirst & foremost.\nSecond line"
    assert docs["d.pdf"].text == "Page one says hello.\n\nPage two says goodbye."
    assert docs["d.pdf"].metadata["pages"] == 2
    assert notes == ["skipped 1 empty document(s) with no extractable text: empty.txt"]


def test_folder_not_recursive_and_extension_filter(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "top.TXT").write_text("upper-case extension", encoding="utf-8")
    (tmp_path / "sub" / "deep.txt").write_text("nested", encoding="utf-8")
    docs = load_folder_corpus(FolderCorpus(format="folder", path=tmp_path, extensions=["txt"], recursive=False))
    assert [d.doc_id for d in docs] == ["top.TXT"]


def test_folder_empty_names_folder_and_extensions(tmp_path: Path) -> None:
    (tmp_path / "notes.docx").write_bytes(b"x")
    with pytest.raises(RagsweepError) as err:
        load_folder_corpus(FolderCorpus(format="folder", path=tmp_path, extensions=[".txt", ".md"]))
    msg = str(err.value)
    assert str(tmp_path) in msg and ".md, .txt" in msg and "\n" not in msg


def test_folder_non_utf8_txt_is_decoded_and_named_in_the_notes(tmp_path: Path) -> None:
    """One Latin-1 file no longer stops the load (tests/test_folder_corpus.py covers the encodings)."""
    (tmp_path / "ok.txt").write_text("fine", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes("Caf\xe9 au lait".encode("latin-1"))
    notes: list[str] = []
    docs = {d.doc_id: d for d in load_folder_corpus(FolderCorpus(format="folder", path=tmp_path), notes)}
    assert docs["latin1.txt"].text == "Caf\xe9 au lait"
    assert notes == ["re-decoded 1 file(s) that are not UTF-8: latin1.txt as cp1252"]


def test_folder_corrupt_pdf_names_file(tmp_path: Path) -> None:
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf")
    with pytest.raises(RagsweepError) as err:
        load_folder_corpus(FolderCorpus(format="folder", path=tmp_path))
    assert "broken.pdf: could not be read" in str(err.value) and "\n" not in str(err.value)


def test_html_to_text_skips_scripts_and_decodes_entities() -> None:
    assert html_to_text("<p>a&lt;b</p><SCRIPT>x()</SCRIPT><li>c</li>") == "a<b\nc"


# --------------------------------------------------------------------------- jsonl corpus
def test_jsonl_corpus_metadata_and_int_ids(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"doc": 7, "body": "seven", "lang": "en"}, {"doc": "x", "body": "ex"}])
    docs = load_jsonl_corpus(JsonlCorpus(format="jsonl", path=path, id_field="doc", text_field="body"))
    assert [(d.doc_id, d.text, d.metadata) for d in docs] == [("7", "seven", {"lang": "en"}), ("x", "ex", {})]


def test_jsonl_corpus_bad_line_names_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "a", "text": "ok"}\n\n{"id": "b", "text": "broken}\n', encoding="utf-8")
    with pytest.raises(RagsweepError, match=r"c\.jsonl:line 3: not valid JSON"):
        load_jsonl_corpus(JsonlCorpus(format="jsonl", path=path))


def test_jsonl_corpus_missing_field_names_field_line_and_setting(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "ok"}, {"id": "b", "content": "x"}])
    with pytest.raises(RagsweepError) as err:
        load_jsonl_corpus(JsonlCorpus(format="jsonl", path=path))
    msg = str(err.value)
    assert "c.jsonl:line 2: missing field 'text'" in msg and "dataset.corpus.text_field" in msg


def test_jsonl_corpus_duplicate_id(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "1"}, {"id": "a", "text": "2"}])
    with pytest.raises(RagsweepError, match="line 2: document id 'a' already used on line 1"):
        load_jsonl_corpus(JsonlCorpus(format="jsonl", path=path))


# --------------------------------------------------------------------------- table questions
def test_jsonl_questions_spans_text_contexts_and_aliases(tmp_path: Path) -> None:
    start = DOCS["lease"].index("Late payment")
    rows = [
        {
            "id": "rent",
            "question": "When is rent due?",
            "reference_answer": "On the first day.",
            "type": "factoid",
            "evidence": [
                {
                    "doc_id": "lease",
                    "start": 0,
                    "end": 57,
                    "text": "The tenant shall pay rent on the first   day of each month.",
                }
            ],
        },
        {
            "question": "Is data sold?",
            "answer": "No.",
            "question_type": "yes_no",
            "evidence": [{"doc_id": "privacy", "text": "We never sell personal data to third parties."}],
        },
        {
            "question": "What if rent is late?",
            "reference_contexts": ["Late payment incurs a fee of 5%."],
            "source": "extra columns are ignored",
        },
    ]
    notes: list[str] = []
    qs, unlocated = load_table_questions(
        TableQuestions(format="jsonl", path=write_jsonl(tmp_path / "q.jsonl", rows)), documents(), notes
    )
    assert unlocated == [] and notes == ["evidence located by text: 2/2 (exact 1, normalised 1)"]
    assert [q.qid for q in qs] == ["rent", "q0002", "q0003"]
    assert qs[0].evidence == (EvidenceSpan("lease", 0, 57),) and qs[0].qtype == "factoid"
    privacy = DOCS["privacy"]
    (span,) = qs[1].evidence
    assert privacy[span.start : span.end] == "We never sell personal data\nto third parties."  # whitespace-tolerant
    assert (qs[1].reference_answer, qs[1].qtype) == ("No.", "yes_no")
    assert qs[2].evidence == (EvidenceSpan("lease", start, len(DOCS["lease"])),) and qs[2].reference_answer is None


def test_csv_questions_with_json_evidence_column(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "answer", "evidence", "reference_contexts"])
        w.writerow(
            [
                "c1",
                "When is rent due?",
                "First day, monthly.",
                json.dumps([{"doc_id": "lease", "start": 0, "end": 57}]),
                "",
            ]
        )
        w.writerow(["", "What is collected?", "", "", json.dumps(["We collect your email address."])])
    qs, unlocated = load_table_questions(TableQuestions(format="csv", path=path), documents())
    assert unlocated == []
    assert [(q.qid, q.reference_answer) for q in qs] == [("c1", "First day, monthly."), ("q0002", None)]
    assert qs[0].evidence == (EvidenceSpan("lease", 0, 57),)
    assert qs[1].evidence == (EvidenceSpan("privacy", 0, 30),)


def test_csv_bad_evidence_json_names_line(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text('question,evidence\n"Multi\nline?",[]\nWhy?,"[{""doc_id"": ""lease"""\n', encoding="utf-8")
    with pytest.raises(RagsweepError, match=r"q\.csv:line 4: field 'evidence' is not valid JSON"):
        load_table_questions(TableQuestions(format="csv", path=path), documents())


def test_unlocated_evidence_errors_by_default_with_hint(tmp_path: Path) -> None:
    rows = [
        {"id": "ok", "question": "Q1", "evidence": [{"doc_id": "lease", "text": "Late payment incurs a fee"}]},
        {"id": "bad", "question": "Q2", "evidence": [{"doc_id": "lease", "text": "Rent is waived in June."}]},
    ]
    path = write_jsonl(tmp_path / "q.jsonl", rows)
    with pytest.raises(RagsweepError) as err:
        load_dataset(spec(tmp_path, path))
    msg = str(err.value)
    assert msg.startswith(f"{path}: 1 evidence text(s) in 1 question(s) could not be found")
    assert "'bad'" in msg and "dataset.unlocated_evidence: drop_question" in msg and "\n" not in msg


def test_unlocated_evidence_drop_and_keep(tmp_path: Path) -> None:
    rows = [
        {"id": "ok", "question": "Q1", "evidence": [{"doc_id": "lease", "text": "Late payment incurs a fee"}]},
        {"id": "bad", "question": "Q2", "reference_contexts": ["Nowhere to be found.", "We collect your email"]},
    ]
    path = write_jsonl(tmp_path / "q.jsonl", rows)

    dropped = load_dataset(spec(tmp_path, path, unlocated_evidence="drop_question"))
    assert [q.qid for q in dropped.questions] == ["ok"]
    assert "evidence located by text: 2/3 (exact 2, normalised 0)" in dropped.notes
    assert any(n.startswith("dropped 1 question(s)") for n in dropped.notes)

    kept = load_dataset(spec(tmp_path, path, unlocated_evidence="keep_question"))
    assert [q.qid for q in kept.questions] == ["ok", "bad"]
    assert kept.questions[1].evidence == (EvidenceSpan("privacy", 0, 21),)
    assert any(n.startswith("kept 1 question(s)") for n in kept.notes)


def test_span_past_document_end(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "q.jsonl", [{"question": "Q", "evidence": [{"doc_id": "lease", "start": 5, "end": 5000}]}]
    )
    with pytest.raises(RagsweepError) as err:
        load_table_questions(TableQuestions(format="jsonl", path=path), documents())
    assert str(err.value).startswith(f"{path}:line 1: evidence[0] span [5, 5000) is past the end of 'lease'")


def test_evidence_text_contradicting_span(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "q.jsonl",
        [{"question": "Q", "evidence": [{"doc_id": "lease", "start": 0, "end": 10, "text": "Late payment"}]}],
    )
    with pytest.raises(RagsweepError) as err:
        load_table_questions(TableQuestions(format="jsonl", path=path), documents())
    msg = str(err.value)
    assert 'line 1: evidence[0].text "Late payment" does not match its span [0, 10)' in msg
    assert '"The tenant"' in msg and "fix start/end or the text" in msg


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"id": "x"}, "field 'question' is missing or empty"),
        (
            {"question": "Q", "evidence": [{"doc_id": "nope", "start": 0, "end": 1}]},
            "doc_id 'nope' is not in the corpus",
        ),
        ({"question": "Q", "evidnce": []}, "unknown field 'evidnce'; did you mean 'evidence'?"),
        ({"question": "Q", "answer": "a", "reference_answer": "b"}, "keep one"),
        ({"question": "Q", "evidence": [{"doc_id": "lease", "start": 3}]}, "only one of start/end"),
    ],
)
def test_question_record_errors(tmp_path: Path, row: dict, expected: str) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [{"question": "fine"}, row])
    with pytest.raises(RagsweepError) as err:
        load_table_questions(TableQuestions(format="jsonl", path=path), documents())
    assert "q.jsonl:line 2: " in str(err.value) and expected in str(err.value)


# --------------------------------------------------------------------------- labelled rag
def _write_labelled_rag(path: Path, examples: list[dict]) -> None:
    """Write with LlamaIndex's class when installed; llama-index-core 0.14 removed it, so mirror save_json."""
    try:
        from llama_index.core.llama_dataset import LabelledRagDataExample, LabelledRagDataset
    except ImportError:
        from ragsweep.datasets.labelled_rag import LabelledRagDataExample

        path.write_text(
            json.dumps({"examples": [LabelledRagDataExample(**e).model_dump(mode="json") for e in examples]}, indent=4),
            encoding="utf-8",
        )
    else:  # pragma: no cover
        LabelledRagDataset(examples=[LabelledRagDataExample(**e) for e in examples]).save_json(str(path))


def test_labelled_rag_dataset(tmp_path: Path) -> None:
    path = tmp_path / "rag_dataset.json"
    _write_labelled_rag(
        path,
        [
            {
                "query": "When is rent due?",
                "query_by": {"model_name": "gpt-4", "type": "ai"},
                "reference_contexts": ["The tenant shall pay rent on the first day of each month."],
                "reference_answer": "On the first day of the month.",
                "reference_answer_by": {"type": "human"},
            },
            {
                "query": "What is collected?",
                "reference_contexts": ["your email address.", "Not in the corpus."],
                "reference_answer": "Email addresses.",
            },
        ],
    )
    ds = load_dataset(spec(tmp_path, path, fmt="labelled_rag", unlocated_evidence="keep_question"))
    assert [(q.qid, q.reference_answer) for q in ds.questions] == [
        ("q0001", "On the first day of the month."),
        ("q0002", "Email addresses."),
    ]
    assert ds.questions[0].evidence == (EvidenceSpan("lease", 0, 57),)
    assert ds.questions[1].evidence == (EvidenceSpan("privacy", 11, 30),)
    assert "evidence located by text: 2/3 (exact 2, normalised 0)" in ds.notes


def test_labelled_rag_bad_example(tmp_path: Path) -> None:
    path = tmp_path / "rag.json"
    path.write_text(json.dumps({"examples": [{"query": "q", "reference_contexts": "not a list"}]}), encoding="utf-8")
    with pytest.raises(RagsweepError, match=r"rag\.json: examples\[0\]\.reference_contexts: "):
        load_dataset(spec(tmp_path, path, fmt="labelled_rag"))


# --------------------------------------------------------------------------- squad
def test_squad_v2(tmp_path: Path) -> None:
    ctx0 = "Normandy is a region in France. The Normans gave their name to it."
    ctx1 = "The Seine flows through Paris."
    data = {
        "version": "v2.0",
        "data": [
            {
                "title": "Normans",
                "paragraphs": [
                    {
                        "context": ctx0,
                        "qas": [
                            {
                                "id": "a1",
                                "question": "Where is Normandy?",
                                "is_impossible": False,
                                "answers": [
                                    {"text": "France", "answer_start": ctx0.index("France")},
                                    {"text": "in France", "answer_start": 21},
                                ],
                            },
                            {
                                "id": "a2",
                                "question": "Who ruled Normandy in 3000?",
                                "is_impossible": True,
                                "answers": [],
                                "plausible_answers": [{"text": "The Normans", "answer_start": 32}],
                            },
                        ],
                    },
                    {
                        "context": ctx1,
                        "qas": [
                            {
                                "id": "a3",
                                "question": "What flows through Paris?",
                                "answers": [{"text": "Seine", "answer_start": 0}],
                            }
                        ],
                    },
                    {"context": ctx0, "qas": []},
                ],
            }
        ],
    }
    path = tmp_path / "dev-v2.0.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    squad = {"format": "squad", "path": path}
    ds = load_dataset(DatasetSpec(corpus=squad, questions=squad))
    assert ds.name == "dev-v2.0"
    assert [d.doc_id for d in ds.documents] == ["Normans#0", "Normans#1"]
    q1, q2, q3 = ds.questions
    assert (q1.qid, q1.reference_answer, q1.qtype) == ("a1", "France", None)
    assert q1.evidence == (EvidenceSpan("Normans#0", ctx0.index("France"), ctx0.index("France") + 6),)
    assert (q2.qtype, q2.evidence, q2.reference_answer) == ("out_of_scope", (), None)
    assert q3.evidence == (EvidenceSpan("Normans#1", 4, 9),)  # answer_start off by 4: found by text
    assert any("1 SQuAD answer(s) located by text" in n for n in ds.notes)


# --------------------------------------------------------------------------- legalbench
@pytest.mark.skipif(not LEGALBENCH.is_dir(), reason="shared LegalBench-RAG data not present")
def test_legalbench_privacy_qa_real_data() -> None:
    ds = load_dataset(
        DatasetSpec(
            corpus={"format": "legalbench", "path": LEGALBENCH, "subset": "privacy_qa"},
            questions={"format": "legalbench", "path": LEGALBENCH, "subset": "privacy_qa"},
        )
    )
    assert ds.name == "legalbench-privacy_qa"
    assert (len(ds.documents), len(ds.questions)) == (7, 194)
    # 453 given spans, plus 3 places where one question's gold text recurs verbatim (all count as gold)
    assert sum(len(q.evidence) for q in ds.questions) == 456
    assert ds.evidence["copies"]["questions"] == 1 and ds.evidence["copies"]["spans_added"] == 3
    assert any("3 copy span(s) count as gold" in n for n in ds.notes)
    assert all(q.qtype is None and q.reference_answer for q in ds.questions)
    tick = [e for q in ds.questions for e in q.evidence if e.doc_id.startswith("privacy_qa/TickTick")]
    assert tick and {e.doc_id for e in tick} == {"privacy_qa/TickTick_ To Do List with Reminder, Day Planner.txt"}
    q = ds.questions[0]  # one gold snippet: the reference answer is its text
    (span,) = q.evidence
    assert ds.document(span.doc_id).text[span.start : span.end].strip() == q.reference_answer


@pytest.mark.skipif(not LEGALBENCH.is_dir(), reason="shared LegalBench-RAG data not present")
def test_legalbench_unknown_subset_lists_available() -> None:
    with pytest.raises(RagsweepError) as err:
        load_dataset(
            DatasetSpec(
                corpus={"format": "legalbench", "path": LEGALBENCH, "subset": "cuad"},
                questions={"format": "legalbench", "path": LEGALBENCH, "subset": "cuad"},
            )
        )
    assert "unknown LegalBench-RAG subset 'cuad'; available: contractnli, privacy_qa" in str(err.value)


def test_legalbench_path_quirk() -> None:
    ids = {"s/A_ b.txt", "s/x__y.txt"}
    assert resolve_file_path("s/A: b.txt", ids) == "s/A_ b.txt"
    assert resolve_file_path("s/x||y.txt", ids) == "s/x__y.txt"
    assert resolve_file_path("s/missing.txt", ids) is None


def test_legalbench_tiny_fixture(tmp_path: Path) -> None:
    (tmp_path / "corpus" / "mini").mkdir(parents=True)
    (tmp_path / "benchmarks").mkdir()
    text = "Section 1. Confidential information stays secret.\nSection 2. Term is two years."
    (tmp_path / "corpus" / "mini" / "NDA_ v1.txt").write_text(text, encoding="utf-8")
    s = text.index("Term")
    tests = {
        "tests": [
            {
                "query": "How long?",
                "snippets": [{"file_path": "mini/NDA: v1.txt", "span": [s - 11, len(text)], "answer": text[s - 11 :]}],
            }
        ]
    }
    (tmp_path / "benchmarks" / "mini.json").write_text(json.dumps(tests), encoding="utf-8")
    ds = load_dataset(
        DatasetSpec(
            corpus={"format": "legalbench", "path": tmp_path, "subset": "mini"},
            questions={"format": "legalbench", "path": tmp_path, "subset": "mini"},
        )
    )
    (q,) = ds.questions
    assert (q.qid, q.reference_answer) == ("mini-0001", "Section 2. Term is two years.")
    assert q.evidence == (EvidenceSpan("mini/NDA_ v1.txt", s - 11, len(text)),)


# --------------------------------------------------------------------------- demo / load
def test_dataset_name_and_notes_for_jsonl(tmp_path: Path) -> None:
    row = {"question": "Q", "evidence": [{"doc_id": "lease", "start": 0, "end": 3}]}
    path = write_jsonl(tmp_path / "q.jsonl", [row])
    ds = load_dataset(spec(tmp_path, path))
    assert ds.name == "corpus" and ds.notes == []  # no text evidence: no "located by text" note
    assert ds.documents[0].metadata == {"title": "Lease"}
    assert load_dataset(spec(tmp_path, path, name="mine")).name == "mine"


def test_folder_dataset_name(tmp_path: Path) -> None:
    root = tmp_path / "handbook"
    root.mkdir()
    (root / "a.txt").write_text("Holidays are 25 days per year.", encoding="utf-8")
    qpath = write_jsonl(
        tmp_path / "q.jsonl", [{"question": "Holidays?", "evidence": [{"doc_id": "a.txt", "text": "25 days"}]}]
    )
    ds = load_dataset(
        DatasetSpec(corpus={"format": "folder", "path": root}, questions={"format": "jsonl", "path": qpath})
    )
    assert ds.name == "handbook" and ds.questions[0].evidence == (EvidenceSpan("a.txt", 13, 20),)
    assert ds.notes == ["evidence located by text: 1/1 (exact 1, normalised 0)"]


def test_demo_dataset_loads() -> None:
    from ragsweep.datasets.demo import DEMO_CORPUS, DEMO_QUESTIONS

    if not (DEMO_CORPUS.is_file() and DEMO_QUESTIONS.is_file()):
        pytest.skip("demo data not written yet")
    ds = load_dataset(DatasetSpec())
    assert ds.name == "demo" and ds.documents and ds.questions
    assert all(e.end <= len(ds.document(e.doc_id).text) for q in ds.questions for e in q.evidence)


def test_import_does_not_load_llama_index() -> None:
    code = "import sys, ragsweep.datasets; print(any(m.startswith('llama_index') for m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")},
    )
    assert out.stdout.strip() == "False"
