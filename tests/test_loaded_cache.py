"""A loaded dataset read back from the cache: equal to a fresh load in every field, loaded by no loader, and
loaded anew when a file's bytes, the spec or the code change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pdf_files import paged_pdf

from ragsweep.config import DatasetSpec
from ragsweep.datasets import load as load_module
from ragsweep.datasets import loaded_cache
from ragsweep.datasets.load import load_dataset

real_load = load_module._load

CLAUSE = "The tenant shall pay a late fee of five percent of the monthly rent."


def _folder_dataset(tmp_path: Path) -> DatasetSpec:
    """A folder of text, HTML and a paged PDF (page metadata), the gold clause copied into a second file, and
    questions with evidence given as text, one of them not found (kept)."""
    import docx

    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "lease.txt").write_text(f"Lease.\n{CLAUSE}\nSigned.", encoding="utf-8")
    (corpus / "sub" / "template.html").write_text(f"<html><body><p>Template: {CLAUSE}</p></body></html>")
    (corpus / "policy.pdf").write_bytes(paged_pdf(["We collect your email address.", "We never sell it."]))
    word = docx.Document()
    word.add_paragraph("Notices are given in writing.")
    word.save(corpus / "notices.docx")
    rows = [
        {"id": "fee", "question": "What is the late fee?", "answer": "five percent", "reference_contexts": [CLAUSE]},
        {"id": "email", "question": "What is collected?", "reference_contexts": ["We collect your email address."]},
        {"id": "lost", "question": "Where?", "reference_contexts": ["Nowhere to be found in any file."]},
    ]
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return DatasetSpec(
        corpus={"format": "folder", "path": corpus},
        questions={"format": "jsonl", "path": questions},
        unlocated_evidence="keep_question",
    )


def _fields(dataset) -> tuple:
    return (
        dataset.name,
        [(d.doc_id, d.text, d.metadata) for d in dataset.documents],
        dataset.questions,
        dataset.notes,
        json.dumps(dataset.evidence, sort_keys=True),
        dataset.fingerprint(),
    )


def test_a_dataset_read_back_equals_a_fresh_load_and_no_loader_runs(tmp_path, monkeypatch):
    spec = _folder_dataset(tmp_path)
    kept, run_a, run_b = tmp_path / "cache" / "datasets", tmp_path / "run-a", tmp_path / "run-b"
    fresh = load_dataset(spec, report_dir=run_a)
    first = load_dataset(spec, report_dir=run_a, kept_in=kept)
    assert _fields(first) == _fields(fresh)
    assert any(n.startswith("gold evidence of 1 question(s) also occurs elsewhere") for n in fresh.notes)
    assert fresh.documents[[d.doc_id for d in fresh.documents].index("policy.pdf")].metadata["page_starts"]
    assert len(list(kept.iterdir())) == 1

    def refuse(*args, **kwargs):
        raise AssertionError("loaded again")

    monkeypatch.setattr(load_module, "_load", refuse)
    again = load_dataset(spec, report_dir=run_b, kept_in=kept)
    unlocated = "unlocated_evidence.jsonl"
    assert (run_b / unlocated).read_text() == (run_a / unlocated).read_text() != ""
    # the same fields, its note naming this run's list of unlocated texts, not the first run's
    assert any(f"all listed in {run_b / unlocated}" in n for n in again.notes)
    again.notes = [n.replace(str(run_b), str(run_a)) for n in again.notes]
    assert _fields(again) == _fields(fresh)


@pytest.mark.parametrize("change", ["edit a file, same size", "add a file", "spec option", "library version"])
def test_a_change_to_any_input_loads_anew(tmp_path, monkeypatch, change):
    """A changed input loads anew and replaces the kept dataset (one file per dataset spec); files the folder's
    reader leaves out (hidden, other extensions) change nothing."""
    spec = _folder_dataset(tmp_path)
    kept = tmp_path / "cache" / "datasets"
    before = load_dataset(spec, kept_in=kept)
    (tmp_path / "corpus" / ".notes.txt").write_text("hidden")
    (tmp_path / "corpus" / "data.csv").write_text("a,b")
    loaded = []
    monkeypatch.setattr(load_module, "_load", lambda *a: loaded.append(1) or real_load(*a))
    assert _fields(load_dataset(spec, kept_in=kept)) == _fields(before) and not loaded
    if change == "edit a file, same size":
        lease = tmp_path / "corpus" / "lease.txt"
        lease.write_text(lease.read_text().replace("Signed.", "Agreed."[:7]), encoding="utf-8")
    elif change == "add a file":
        (tmp_path / "corpus" / "sub" / "new.md").write_text("A new annex.", encoding="utf-8")
    elif change == "spec option":
        spec = spec.model_copy(update={"duplicate_evidence": "first"})
    else:
        monkeypatch.setattr(loaded_cache, "LIBRARIES", (*loaded_cache.LIBRARIES, "numpy"))
    after = load_dataset(spec, kept_in=kept)
    assert loaded == [1] and len(list(kept.iterdir())) == (2 if change == "spec option" else 1)
    assert _fields(after) == _fields(load_dataset(spec))
    if change != "library version":
        assert _fields(after) != _fields(before)


def test_what_is_not_kept_is_loaded_every_time(tmp_path):
    """A missing input (the loader names it) and metadata JSON would change are not kept."""
    from ragsweep.datasets.types import Dataset, Document
    from ragsweep.errors import RagsweepError

    spec = _folder_dataset(tmp_path)
    (tmp_path / "questions.jsonl").unlink()
    with pytest.raises(RagsweepError, match="questions.jsonl"):
        load_dataset(spec, kept_in=tmp_path / "kept")
    assert not (tmp_path / "kept").exists()
    odd = Dataset("odd", [Document("a", "text", {"pages": (1, 2)})], [])
    loaded_cache.write(tmp_path / "kept" / "odd.json", "k", odd)
    assert not (tmp_path / "kept" / "odd.json").exists()
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "broken.json").write_text('{"name": "x", "documents": [[1]]')
    assert loaded_cache.read(tmp_path / "kept" / "broken.json", "k") is None
    (tmp_path / "kept" / "list.json").write_text("[]")
    assert loaded_cache.read(tmp_path / "kept" / "list.json", "k") is None


def test_extensions_without_a_dot_and_a_file_changed_while_loading(tmp_path, monkeypatch):
    """``extensions: [TXT]`` reads .txt files, so their bytes are in the key; a file edited while the dataset
    loads is not kept under the key of its bytes before (the next load reads it anew)."""
    spec = _folder_dataset(tmp_path)
    spec = spec.model_copy(update={"corpus": spec.corpus.model_copy(update={"extensions": ["TXT", "html"]})})
    kept = tmp_path / "kept"
    lease = tmp_path / "corpus" / "lease.txt"
    assert lease.resolve() in loaded_cache.inputs(spec)

    def edited_meanwhile(*args):
        dataset = real_load(*args)
        lease.write_text(lease.read_text() + " Amended.", encoding="utf-8")
        return dataset

    monkeypatch.setattr(load_module, "_load", edited_meanwhile)
    load_dataset(spec, kept_in=kept)
    assert not kept.exists()
    monkeypatch.setattr(load_module, "_load", real_load)
    first = load_dataset(spec, kept_in=kept)
    assert first.document("lease.txt").text.endswith("Amended.") and len(list(kept.iterdir())) == 1
    lease.write_text(lease.read_text().replace("Amended.", "Changed."), encoding="utf-8")
    assert load_dataset(spec, kept_in=kept).document("lease.txt").text.endswith("Changed.")


def test_a_lone_surrogate_survives_the_round_trip(tmp_path):
    from ragsweep.datasets.types import Dataset, Document

    dataset = Dataset("odd", [Document("a", "broken \ud800 text", {"file": "a"})], [], notes=["n"])
    loaded_cache.write(tmp_path / "d.json", "k", dataset)
    assert loaded_cache.read(tmp_path / "d.json", "k").documents == dataset.documents
    assert loaded_cache.read(tmp_path / "d.json", "other") is None
    assert [p.name for p in tmp_path.iterdir()] == ["d.json"]
