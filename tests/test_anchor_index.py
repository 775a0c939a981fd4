"""The anchor index finds exactly what repeated ``str.find`` finds, without a corpus scan per needle."""

from __future__ import annotations

import random

import pytest

from ragsweep.datasets.anchor_index import STRIDE, WIDTH, AnchorIndex
from ragsweep.datasets.locate import CorpusIndex


def _every(text: str, needle: str) -> list[int]:
    return [i for i in range(len(text)) if text.startswith(needle, i)]


def _by_find(text: str, needle: str) -> list[int]:
    out, pos = [], text.find(needle)
    while pos >= 0:
        out.append(pos)
        pos = text.find(needle, pos + len(needle))
    return out


@pytest.mark.parametrize("alphabet", ["ab", "abcde fgh", "§ é\0x"])
def test_occurrences_are_every_start_of_the_needle(alphabet: str) -> None:
    rng = random.Random(alphabet)
    for _ in range(40):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 1500)))
        index = AnchorIndex(text)
        for _ in range(15):
            if text and rng.random() < 0.7:  # a piece of the text (it occurs at least once)
                start = rng.randrange(len(text))
                needle = text[start : start + rng.randint(WIDTH + STRIDE - 1, 70)]
            else:
                needle = "".join(rng.choice(alphabet) for _ in range(rng.randint(WIDTH + STRIDE - 1, 40)))
            if not AnchorIndex.covers(needle):
                continue
            assert index.occurrences(needle) == _every(text, needle)


def test_a_short_needle_is_refused() -> None:
    with pytest.raises(ValueError, match="shorter than"):
        AnchorIndex("x" * 100).occurrences("x" * (WIDTH + STRIDE - 2))


def test_corpus_index_finds_what_find_found(monkeypatch) -> None:
    """Long needles through the index once ``SCANS_BEFORE_INDEX`` were scanned for, short ones through
    ``str.find``: the same non-overlapping places, and no more scans of the joined text for long ones."""
    import ragsweep.datasets.locate as locate

    monkeypatch.setattr(locate, "SCANS_BEFORE_INDEX", 4)
    rng = random.Random(7)
    words = ["the", "party", "shall", "notify", "within", "days", "§", "Confidential", "Information"]
    docs = {f"d{i}": " ".join(rng.choice(words) for _ in range(400)) for i in range(6)}
    index = CorpusIndex(docs)
    joined = index._joined_text()
    needles = [joined[s : s + n] for s in range(0, len(joined) - 80, 997) for n in (6, 30, 75)]
    needles = [n.strip("\0") for n in needles if "\0" not in n.strip("\0")]
    expected = {n: _by_find(joined, n) for n in needles}
    scans = []
    monkeypatch.setattr(index, "_joined", _CountingStr(joined, scans))
    for n in needles:
        found = [index._starts[i] + local for i, local in _locals(index, n)]
        assert found == expected[n], n
    long_needles = [n for n in needles if AnchorIndex.covers(n)]
    assert len(long_needles) > 10
    scanned = {n for n in scans if AnchorIndex.covers(n)}
    assert scanned == set(long_needles[:4]), "a long needle scanned the corpus after the index was built"


class _CountingStr(str):
    """The joined text, noting each needle ``find`` is asked for."""

    def __new__(cls, text: str, scans: list):
        obj = super().__new__(cls, text)
        obj.scans = scans
        return obj

    def find(self, sub, *args):  # type: ignore[override]
        self.scans.append(sub)
        return super().find(sub, *args)


def _locals(index: CorpusIndex, needle: str):
    """(document index, position within its normalised text) of each place ``normalised_all`` returns."""
    import bisect

    for pos in index._positions(needle):
        i = bisect.bisect_right(index._starts, pos) - 1
        yield i, pos - index._starts[i]
