"""An exported folder's digests: what makes a change to it evident, and the private copy a loaded pipeline reads.

``export`` ends by writing ``SHA256SUMS``: one ``<sha256>  <path>`` line per file the pipeline reads (every file
but the README and the list itself), sorted, in the format of coreutils' ``sha256sum``, so ``cd FOLDER &&
sha256sum -c SHA256SUMS`` checks it without ragsweep. The list's own digest (``folder_digest``) is printed at
export: a user who keeps it can pin the whole folder (``load_pipeline(..., digest=...)``, ``serve --digest``),
which the list alone cannot protect against someone rewriting it too.

``working_copy`` copies each listed file into a private temporary folder while hashing the bytes it copies, and
compares: the pipeline then opens only that copy, so what it reads is what was checked (no window between check
and use), and whatever it writes (a new question's vector, an ONNX export, an LLM call's reply) goes there, never
into the exported folder, which may be read-only. A changed, missing or unlisted-but-needed file is one line
naming the file and the fix; ``allow_modified`` opens the folder as it is, after one warning line.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import tempfile
from pathlib import Path, PurePosixPath

from ragsweep.errors import RagsweepError

SUMS = "SHA256SUMS"
UNLISTED = frozenset({SUMS, "README.md"})  # read by people, not by the pipeline: editing them changes nothing
FIX = "export the run again (ragsweep export), or pass --allow-modified (load_pipeline(..., allow_modified=True))"
_CHUNK = 1 << 20

log = logging.getLogger("ragsweep.export")


def write_sums(root: Path) -> str:
    """Write ``root/SHA256SUMS`` over every file under ``root`` but the unlisted ones; returns the folder's digest
    (``folder_digest``)."""
    lines = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel not in UNLISTED:
            lines.append(f"{_file_digest(path)}  {rel}\n")
    (root / SUMS).write_text("".join(lines), encoding="utf-8", newline="\n")
    return folder_digest(root)


def folder_digest(root: Path) -> str:
    """``sha256:<hex>`` of the folder's ``SHA256SUMS``: one value that names every file's content."""
    return "sha256:" + hashlib.sha256((root / SUMS).read_bytes()).hexdigest()


def working_copy(root: Path, *, allow_modified: bool = False, digest: str | None = None) -> Path:
    """A new temporary folder holding the checked copy of every file ``root/SHA256SUMS`` lists (the caller removes
    it); a one-line ``RagsweepError`` for a folder that differs from its list, unless ``allow_modified``."""
    listed, raw = _read_sums(root, allow_modified and digest is None)  # a pin needs the list it pins
    if digest is not None:
        _check_digest(root, raw, digest)  # the bytes parsed above: a list swapped after the check is not used
    copy = Path(tempfile.mkdtemp(prefix="ragsweep-pipeline-"))
    try:
        problems = _copy_checked(root, listed, copy) if listed is not None else _copy_all(root, copy)
    except BaseException:
        shutil.rmtree(copy, ignore_errors=True)
        raise
    if problems and not allow_modified:
        shutil.rmtree(copy, ignore_errors=True)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RagsweepError(f"{problems[0]}{more}; {FIX}")
    if problems:
        more = f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
        log.warning("%s: opened as it is (--allow-modified): %s%s", root, "; ".join(problems[:3]), more)
    return copy


def _read_sums(root: Path, allow_modified: bool) -> tuple[dict[str, str] | None, bytes]:
    """``path -> sha256`` from the list, and the list's bytes; None for a folder without one opened with
    ``allow_modified``."""
    sums = root / SUMS
    if not sums.is_file():
        if allow_modified:
            log.warning(
                "%s: has no %s (exported before exports were checked, or removed); opened unchecked", root, SUMS
            )
            return None, b""
        raise RagsweepError(
            f"{sums}: missing, so nothing says whether the folder was changed since export (folders exported "
            f"before exports carried digests have none); {FIX}"
        )
    raw = sums.read_bytes()
    listed: dict[str, str] = {}
    for n, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
        hexdigest, sep, rel = line.partition("  ")
        path = PurePosixPath(rel)
        bad_path = path.is_absolute() or ".." in path.parts or not rel
        if not sep or len(hexdigest) != 64 or any(c not in "0123456789abcdef" for c in hexdigest) or bad_path:
            raise RagsweepError(f"{sums}:{n}: not a '<sha256>  <path inside the folder>' line; {FIX}")
        listed[rel] = hexdigest
    if not listed:
        raise RagsweepError(f"{sums}: lists no file; {FIX}")
    return listed, raw


def _check_digest(root: Path, raw: bytes, expected: str) -> None:
    want = expected.strip().lower()
    want = want if want.startswith("sha256:") else f"sha256:{want}"
    got = "sha256:" + hashlib.sha256(raw).hexdigest()
    if got != want:
        raise RagsweepError(
            f"{root / SUMS}: the folder's digest is {got}, not the {want} you pinned; the folder or its list was "
            "changed since export: export the run again, or pin the new digest if the change is yours"
        )


def _copy_checked(root: Path, listed: dict[str, str], copy: Path) -> list[str]:
    """Copy each listed file, hashing what is copied; one problem line per file that differs or is missing, and
    per file in the folder the list does not name (never read: a line dropped from the list would otherwise
    make a deleted index file look unlisted, not missing); hidden files are left to the system."""
    problems = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink()):
        rel = path.relative_to(root).as_posix()
        if rel not in listed and rel not in UNLISTED and not any(part.startswith(".") for part in rel.split("/")):
            problems.append(f"{path}: not listed in {SUMS} (added after export, or its line removed)")
    for rel, want in listed.items():
        source, target = root / rel, copy / rel
        if not source.is_file():
            problems.append(f"{source}: missing (listed in {SUMS})")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if _copy_hashing(source, target) != want:
            problems.append(f"{source}: changed since export (its sha256 is not the one {SUMS} lists)")
    return problems


def _copy_all(root: Path, copy: Path) -> list[str]:
    shutil.copytree(root, copy, dirs_exist_ok=True)
    return []


def _copy_hashing(source: Path, target: Path) -> str:
    h = hashlib.sha256()
    with source.open("rb") as src, target.open("wb") as dst:
        while block := src.read(_CHUNK):
            h.update(block)
            dst.write(block)
    return h.hexdigest()


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            h.update(block)
    return h.hexdigest()
