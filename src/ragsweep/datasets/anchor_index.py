"""Every place a long string occurs in a large text, without scanning the text once per string.

Finding each question's evidence elsewhere in the corpus (``duplicates.add_copies``) with one
``str.find`` pass per piece of evidence costs questions x corpus: quadratic as a corpus grows with
its questions (contractnli x8: 25 s of loading). Here the text's windows of ``WIDTH`` characters
are hashed once, every ``STRIDE``-th position (a sampled q-gram index; cf. Navarro 2001, "A guided
tour to approximate string matching", on q-gram filters), and sorted. Any occurrence of a needle of
at least ``WIDTH + STRIDE - 1`` characters covers one sampled window starting within its first
``STRIDE`` characters, so looking up the needle's first ``STRIDE`` windows proposes every place it
occurs; each proposal is checked verbatim, so hash collisions cost time, never a wrong answer.
Shorter needles are left to ``str.find`` (``CorpusIndex.normalised_all``).
"""

from __future__ import annotations

import numpy as np

WIDTH = 24
STRIDE = 2  # a needle of WIDTH + STRIDE - 1 = 25 characters (MIN_COPY_CHARS) or more is looked up
_BASE = np.uint64(0x100000001B3)  # FNV's 64-bit prime: a polynomial hash modulo 2**64 (numpy wraps)


def _codes(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)


def window_hashes(codes: np.ndarray, starts: np.ndarray, width: int = WIDTH) -> np.ndarray:
    """The polynomial hash of ``codes[s : s + width]`` for each ``s`` in ``starts``."""
    h = np.zeros(len(starts), dtype=np.uint64)
    for j in range(width):
        h = h * _BASE + codes[starts + j]
    return h


class AnchorIndex:
    """The sorted hashes of ``text``'s sampled windows; ``occurrences`` answers from them."""

    def __init__(self, text: str) -> None:
        self.text = text
        codes = _codes(text)
        starts = np.arange(0, max(0, len(text) - WIDTH + 1), STRIDE, dtype=np.int64)
        hashes = window_hashes(codes, starts)
        order = np.argsort(hashes, kind="stable")
        self._hashes = hashes[order]
        self._starts = starts[order]

    @staticmethod
    def covers(needle: str) -> bool:
        """Whether ``needle`` is long enough to be looked up here."""
        return len(needle) >= WIDTH + STRIDE - 1

    def occurrences(self, needle: str) -> list[int]:
        """Every start position of ``needle`` in the text (overlapping ones included), ascending."""
        if not self.covers(needle):
            raise ValueError(f"a needle of {len(needle)} characters is shorter than {WIDTH + STRIDE - 1}")
        offsets = np.arange(STRIDE, dtype=np.int64)
        anchors = window_hashes(_codes(needle), offsets)
        lo = np.searchsorted(self._hashes, anchors, side="left")
        hi = np.searchsorted(self._hashes, anchors, side="right")
        found: set[int] = set()
        for offset, a, b in zip(offsets.tolist(), lo.tolist(), hi.tolist()):
            for window in self._starts[a:b].tolist():
                start = window - offset
                if start >= 0 and self.text.startswith(needle, start):
                    found.add(start)
        return sorted(found)
