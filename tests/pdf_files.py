"""Small valid PDFs written byte by byte, for the loaders' tests (no PDF library needed)."""

from __future__ import annotations


def paged_pdf(pages: list[str], roman_labels: bool = False) -> bytes:
    """A valid PDF, one Helvetica text line per page (optionally labelled i, ii, ...), xref computed."""
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages)))
    labels = " /PageLabels << /Nums [0 << /S /r >>] >>" if roman_labels else ""
    objs = [
        f"<< /Type /Catalog /Pages 2 0 R{labels} >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, text in enumerate(pages):
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET"
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>"
        )
        objs.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    out, offsets = b"%PDF-1.4\n", []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out
