"""Page numbers of a character range, for documents made of pages (PDFs).

A PDF becomes one ``Document`` whose text is its pages joined by a blank line; the loader records
where each page starts (``metadata["page_starts"]``) and the PDF's page labels
(``metadata["page_labels"]``). Pages are looked up from offsets when needed rather than stored
with chunks, so chunks, indexes and caches made before page numbers existed stay valid.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragsweep.datasets.types import Dataset


def page_range(page_starts: Sequence[int], start: int, end: int) -> tuple[int, int]:
    """0-based indexes of the first and last page that ``[start, end)`` touches (the blank line
    joining two pages belongs to the earlier one)."""
    first = max(bisect_right(page_starts, start) - 1, 0)
    last = max(bisect_right(page_starts, max(start, end - 1)) - 1, first)
    return first, last


def page_label(metadata: dict, start: int, end: int) -> str | None:
    """``"3"`` or ``"3-4"`` (the PDF's own labels, e.g. ``"iv"``) for a span of a paged document;
    None for a document without pages."""
    starts = metadata.get("page_starts")
    if not starts:
        return None
    labels = metadata.get("page_labels") or [str(i + 1) for i in range(len(starts))]
    first, last = page_range(starts, start, end)
    return labels[first] if first == last else f"{labels[first]}-{labels[last]}"


def page_field(dataset: Dataset, doc_id: str | None, start: int | None, end: int | None) -> dict[str, str]:
    """``{"page": label}`` for a retrieved span of a paged document, else ``{}`` (no key at all, so the
    sources of other documents stay exactly as they were)."""
    if doc_id is None or start is None or end is None:
        return {}
    try:
        doc = dataset.document(doc_id)
    except KeyError:
        return {}
    label = page_label(doc.metadata, start, end)
    return {} if label is None else {"page": label}
