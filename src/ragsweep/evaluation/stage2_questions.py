"""The questions stage 2 judges: a share of the validation questions, where a verdict by a judge is chosen, and a
share of the test questions, where it is reported (pure).

Judging test questions only, a verdict by a judge metric was chosen and reported on the same questions: the
winner's curse this project exists to avoid. Each split's questions are taken in a seeded order (the sha256 of
seed and qid), the first ``ceil(share x n)`` of them, so a larger share judges the same questions and more, and
the order depends on neither the dataset's order nor ``--limit``'s cut beyond which questions it keeps.
"""

from __future__ import annotations

import hashlib
import math

SPLITS = ("validation", "test")


def _order(seed: int, qid: str) -> str:
    return hashlib.sha256(f"{seed}:stage2:{qid}".encode()).hexdigest()


def judged_qids(qids, split: dict[str, str], shares: dict[str, float], seed: int) -> set[str]:
    """Of each split in ``shares`` (validation, test), the first ``ceil(share x n)`` of ``qids`` in the seeded
    order; a share of 0 judges none of that split."""
    keep: set[str] = set()
    for name, share in shares.items():
        mine = sorted((q for q in qids if split.get(q) == name), key=lambda qid: _order(seed, qid))
        keep.update(mine[: math.ceil(round(share * len(mine), 9))])  # 0.07 x 100 is 7, not 8
    return keep


def judged_questions(questions, split: dict[str, str], shares: dict[str, float], seed: int) -> list:
    """The questions to judge (``judged_qids``), in the dataset's order."""
    keep = judged_qids([q.qid for q in questions], split, shares, seed)
    return [q for q in questions if q.qid in keep]
