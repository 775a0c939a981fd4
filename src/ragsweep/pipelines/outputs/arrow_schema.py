"""A frame's Arrow schema, one column at a time.

``pyarrow.Schema.from_pandas`` converts every column of the frame to Arrow to learn its types, and holds them all
at once: for contractnli x4's records (70,344 rows) a single 1.0 GB allocation, the outputs' peak (memray, BENCHMARKS
"Cost against corpus size"). Asked one column at a time, it gives the same fields and the same pandas metadata,
holding one column's conversion at a time.
"""

from __future__ import annotations

import json


def frame_schema(frame):
    """``pyarrow.Schema.from_pandas(frame, preserve_index=False)``, computed column by column."""
    import pyarrow as pa

    if frame.shape[1] == 0:
        return pa.Schema.from_pandas(frame, preserve_index=False)
    fields = []
    meta: dict | None = None
    for i in range(frame.shape[1]):
        one = pa.Schema.from_pandas(frame.iloc[:, [i]], preserve_index=False)
        fields.append(one.field(0))
        pandas = json.loads(one.metadata[b"pandas"])
        if meta is None:
            meta = pandas
        else:
            meta["columns"].extend(pandas["columns"])
    return pa.schema(fields, metadata={b"pandas": json.dumps(meta).encode("utf-8")})
