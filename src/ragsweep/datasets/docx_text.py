"""The text of a Word (.docx) file, read with python-docx.

Body paragraphs and tables in document order, one line each; a table row is one line with its
cells joined by a tab (a cell's own line breaks become spaces, a merged cell counts once).
Headers, footers, comments and text boxes are left out. The result is a pure function of the
file, so evidence offsets into it stay valid from run to run.
"""

from __future__ import annotations

from pathlib import Path


def docx_text(path: Path) -> str:
    """Paragraphs and table rows of ``path``'s body, joined by newlines."""
    import docx
    from docx.table import Table

    lines: list[str] = []
    for block in docx.Document(str(path)).iter_inner_content():
        if isinstance(block, Table):
            lines.extend(_row_text(row) for row in block.rows)
        else:
            lines.append(block.text)
    return "\n".join(lines)


def _row_text(row) -> str:
    cells, seen = [], set()
    for cell in row.cells:  # a horizontally merged cell is repeated once per grid column it spans
        if id(cell._tc) in seen:
            continue
        seen.add(id(cell._tc))
        cells.append(" ".join(cell.text.split()))
    return "\t".join(cells)
