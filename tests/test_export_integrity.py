"""An exported folder says when it was changed: ``SHA256SUMS`` lists every file the pipeline reads, loading and
serving check it, each way of tampering (issue 42's fourteen) is one line naming the file and the fix, and a
loaded or served pipeline writes nothing into the folder (read from a checked private copy)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import describe

import ragsweep
from ragsweep.errors import RagsweepError

CID = "sentence256-minilm-fusion-k3"  # chunks, vectors, a Chroma collection and BM25: every kind of index file


@pytest.fixture(scope="module")
def exported(base_run, run_cli, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("integrity") / CID
    proc = run_cli("export", base_run.run_dir, CID, "--out", folder)
    assert proc.returncode == 0, describe(proc)
    assert "folder digest: sha256:" in proc.stdout
    return folder


@pytest.fixture
def copy(exported, tmp_path):
    """A fresh copy of the exported folder, to tamper with."""

    def make(name: str = "folder") -> Path:
        target = tmp_path / name
        shutil.copytree(exported, target)
        return target

    return make


def _chunks(folder: Path) -> Path:
    return next((folder / "index" / "chunks").glob("*.json"))


def _rewrite_json(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _edit_chunk_text(f: Path) -> None:
    _rewrite_json(_chunks(f), lambda rows: rows[0].__setitem__(4, rows[0][4].replace("§", "§ 999 days", 1)))


def _edit_offsets(f: Path) -> None:
    _rewrite_json(_chunks(f), lambda rows: rows[0].__setitem__(3, rows[0][3] + 5))


def _edit_corpus(f: Path) -> None:
    text = (f / "corpus.jsonl").read_text(encoding="utf-8")
    (f / "corpus.jsonl").write_text(text.replace("days", "999 days", 1), encoding="utf-8")


def _drop_vectors(f: Path) -> None:
    with sqlite3.connect(f / "index" / "embeddings.sqlite") as db:
        db.execute("DELETE FROM embedding WHERE key IN (SELECT key FROM embedding LIMIT 3)")
    db.close()


def _corrupt(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[100:4000] = b"\xff" * len(data[100:4000])
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:200])


def _segment(f: Path) -> Path:
    return next((f / "index" / "chroma").glob("*/data_level0.bin"))


TAMPERING = {  # what was done -> (how, the file the error must name, relative to the folder)
    "edited chunk text": (_edit_chunk_text, _chunks),
    "edited offsets": (_edit_offsets, _chunks),
    "edited corpus": (_edit_corpus, lambda f: f / "corpus.jsonl"),
    "truncated corpus": (lambda f: _truncate(f / "corpus.jsonl"), lambda f: f / "corpus.jsonl"),
    "deleted chunks": (lambda f: _chunks(f).unlink(), _chunks),
    "deleted vectors": (
        lambda f: (f / "index" / "embeddings.sqlite").unlink(),
        lambda f: f / "index/embeddings.sqlite",
    ),
    "vectors removed from the database": (_drop_vectors, lambda f: f / "index" / "embeddings.sqlite"),
    "corrupt vector database": (
        lambda f: _corrupt(f / "index/embeddings.sqlite"),
        lambda f: f / "index/embeddings.sqlite",
    ),
    "deleted Chroma folder": (lambda f: shutil.rmtree(f / "index" / "chroma"), lambda f: f / "index" / "chroma"),
    "deleted HNSW segment file": (lambda f: _segment(f).unlink(), _segment),
    "corrupt chroma.sqlite3": (
        lambda f: _corrupt(f / "index/chroma/chroma.sqlite3"),
        lambda f: f / "index/chroma/chroma.sqlite3",
    ),
    "truncated pipeline.json": (lambda f: _truncate(f / "pipeline.json"), lambda f: f / "pipeline.json"),
    "edited tuned weights": (
        lambda f: _rewrite_json(f / "pipeline.json", lambda r: r.__setitem__("abstain_threshold", {"x": 1})),
        lambda f: f / "pipeline.json",
    ),
    "edited configuration.json": (
        lambda f: _rewrite_json(f / "configuration.json", lambda r: r.__setitem__("config_id", "other")),
        lambda f: f / "configuration.json",
    ),
}


@pytest.mark.parametrize("what", sorted(TAMPERING))
def test_each_tampering_is_refused_in_one_line_naming_the_file_and_the_fix(copy, what):
    folder = copy()
    how, named = TAMPERING[what]
    where = named(folder)  # before the change: some name a file the change deletes
    how(folder)
    with pytest.raises(RagsweepError) as caught:
        ragsweep.load_pipeline(folder)
    line = str(caught.value)
    assert "\n" not in line and str(where) in line, (what, line)
    assert ("changed since export" in line or "missing (listed in SHA256SUMS)" in line) and "--allow-modified" in line


def test_the_folder_lists_every_file_it_reads_and_sha256sum_checks_it(exported):
    listed = [line.split("  ", 1)[1] for line in (exported / "SHA256SUMS").read_text().splitlines()]
    files = sorted(p.relative_to(exported).as_posix() for p in exported.rglob("*") if p.is_file())
    assert listed == [f for f in files if f not in ("SHA256SUMS", "README.md")]
    assert {"pipeline.json", "corpus.jsonl", "index/embeddings.sqlite", "index/chroma/chroma.sqlite3"} <= set(listed)
    if shutil.which("sha256sum"):
        proc = subprocess.run(["sha256sum", "--check", "--quiet", "SHA256SUMS"], cwd=exported, capture_output=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_serve_refuses_a_changed_folder_before_it_listens_and_names_the_file(copy, run_cli):
    folder = copy()
    _edit_chunk_text(folder)
    proc = run_cli("serve", folder, "--port", "0")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, describe(proc)
    assert str(_chunks(folder)) in lines[0] and "changed since export" in lines[0] and "--allow-modified" in lines[0]


def test_allowed_changes_are_used_after_a_warning_and_broken_files_are_named(copy, base_run, caplog):
    edited = copy("edited")
    _edit_chunk_text(edited)
    with caplog.at_level(logging.WARNING, logger="ragsweep.export"):
        with ragsweep.load_pipeline(edited, allow_modified=True) as pipeline:
            texts = [c.text for c in pipeline.chunks]
    assert any("§ 999 days" in t for t in texts)  # served as it is: the user asked for it, and was told
    assert any(str(_chunks(edited)) in r.getMessage() and "--allow-modified" in r.getMessage() for r in caplog.records)
    for name, how, file in (
        ("chroma", lambda f: _corrupt(f / "index/chroma/chroma.sqlite3"), "index/chroma/chroma.sqlite3"),
        ("vectors", lambda f: _corrupt(f / "index/embeddings.sqlite"), "index/embeddings.sqlite"),
        ("record", lambda f: _truncate(f / "pipeline.json"), "pipeline.json"),
        ("corpus", lambda f: _truncate(f / "corpus.jsonl"), "corpus.jsonl"),
    ):
        broken = copy(name)
        how(broken)
        with pytest.raises(RagsweepError) as caught:
            ragsweep.load_pipeline(broken, allow_modified=True)
        line = str(caught.value)
        assert "\n" not in line and str(broken / file) in line and "ragsweep-pipeline-" not in line, line


def test_a_pinned_digest_catches_a_folder_whose_list_was_rewritten_too(exported, copy, run_cli):
    from ragsweep.export.digests import folder_digest, write_sums

    pinned = folder_digest(exported)
    with ragsweep.load_pipeline(exported, digest=pinned) as pipeline:
        assert pipeline.config_id == CID
    forged = copy()
    _edit_chunk_text(forged)
    (forged / "SHA256SUMS").unlink()
    write_sums(forged)  # the list made to match the edit: only the pinned digest can tell
    ragsweep.load_pipeline(forged).close()
    with pytest.raises(RagsweepError, match="not the sha256:.* you pinned"):
        ragsweep.load_pipeline(forged, digest=pinned)
    proc = run_cli("serve", forged, "--port", "0", "--digest", pinned)
    assert proc.returncode == 2 and "you pinned" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_folder_without_its_list_is_refused_unless_allowed(copy):
    folder = copy()
    (folder / "SHA256SUMS").unlink()
    with pytest.raises(RagsweepError, match=r"SHA256SUMS: missing, .*--allow-modified"):
        ragsweep.load_pipeline(folder)
    with ragsweep.load_pipeline(folder, allow_modified=True) as pipeline:
        assert pipeline.config_id == CID
    (folder / "SHA256SUMS").write_text("0" * 64 + "  ../../etc/passwd\n")
    with pytest.raises(RagsweepError, match=r"SHA256SUMS:1: not a '<sha256>  <path inside the folder>' line"):
        ragsweep.load_pipeline(folder, allow_modified=True)


def _snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root``: its kind, mode, size, modification time and content digest."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else None
            out[path.relative_to(root).as_posix()] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return out


def _read_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def test_a_loaded_and_served_pipeline_writes_nothing_into_a_read_only_folder(copy, base_run, tmp_path, monkeypatch):
    """New questions (their vectors), the engine, the HTTP API and closing: the folder's bytes, times and entries
    stay as they were, no Python code opens a file in it for writing (an audit hook watches), and the private
    copy is gone after close. (As root, permissions do not stop a write: the snapshot and the hook do.)"""
    from fastapi.testclient import TestClient

    from ragsweep.serve import make_app

    folder = copy()
    _read_only(folder)
    before = _snapshot(folder)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR read again
    writes: list[str] = []

    def audit(event: str, args: tuple) -> None:
        if event == "open" and args and isinstance(args[0], (str, Path)) and str(args[0]).startswith(str(folder)):
            mode, flags = args[1], args[2] if len(args) > 2 else 0
            if (isinstance(mode, str) and any(c in mode for c in "wax+")) or (flags or 0) & (os.O_WRONLY | os.O_RDWR):
                writes.append(str(args[0]))
        elif event == "sqlite3.connect" and args and str(args[0]).startswith(str(folder)):
            writes.append(str(args[0]))

    sys.addaudithook(audit)  # hooks cannot be removed: it only records paths under this test's folder
    rows = base_run.records[base_run.records["config_id"] == CID]
    with ragsweep.load_pipeline(folder) as pipeline:
        copies = list((tmp_path / "tmp").glob("ragsweep-pipeline-*"))
        assert len(copies) == 1
        assert pipeline.ctx.models.export_root == Path(os.environ["RAGSWEEP_USER_CACHE"])  # ONNX exports kept there
        for row in rows.itertuples():
            out = pipeline.ask(row.question, answer=False)
            assert [s["doc_id"] for s in out["sources"]] == [s["doc_id"] for s in row.sources]
        for n in range(5):
            assert pipeline.ask(f"Which rule covers case number {n} nobody asked about?", answer=False)["sources"]
        assert str(pipeline.engine.query("Who may terminate the lease?"))
        with TestClient(make_app(pipeline)) as client:
            reply = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "Fees?"}]})
            assert reply.status_code == 200, reply.text
    assert not copies[0].exists()
    assert writes == []
    assert _snapshot(folder) == before


def test_a_file_the_list_does_not_name_is_refused_and_a_pin_needs_its_list(exported, copy):
    """A line dropped from the list (so that ``sha256sum -c`` passes again) leaves its file unlisted: named, not
    silently left out of the copy and rebuilt. A pinned digest takes any case, and needs the list it pins."""
    from ragsweep.export.digests import folder_digest

    folder = copy()
    lines = (folder / "SHA256SUMS").read_text().splitlines(keepends=True)
    dropped = next(line for line in lines if "/chunks/" in line)
    (folder / "SHA256SUMS").write_text("".join(line for line in lines if line != dropped))
    with pytest.raises(RagsweepError, match=r"chunks/.*\.json: not listed in SHA256SUMS"):
        ragsweep.load_pipeline(folder)
    pinned = folder_digest(exported)
    ragsweep.load_pipeline(exported, digest=pinned.upper()).close()
    (folder / "SHA256SUMS").unlink()
    with pytest.raises(RagsweepError, match=r"SHA256SUMS: missing"):
        ragsweep.load_pipeline(folder, allow_modified=True, digest=pinned)


def test_the_engine_keeps_its_pipeline_and_the_copy_alive(exported, tmp_path, monkeypatch):
    """``load_pipeline(FOLDER).engine.query(...)``, as ``export`` prints it: the pipeline is not dropped (and its
    private copy removed) while its engine answers; the export carries no collector of the sweep's."""
    import gc
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    engine = ragsweep.load_pipeline(exported).engine
    gc.collect()
    assert len(list(tmp_path.glob("ragsweep-pipeline-*"))) == 1
    assert str(engine.query("Who may terminate the lease?"))
    del engine
    gc.collect()
    assert list(tmp_path.glob("ragsweep-pipeline-*")) == []
    spec = json.loads((exported / "pipeline.json").read_text())["spec"]
    assert not (spec.get("tracing") or {}).get("otlp")
