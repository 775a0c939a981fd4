"""A folder of documents, read with LlamaIndex's ``SimpleDirectoryReader``.

The reader finds the files and parses PDFs; we plug in our own readers for text, HTML and Word
because its defaults decode text leniently (``errors="ignore"``: a Latin-1 file silently loses
characters and every evidence offset after them), keep HTML markup as text and need docx2txt.
Text that is not UTF-8 is decoded with the encoding detected (each such file is named in the
dataset notes); a file that cannot be read stops the load, or with ``on_unreadable: skip`` is
left out and named in the notes. A PDF's pages are joined by a blank line and the metadata records
where each page starts, so a span's page numbers can be found (``datasets/pages.py``).
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsweep.datasets.encoding import UnreadableFile, read_text_detect
from ragsweep.datasets.types import Document
from ragsweep.errors import RagsweepError

if TYPE_CHECKING:
    from ragsweep.config import FolderCorpus

_HTML_EXTS = {".html", ".htm"}
_PAGE_JOIN = "\n\n"


class _HTMLText(HTMLParser):
    """Visible text of an HTML page: one line per block element, scripts and styles dropped."""

    _SKIP = {"script", "style", "noscript", "template"}
    _BLOCK = {
        "address",
        "article",
        "aside",
        "blockquote",
        "br",
        "dd",
        "div",
        "dl",
        "dt",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "table",
        "td",
        "th",
        "title",
        "tr",
        "ul",
    }

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in self._SKIP:
            self._skipping += 1
        elif tag in self._BLOCK:
            self._parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self._skipping = max(0, self._skipping - 1)
        elif tag in self._BLOCK:
            self._parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self._parts.append(data)

    def text(self) -> str:
        lines = (" ".join(line.split()) for line in "".join(self._parts).split("\n"))
        return "\n".join(line for line in lines if line)


def html_to_text(html: str) -> str:
    """Strip tags with the stdlib parser (no extra dependency; bs4's HTMLTagReader reads one tag only)."""
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    return parser.text()


def _readers(exts: list[str], decoded: dict[Path, str]) -> dict[str, Any]:
    """``file_extractor`` for SimpleDirectoryReader: detected-encoding text, HTML to text, Word via
    python-docx, its defaults otherwise (PDF). Files not decoded as UTF-8 go into ``decoded``."""
    from llama_index.core import Document as LIDocument
    from llama_index.core.readers.base import BaseReader
    from llama_index.core.readers.file.base import SimpleDirectoryReader

    def read(file: Path) -> str:
        text, encoding = read_text_detect(file)
        if encoding is not None:
            decoded[Path(file)] = encoding
        return text

    class TextReader(BaseReader):
        def load_data(self, file: Path, extra_info: dict | None = None, **_: Any) -> list[LIDocument]:
            return [LIDocument(text=read(file), metadata=extra_info or {})]

    class HTMLReader(BaseReader):
        def load_data(self, file: Path, extra_info: dict | None = None, **_: Any) -> list[LIDocument]:
            return [LIDocument(text=html_to_text(read(file)), metadata=extra_info or {})]

    class DocxReader(BaseReader):
        def load_data(self, file: Path, extra_info: dict | None = None, **_: Any) -> list[LIDocument]:
            from ragsweep.datasets.docx_text import docx_text

            return [LIDocument(text=docx_text(Path(file)), metadata=extra_info or {})]

    defaults = SimpleDirectoryReader.supported_suffix_fn()
    extractor: dict[str, Any] = {}
    for ext in exts:
        if ext in _HTML_EXTS:
            extractor[ext] = HTMLReader()
        elif ext == ".docx":
            extractor[ext] = DocxReader()
        elif ext not in defaults:
            extractor[ext] = TextReader()
    return extractor


def normalise_exts(exts: list[str]) -> list[str]:
    """The extensions a folder corpus reads, as its reader matches them: lower case, with their dot."""
    return sorted({("." + e.lstrip(".")).lower() for e in exts if e.strip(".")})


def _root_cause(exc: BaseException) -> BaseException:
    """SimpleDirectoryReader wraps reader errors ("Error loading file"); PDFReader adds tenacity's RetryError."""
    while True:
        if exc.__cause__ is not None:
            exc = exc.__cause__
        elif hasattr(exc, "last_attempt") and exc.last_attempt.exception() is not None:  # tenacity.RetryError
            exc = exc.last_attempt.exception()
        else:
            return exc


def _read_one(reader: Any, path: Path) -> list[Any]:
    """The file's parts (one per PDF page); a file that cannot be parsed raises ``UnreadableFile``."""
    try:
        return reader.load_file(
            input_file=path,
            file_metadata=reader.file_metadata,
            file_extractor=reader.file_extractor,
            raise_on_error=True,
        )
    except ImportError as exc:  # the setup, not the file: never skipped
        raise RagsweepError(
            f"{path}: reading this file type needs a missing package ({exc}); install it or "
            f"drop the extension from dataset.corpus.extensions"
        ) from None
    except Exception as exc:  # noqa: BLE001 - any parser failure becomes one line naming the file
        cause = _root_cause(exc)
        if isinstance(cause, RagsweepError):
            raise cause from None
        detail = " ".join(f"{type(cause).__name__}: {cause}".split())[:200]
        raise UnreadableFile(path, f"could not be read ({detail})") from None


def _page_metadata(parts: list[Any]) -> dict[str, Any]:
    """Where each page starts in the joined text, and the PDF's page labels."""
    starts, at = [], 0
    for part in parts:
        starts.append(at)
        at += len(part.text) + len(_PAGE_JOIN)
    labels = [str(p.metadata.get("page_label") or i + 1) for i, p in enumerate(parts)]
    return {"pages": len(parts), "page_starts": starts, "page_labels": labels}


def _listing(items: list[str]) -> str:
    return "; ".join(items) if len(items) > 1 else items[0]


def load_folder_corpus(spec: FolderCorpus, notes: list[str] | None = None) -> list[Document]:
    """One Document per file, ``doc_id`` = path relative to the folder; PDF pages joined by a blank line."""
    folder = Path(spec.path)
    if not folder.is_dir():
        raise RagsweepError(f"{folder}: not a folder; point dataset.corpus.path at a folder of documents")
    exts = normalise_exts(spec.extensions)
    looked_for = f"{', '.join(exts)}{' (sub-folders included)' if spec.recursive else ''}"
    if not exts:
        raise RagsweepError(f"{folder}: dataset.corpus.extensions is empty; list the extensions to read, e.g. [.txt]")

    from llama_index.core import SimpleDirectoryReader

    decoded: dict[Path, str] = {}
    try:
        reader = SimpleDirectoryReader(
            input_dir=str(folder),
            required_exts=sorted(set(exts) | {e.upper() for e in exts}),
            recursive=spec.recursive,
            file_extractor=_readers(exts, decoded),
            raise_on_error=True,
        )
    except ValueError:  # "No files found in <dir>."
        raise RagsweepError(
            f"{folder}: no files with extensions {looked_for}; add documents or change dataset.corpus.extensions"
        ) from None

    documents: list[Document] = []
    empty: list[str] = []
    skipped: list[str] = []
    for path in sorted(reader.input_files):
        rel = Path(path).relative_to(folder).as_posix()
        try:
            parts = _read_one(reader, Path(path))
        except UnreadableFile as exc:
            if spec.on_unreadable != "skip":
                raise RagsweepError(
                    f"{exc}; fix or remove the file, or set dataset.corpus.on_unreadable: skip "
                    f"to leave unreadable files out"
                ) from None
            skipped.append(f"{rel}: {exc.reason}")
            continue
        text = _PAGE_JOIN.join(p.text for p in parts)
        if not text.strip():
            empty.append(rel)
            continue
        meta: dict[str, Any] = {"file_path": rel, "file_type": Path(path).suffix.lower()}
        if Path(path).suffix.lower() == ".pdf":
            meta.update(_page_metadata(parts))
        documents.append(Document(doc_id=rel, text=text, metadata=meta))

    if not documents:
        if skipped:
            raise RagsweepError(
                f"{folder}: no file with extensions {looked_for} could be read ({len(empty)} empty, "
                f"{len(skipped)} unreadable: {_listing(skipped)}); add documents with text"
            )
        raise RagsweepError(
            f"{folder}: all {len(empty)} files with extensions {looked_for} are empty (no extractable text; "
            f"scanned PDFs need OCR first); add documents with text"
        )
    if notes is not None:
        if decoded:
            names = ", ".join(
                f"{Path(p).relative_to(folder).as_posix()} as {enc}" for p, enc in sorted(decoded.items())
            )
            notes.append(f"re-decoded {len(decoded)} file(s) that are not UTF-8: {names}")
        if skipped:
            notes.append(f"skipped {len(skipped)} unreadable file(s) (on_unreadable: skip): {_listing(skipped)}")
        if empty:
            shown = ", ".join(empty[:3]) + (f" and {len(empty) - 3} more" if len(empty) > 3 else "")
            notes.append(f"skipped {len(empty)} empty document(s) with no extractable text: {shown}")
    return documents
