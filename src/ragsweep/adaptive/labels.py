"""The complexity class of each dataset question: its type (``labels`` maps types to classes) or its
line in a labels file, for datasets without question types (LegalBench-RAG)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Sequence

from ragsweep.config.adaptive import AdaptiveSpec
from ragsweep.datasets.types import Question
from ragsweep.errors import RagsweepError


def read_labels_file(path: Path, where: str) -> dict[str, str]:
    """qid -> label from JSON lines ``{"qid": ..., "label": ...}``; every bad line is named in one error."""
    out: dict[str, str] = {}
    bad: list[str] = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            bad.append(f"line {n}: not JSON")
            continue
        if not isinstance(row, dict) or not isinstance(row.get("qid"), str) or not isinstance(row.get("label"), str):
            bad.append(f'line {n}: expected {{"qid": "...", "label": "..."}}')
        elif row["qid"] in out:
            bad.append(f"line {n}: qid {row['qid']!r} is labelled twice")
        else:
            out[row["qid"]] = row["label"]
    if bad:
        raise RagsweepError(
            f"{where}.labels_file: {path}: {len(bad)} bad line(s): "
            + "; ".join(bad[:5])
            + ("; ..." if len(bad) > 5 else "")
        )
    return out


def gold_classes(adaptive: AdaptiveSpec, questions: Sequence[Question], where: str = "adaptive") -> dict[str, str]:
    """qid -> class for every question. A type (or file label) that maps to no class, or a question with
    none, takes ``default_class``; without one it is an error naming the types and the field to fix."""
    mapping = adaptive.type_to_class()
    file_labels = read_labels_file(adaptive.labels_file, where) if adaptive.labels_file is not None else None
    out: dict[str, str] = {}
    unmapped: Counter = Counter()
    for q in questions:
        t = file_labels.get(q.qid) if file_labels is not None else q.qtype
        cls = mapping.get(t) if t is not None else None
        if cls is None:
            cls = adaptive.default_class
        if cls is None:
            unmapped[t] += 1
            continue
        out[q.qid] = cls
    if unmapped:
        none = unmapped.pop(None, 0)
        parts = [f"{t!r} ({n})" for t, n in sorted(unmapped.items())]
        if none:
            parts.append(f"{none} question(s) with no {'label in the file' if file_labels is not None else 'type'}")
        field = "labels_file" if file_labels is not None and none and not unmapped else "labels"
        raise RagsweepError(
            f"{where}.{field}: no class for {', '.join(parts)}; map them in {where}.labels "
            f"(classes {sorted(adaptive.classes)}) or set {where}.default_class"
        )
    return out
