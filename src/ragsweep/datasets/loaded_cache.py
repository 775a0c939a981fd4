"""A loaded dataset kept in the cache, keyed by the bytes of every file it was read from.

Loading parses the corpus (PDFs and Word files for a folder), locates evidence given as text, finds copies of gold
text elsewhere and validates: 0.14-0.3 s on privacy_qa, a third of a re-run that finds everything done (BENCHMARKS
"Stage 1 on the default path"), and much more on a folder of PDFs. A re-run of the same files, spec and code reads
the result back instead. The key is a hash of: this format's version, ragsweep's version, the source of this
package (``datasets/*.py``: a loader's fix reloads), the versions of the libraries that turn files into text, the
dataset spec as resolved, and every input file's name and content hash (not its time stamp: a checkout or a copy
keeps a hit, any edit misses). Inputs are the files the spec's formats read (``inputs``); where one is missing the
loader runs and names it. One file per dataset spec (``place``), replaced when its inputs change, so the cache
does not grow with each edit of a corpus.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ragsweep.datasets.types import Dataset, Document, EvidenceSpan, Question, Turn

if TYPE_CHECKING:
    from ragsweep.config import DatasetSpec

FORMAT = 1  # bump when the stored form changes
# what turns files into text or evidence places: a new version may read the same bytes differently
LIBRARIES = ("llama-index-core", "llama-index-readers-file", "pypdf", "python-docx", "charset-normalizer", "rapidfuzz")
# where a note names the run's unlocated_evidence.jsonl: each run directory gets its own (``load.write_unlocated``)
LISTED = "{unlocated_evidence.jsonl}"


def inputs(spec: DatasetSpec) -> list[Path] | None:
    """Every file the spec's corpus, questions and negatives are read from, sorted (a folder corpus: the files
    with its extensions, hidden ones left out as its reader leaves them; a superset is harmless); None where a
    path is missing (the loader names it) or a format is not known here (never kept)."""
    from ragsweep.datasets.demo import DEMO_DIR
    from ragsweep.datasets.folder import normalise_exts

    corpus, questions = spec.corpus, spec.questions
    roots: list[tuple[Path, set[str] | None, bool]] = []  # (path, suffixes read by a folder reader or None, recursive)
    for part in (corpus, questions):
        if part.format == "demo":
            roots.append((DEMO_DIR, None, True))
        elif part.format == "legalbench":
            within = ("corpus", part.subset) if part is corpus else ("benchmarks", f"{part.subset}.json")
            roots.append((Path(part.path).joinpath(*within), None, True))
        elif part.format == "folder":
            roots.append((Path(part.path), set(normalise_exts(part.extensions)), part.recursive))
        elif part.format in ("jsonl", "csv", "labelled_rag", "giskard", "squad"):
            roots.append((Path(part.path), None, True))
        else:
            return None
    if spec.negatives is not None:
        roots.append((Path(spec.negatives), None, True))
    files: set[Path] = set()
    for root, suffixes, recursive in roots:
        if root.is_file():
            files.add(root.resolve())
        elif root.is_dir():
            files.update(
                p.resolve()
                for p in (root.rglob("*") if recursive else root.glob("*"))
                if p.is_file()
                and (
                    suffixes is None  # every file (a LegalBench subset reads hidden .txt files too)
                    or (p.suffix.lower() in suffixes and not any(s.startswith(".") for s in p.relative_to(root).parts))
                )
            )
        else:
            return None
    return sorted(files)


def place(folder: Path, spec: DatasetSpec) -> Path:
    """Where ``spec``'s loaded dataset is kept: one file per dataset spec, whatever its files hold, so a corpus
    edited a hundred times leaves one file, not a hundred (``read`` checks the stored ``key``)."""
    return Path(folder) / f"{hashlib.sha256(spec.model_dump_json().encode()).hexdigest()[:32]}.json"


def key(spec: DatasetSpec, files: list[Path]) -> str:
    """What the dataset of ``spec`` loaded from ``files`` (``inputs``) depends on, as a hash."""
    h = hashlib.sha256()
    for part in (str(FORMAT), _code_version(LIBRARIES), spec.model_dump_json()):
        h.update(part.encode())
        h.update(b"\0")
    for path in files:
        h.update(str(path).encode())
        h.update(b"\0")
        with open(path, "rb") as handle:
            h.update(hashlib.file_digest(handle, "sha256").digest())
    return h.hexdigest()


@functools.lru_cache(maxsize=4)
def _code_version(libraries: tuple[str, ...]) -> str:
    """The loading code's and its libraries' versions, once per process (a miss computes the key twice)."""
    import sys
    from importlib.metadata import PackageNotFoundError, version

    import ragsweep

    # the Python version too: normalisation (NFKC, case folding) follows its Unicode tables
    h = hashlib.sha256(f"{ragsweep.__version__}|{sys.version_info[:2]}".encode())
    for source in sorted(Path(__file__).parent.glob("*.py")):
        h.update(source.name.encode())
        h.update(source.read_bytes())
    for name in libraries:
        try:
            h.update(f"{name}={version(name)}".encode())
        except PackageNotFoundError:
            h.update(f"{name} absent".encode())
    return h.hexdigest()


def read(path: Path, expected: str) -> Dataset | None:
    """The dataset stored at ``path`` under the key ``expected``; None where there is none, another (a file has
    changed since) or one that cannot be read: then it is loaded anew."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != expected:
            return None
        dataset = Dataset(
            name=data["name"],
            documents=[Document(doc_id, text, metadata) for doc_id, text, metadata in data["documents"]],
            questions=[
                Question(
                    qid,
                    text,
                    answer,
                    tuple(EvidenceSpan(*e) for e in evidence),
                    qtype,
                    tuple(Turn(*t) for t in history),
                )
                for qid, text, answer, evidence, qtype, history in data["questions"]
            ],
            notes=data["notes"],
            evidence=data["evidence"],
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return dataset


def write(path: Path, stored_key: str, dataset: Dataset, listed: Path | None = None) -> None:
    """Store ``dataset`` at ``path`` under ``stored_key`` (atomically, replacing what was there); nothing where a
    document's metadata is not JSON. ``listed``: the run's unlocated_evidence.jsonl its notes name, stored as
    ``LISTED`` (``relisted`` names the next run's)."""
    data = {
        "key": stored_key,
        "name": dataset.name,
        "documents": [[d.doc_id, d.text, d.metadata] for d in dataset.documents],
        "questions": [
            [
                q.qid,
                q.question,
                q.reference_answer,
                [[e.doc_id, e.start, e.end, e.copy_of] for e in q.evidence],
                q.qtype,
                [[t.role, t.content] for t in q.history],
            ]
            for q in dataset.questions
        ],
        "notes": [n.replace(str(listed), LISTED) for n in dataset.notes] if listed else dataset.notes,
        "evidence": dataset.evidence,
    }
    metadata = [d.metadata for d in dataset.documents]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if json.loads(json.dumps(metadata)) != metadata:  # JSON would change it (tuples, int keys): not kept
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data), encoding="utf-8")  # ASCII: a lone surrogate in a text survives
        os.replace(tmp, path)
    except (TypeError, ValueError, OSError):  # not JSON, a full disk: loaded anew next time
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def relisted(dataset: Dataset, listed: Path | None) -> Dataset:
    """``dataset`` read back, its notes naming this run's unlocated_evidence.jsonl (``listed``)."""
    dataset.notes = [n.replace(LISTED, str(listed) if listed else "unlocated_evidence.jsonl") for n in dataset.notes]
    return dataset
