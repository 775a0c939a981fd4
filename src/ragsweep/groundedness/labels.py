"""Human labels for judge meta-evaluation: one JSON object per line.

Fields: ``question``, ``contexts`` (the passages the answer was written from), ``answer``, and at least one
label: ``grounded`` (true/false, or "yes"/"no": every claim of the answer is supported by the contexts)
and/or ``correctness`` (1-5 against ``reference_answer``). Optional: ``id``, ``reference_answer`` (the
correctness judge needs it), ``category`` (reported per category, e.g. supported / unsupported /
misattributed / partly_supported), and ``config_id`` + ``qid`` (labels of a run's answers, for PPI).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragsweep.errors import RagsweepError

DEMO_LABELS = Path(__file__).resolve().parents[1] / "datasets" / "demo" / "groundedness.jsonl"
_KNOWN = {
    "id",
    "question",
    "contexts",
    "answer",
    "grounded",
    "correctness",
    "reference_answer",
    "category",
    "config_id",
    "qid",
}


@dataclass(frozen=True)
class LabelledItem:
    id: str
    question: str
    contexts: tuple[str, ...]
    answer: str
    grounded: bool | None = None
    correctness: float | None = None
    reference_answer: str | None = None
    category: str | None = None
    config_id: str | None = None
    qid: str | None = None


def parse_grounded(v, where: str) -> bool | None:
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("yes", "no", "true", "false"):
        return v.strip().lower() in ("yes", "true")
    raise RagsweepError(f'{where}: field \'grounded\' must be true/false or "yes"/"no", got {v!r}')


def load_labels(path: str | Path) -> list[LabelledItem]:
    """The items of a labels file (``demo``: the shipped set); every bad line is reported at once."""
    from ragsweep.datasets.jsonl_corpus import iter_jsonl

    path = DEMO_LABELS if str(path) == "demo" else Path(path)
    errors: list[str] = []
    items: list[LabelledItem] = []
    seen: set[str] = set()
    for n, obj in iter_jsonl(path, errors):
        where = f"{path}:line {n}"
        try:
            unknown = sorted(set(obj) - _KNOWN)
            if unknown:
                raise RagsweepError(
                    f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(_KNOWN))}"
                )
            for key in ("question", "answer"):
                if not isinstance(obj.get(key), str) or not obj[key].strip():
                    raise RagsweepError(f"{where}: field {key!r} must be a non-empty string")
            ctx = obj.get("contexts")
            if not isinstance(ctx, list) or not ctx or not all(isinstance(c, str) for c in ctx):
                raise RagsweepError(
                    f"{where}: field 'contexts' must be a non-empty list of strings (the passages "
                    "the answer was written from)"
                )
            corr = obj.get("correctness")
            if corr is not None and (
                isinstance(corr, bool) or not isinstance(corr, (int, float)) or not 1 <= corr <= 5
            ):
                raise RagsweepError(f"{where}: field 'correctness' must be a number from 1 to 5, got {corr!r}")
            grounded = parse_grounded(obj.get("grounded"), where)
            if grounded is None and corr is None:
                raise RagsweepError(f"{where}: no label; give 'grounded' (true/false) and/or 'correctness' (1-5)")
            item_id = str(obj.get("id", f"line{n}"))
            if item_id in seen:
                raise RagsweepError(f"{where}: id {item_id!r} is used twice; ids must be unique")
            seen.add(item_id)
            items.append(
                LabelledItem(
                    item_id,
                    obj["question"],
                    tuple(ctx),
                    obj["answer"],
                    grounded,
                    None if corr is None else float(corr),
                    obj.get("reference_answer"),
                    obj.get("category"),
                    obj.get("config_id"),
                    obj.get("qid"),
                )
            )
        except RagsweepError as exc:
            errors.append(str(exc))
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise RagsweepError(errors[0] + more)
    if not items:
        raise RagsweepError(f"{path}: no labelled items; see docs/judges.md ('Judges you can trust') for the format")
    return items
