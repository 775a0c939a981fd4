"""Decoding users' text files: UTF-8 as stored, else the encoding charset-normalizer finds.

One Latin-1 file among hundreds must not stop a run, but a guessed encoding must not pass silently
either: the caller records every re-decoded file in the dataset notes. A file that is no text at
all (NUL bytes, or no encoding fits) raises ``UnreadableFile``, which ``on_unreadable: skip`` turns
into a note.
"""

from __future__ import annotations

from pathlib import Path

from ragsweep.errors import RagsweepError

# Windows' Western code page is what most non-UTF-8 files users have are written in; among the
# candidates that decode a file equally well, it wins (charset-normalizer alone picks e.g. cp1006
# for a short Latin-1 "Café", since every single-byte code page decodes it without "chaos").
_PREFERRED = ("cp1252", "latin_1")
_UNICODE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


class UnreadableFile(RagsweepError):
    """A corpus file that cannot be turned into text; ``reason`` says why in a few words."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)
        self.reason = reason


def detect_encoding(data: bytes) -> str | None:
    """The encoding of non-UTF-8 ``data``, or None when it does not look like text."""
    if b"\x00" in data and not data.startswith(_UNICODE_BOMS):
        return None  # NUL bytes: a binary file (UTF-16/32 text carries a byte-order mark)
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data))
    if not matches:
        return None
    best = min((m.chaos, -m.coherence) for m in matches)
    tied = [m for m in matches if (m.chaos, -m.coherence) == best]
    for preferred in _PREFERRED:
        if any(preferred in m.could_be_from_charset for m in tied):
            return preferred
    return tied[0].encoding


def decode_text(path: Path, data: bytes) -> tuple[str, str | None]:
    """``(text, encoding)``: UTF-8 exactly as stored (encoding None; no BOM or newline change, so
    offsets stay valid), else the detected encoding's strict decoding."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    encoding = detect_encoding(data)
    if encoding is None:
        why = "NUL bytes" if b"\x00" in data else "no text encoding fits"
        raise UnreadableFile(path, f"not a text file ({why}; it looks binary)")
    try:
        return data.decode(encoding), encoding
    except (UnicodeDecodeError, LookupError):
        raise UnreadableFile(path, f"not a text file (no text encoding fits; {encoding} was the closest)") from None


def read_text_detect(path: Path) -> tuple[str, str | None]:
    """Read and decode a corpus file; see ``decode_text``."""
    return decode_text(path, Path(path).read_bytes())
