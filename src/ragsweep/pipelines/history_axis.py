"""The history axis of the grid: each configuration once per ``history`` mode."""

from __future__ import annotations

from dataclasses import replace


def history_axis(spec, configs: list) -> list:
    """Each configuration once per history mode (``none`` keeps it as it is: same id, same hash); another mode's
    id gains its label before the top_k (``sentence512-minilm-vector-concat-k5``), and a mode that asks the LLM
    makes it a configuration that calls the LLM while retrieving (``rewrite_llm``)."""
    from ragsweep.config.base import absent
    from ragsweep.llm.identity import llm_identity

    out = []
    for c in configs:
        for mode in spec.history:
            if absent(mode):
                out.append(c)
                continue
            tail = f"-k{c.top_k}"
            cid = (
                f"{c.config_id[: -len(tail)]}-{mode.label()}{tail}"
                if c.adaptive is None and c.config_id.endswith(tail)
                else f"{c.config_id}-{mode.label()}"
            )
            rewrite = c.rewrite_llm
            if mode.uses_llm and rewrite is None and spec.llm is not None:
                rewrite = llm_identity(spec.llm)
            out.append(replace(c, config_id=cid, history=mode, rewrite_llm=rewrite))
    return out
