"""Folder corpora as users have them: Word files, PDF page numbers, text in other encodings, files
that are not text, and questions files with several bad lines reported at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pdf_files import paged_pdf

from ragsweep.config import FolderCorpus, TableQuestions
from ragsweep.datasets.folder import load_folder_corpus
from ragsweep.datasets.pages import page_label, page_range
from ragsweep.datasets.questions_table import load_table_questions
from ragsweep.datasets.types import Document
from ragsweep.errors import RagsweepError

PNG_BYTES = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde"


def load(folder: Path, **kw) -> tuple[dict[str, Document], list[str]]:
    notes: list[str] = []
    docs = load_folder_corpus(FolderCorpus(format="folder", path=folder, **kw), notes)
    return {d.doc_id: d for d in docs}, notes


# --------------------------------------------------------------------------- Word
def test_docx_paragraphs_and_table_rows_in_document_order(tmp_path: Path) -> None:
    import docx

    d = docx.Document()
    d.add_paragraph("Lease agreement.")
    table = d.add_table(rows=2, cols=3)
    for r, row in enumerate([["Item", "Due", "Amount"], ["Rent", "1st\nof month", "900"]]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    d.add_paragraph("Signed by both parties.")
    d.save(tmp_path / "lease.docx")

    docs, notes = load(tmp_path)  # .docx is among the default extensions

    assert docs["lease.docx"].text == (
        "Lease agreement.\nItem\tDue\tAmount\nRent\t1st of month\t900\nSigned by both parties."
    )
    assert docs["lease.docx"].metadata["file_type"] == ".docx" and notes == []


# --------------------------------------------------------------------------- PDF pages
def test_pdf_records_where_each_page_starts_and_its_label(tmp_path: Path) -> None:
    (tmp_path / "a.pdf").write_bytes(paged_pdf(["First page text.", "Second page text.", "Third."]))
    (tmp_path / "roman.pdf").write_bytes(paged_pdf(["Preface here.", "Contents here."], roman_labels=True))
    (tmp_path / "plain.txt").write_text("No pages here.", encoding="utf-8")

    docs, _ = load(tmp_path)

    a = docs["a.pdf"]
    assert a.text == "First page text.\n\nSecond page text.\n\nThird."
    assert a.metadata["page_starts"] == [0, 18, 37] and a.metadata["page_labels"] == ["1", "2", "3"]
    for start, page in zip(a.metadata["page_starts"], ["First", "Second", "Third"]):
        assert a.text[start:].startswith(page)
    assert docs["roman.pdf"].metadata["page_labels"] == ["i", "ii"]
    assert "page_starts" not in docs["plain.txt"].metadata


def test_page_of_a_span_at_page_boundaries() -> None:
    meta = {"page_starts": [0, 18, 37], "page_labels": ["1", "2", "3"]}
    assert page_label(meta, 0, 16) == "1"
    assert page_label(meta, 0, 18) == "1"  # the blank line joining pages belongs to the earlier page
    assert page_label(meta, 16, 19) == "1-2"
    assert page_label(meta, 18, 19) == "2"
    assert page_label(meta, 10, 40) == "1-3"
    assert page_label(meta, 37, 43) == "3"
    assert page_range([0, 18, 37], 17, 18) == (0, 0)
    assert page_label({"page_starts": [0, 5], "page_labels": ["iv", "v"]}, 2, 8) == "iv-v"
    assert page_label({}, 0, 5) is None


def test_chunks_of_a_pdf_carry_the_pages_they_span(tmp_path: Path) -> None:
    """Chunk offsets from a real splitter map to the page whose text the chunk holds."""
    from llama_index.core.node_parser import SentenceSplitter

    from ragsweep.datasets.pages import page_field
    from ragsweep.datasets.types import Dataset
    from ragsweep.splitters.build import split_corpus

    pages = [f"Page {n} sentence one. Page {n} sentence two." for n in ("one", "two", "three")]
    (tmp_path / "p.pdf").write_bytes(paged_pdf(pages))
    (tmp_path / "t.txt").write_text("Plain text document.", encoding="utf-8")
    docs, _ = load(tmp_path)
    dataset = Dataset("d", list(docs.values()), [])
    parser = SentenceSplitter(chunk_size=12, chunk_overlap=0, include_metadata=False)

    chunks = split_corpus(dataset.documents, parser, "s")

    pdf_chunks = [c for c in chunks if c.doc_id == "p.pdf"]
    assert len(pdf_chunks) >= 3
    for c in pdf_chunks:
        words = {"one": "1", "two": "2", "three": "3"}
        expected = sorted({words[w] for w in words if f"Page {w} " in c.text})
        label = page_field(dataset, c.doc_id, c.start, c.end)["page"]
        assert label == (expected[0] if len(expected) == 1 else f"{expected[0]}-{expected[-1]}"), (c.text, label)
    spanning = page_field(dataset, "p.pdf", 0, len(docs["p.pdf"].text))
    assert spanning == {"page": "1-3"}
    assert page_field(dataset, "t.txt", 0, 5) == {}  # no page key at all for other documents


# --------------------------------------------------------------------------- encodings
def test_latin1_and_cp1252_files_are_decoded_and_every_one_is_named(tmp_path: Path) -> None:
    (tmp_path / "utf8.txt").write_bytes("\ufeffCafé in UTF-8 with a BOM".encode())
    (tmp_path / "latin1.txt").write_bytes("Na\xefve r\xe9sum\xe9 of the fa\xe7ade.".encode("latin-1"))
    quoted = "\u201cQuoted\u201d terms \u2014 the tenant\u2019s duties."
    (tmp_path / "quotes.txt").write_bytes(quoted.encode("cp1252"))
    (tmp_path / "page.html").write_bytes("<p>Stra\xdfe &amp; Caf\xe9</p>".encode("cp1252"))

    docs, notes = load(tmp_path)

    assert docs["utf8.txt"].text == "\ufeffCafé in UTF-8 with a BOM"  # UTF-8 exactly as stored, as before
    assert docs["latin1.txt"].text == "Na\xefve r\xe9sum\xe9 of the fa\xe7ade."
    assert docs["quotes.txt"].text == quoted
    assert docs["page.html"].text == "Stra\xdfe & Caf\xe9"
    assert notes == [
        "re-decoded 3 file(s) that are not UTF-8: latin1.txt as cp1252, page.html as cp1252, quotes.txt as cp1252"
    ]


def test_binary_file_named_txt_is_an_error_naming_the_file_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text("fine", encoding="utf-8")
    (tmp_path / "image.txt").write_bytes(PNG_BYTES)
    with pytest.raises(RagsweepError) as err:
        load(tmp_path)
    msg = str(err.value)
    assert msg.startswith(f"{tmp_path / 'image.txt'}: not a text file (NUL bytes")
    assert "on_unreadable: skip" in msg and "\n" not in msg


def test_on_unreadable_skip_leaves_out_and_lists_every_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text("fine", encoding="utf-8")
    (tmp_path / "image.txt").write_bytes(PNG_BYTES)
    (tmp_path / "noise.md").write_bytes(bytes(range(1, 9)) * 40 + bytes(range(128, 256)) * 2)
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf")
    (tmp_path / "broken.docx").write_bytes(b"PK\x03\x04 not a zip")

    docs, notes = load(tmp_path, on_unreadable="skip")

    assert list(docs) == ["ok.txt"]
    assert len(notes) == 1 and notes[0].startswith("skipped 4 unreadable file(s) (on_unreadable: skip): ")
    for name in (
        "broken.docx: could not be read (",
        "broken.pdf: could not be read (",
        "image.txt: not a text file (NUL bytes",
        "noise.md: not a text file (",
    ):
        assert name in notes[0], notes[0]


def test_unparsable_docx_is_an_error_by_default(tmp_path: Path) -> None:
    (tmp_path / "broken.docx").write_bytes(b"not a zip at all")
    with pytest.raises(RagsweepError, match=r"broken\.docx: could not be read .*on_unreadable: skip"):
        load(tmp_path)


def test_only_unreadable_files_is_one_error_listing_them(tmp_path: Path) -> None:
    (tmp_path / "image.txt").write_bytes(PNG_BYTES)
    with pytest.raises(RagsweepError, match=r"no file with extensions .* could be read .*image\.txt: not a text"):
        load(tmp_path, on_unreadable="skip")


# --------------------------------------------------------------------------- questions with bad lines
def test_questions_jsonl_with_three_bad_lines_is_one_error_naming_all(tmp_path: Path) -> None:
    docs = [Document("lease", "Rent is due on the first day of the month.")]
    lines = [
        json.dumps({"id": "q1", "question": "When is rent due?"}),
        "{not json",
        json.dumps(["a list"]),
        json.dumps({"id": "q4", "question": ""}),
        json.dumps({"id": "q5", "question": "Fine?"}),
    ]
    path = tmp_path / "qs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    with pytest.raises(RagsweepError) as err:
        load_table_questions(TableQuestions(format="jsonl", path=path), docs)

    out = str(err.value).splitlines()
    assert out[0] == f"3 bad line(s) in {path}; fix them:"
    assert [ln.split(": ", 1)[0].strip() for ln in out[1:]] == [f"{path}:line {n}" for n in (2, 3, 4)]
    assert "not valid JSON" in out[1] and "expected a JSON object" in out[2] and "'question'" in out[3]


def test_questions_csv_bad_rows_are_all_reported_and_long_lists_capped(tmp_path: Path) -> None:
    docs = [Document("lease", "Rent is due on the first day of the month.")]
    path = tmp_path / "qs.csv"
    path.write_text("id,question\n" + "".join(f"q{i},\n" for i in range(60)) + "q60,Fine?\n", encoding="utf-8")

    with pytest.raises(RagsweepError) as err:
        load_table_questions(TableQuestions(format="csv", path=path), docs)

    out = str(err.value).splitlines()
    assert out[0] == f"60 bad line(s) in {path}; fix them:"
    assert out[1].strip().startswith(f"{path}:line 2: ") and len(out) == 1 + 50 + 1
    assert out[-1].strip() == "and 10 more"


def test_one_bad_line_keeps_its_single_line_message(tmp_path: Path) -> None:
    path = tmp_path / "qs.jsonl"
    path.write_text(json.dumps({"question": "Fine?"}) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(RagsweepError) as err:
        load_table_questions(TableQuestions(format="jsonl", path=path), [Document("d", "text")])
    assert str(err.value).startswith(f"{path}:line 2: not valid JSON") and "\n" not in str(err.value)
