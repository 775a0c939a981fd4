"""The postprocessor axis of the grid: each configuration once per postprocessor that applies to it."""

from __future__ import annotations

from dataclasses import replace


def postprocessor_axis(spec, configs: list) -> list:
    """Each configuration once per postprocessor that applies to it (``none`` keeps it as it is: same
    id, same hash); a postprocessed one's id gains the label before its top_k
    (``sentence512-minilm-vector-cut0.5-k5``)."""
    from ragsweep.config.base import absent
    from ragsweep.config.postprocessors import postprocessors_for

    out = []
    for c in configs:
        for post in postprocessors_for(spec, c.splitter, c.retriever, c.reranker, c.query_transform):
            if absent(post):
                out.append(c)
                continue
            tail = f"-k{c.top_k}"
            cid = (
                f"{c.config_id[: -len(tail)]}-{post.label()}{tail}"
                if c.config_id.endswith(tail)
                else f"{c.config_id}-{post.label()}"
            )
            out.append(replace(c, config_id=cid, postprocessor=post))
    return out
