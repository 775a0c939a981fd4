"""BERTScore's blocks encode each text about once: references that share candidates are scored together."""

from __future__ import annotations

import random

from ragsweep.config import BERTScoreSpec
from ragsweep.evaluation.bertscore import BERTScoreRunner
from ragsweep.evaluation.pair_order import clustered


def _pairs(seed: int = 0) -> list[tuple[str, str]]:
    """Twelve contracts, each with six questions (references) whose answers (candidates) are drawn from that
    contract's ten sentences; reference texts interleave the contracts when sorted, as real ones do."""
    rng = random.Random(seed)
    pairs = set()
    for doc in range(12):
        sentences = [f"contract {doc} sentence {s}" for s in range(10)]
        for q in range(6):
            ref = f"{chr(97 + q)} gold span {q} of contract {doc}"
            for cand in rng.sample(sentences, 5):
                pairs.add((cand, ref))
    return sorted(pairs)


def _encodings(order: list[tuple[str, str]], block: int) -> int:
    """Texts a block-by-block scoring encodes: each block its distinct candidates and references."""
    blocks = [order[i : i + block] for i in range(0, len(order), block)]
    return sum(len({c for c, _ in b}) + len({r for _, r in b}) for b in blocks)


def test_the_scoring_order_encodes_each_text_about_once(tmp_path):
    pairs = _pairs()
    distinct = len({c for c, _ in pairs}) + len({r for _, r in pairs})
    runner = BERTScoreRunner(BERTScoreSpec(), tmp_path / "pairs.sqlite")
    try:
        found, todo = runner.lookup(pairs)
    finally:
        runner.close()
    assert not found and sorted(pair for _, pair in todo) == pairs  # every pair once, none lost
    order = [pair for _, pair in todo]
    by_reference = sorted(
        pairs, key=lambda p: (p[1], p[0])
    )  # the order before: each contract's sentences in every block
    assert _encodings(order, 30) <= 1.1 * distinct
    assert _encodings(by_reference, 30) > 1.5 * distinct
    refs = [r for _, r in order]
    runs = [r for i, r in enumerate(refs) if i == 0 or refs[i - 1] != r]
    assert len(runs) == len(set(refs))  # a reference's pairs together


def test_the_order_is_deterministic_and_keeps_every_pair():
    items = [((c, r), (c, r)) for c, r in _pairs(3)]
    shuffled = items[:]
    random.Random(1).shuffle(shuffled)
    assert clustered(items) == clustered(shuffled)
    assert sorted(clustered(shuffled)) == sorted(items)
    assert clustered([]) == []
