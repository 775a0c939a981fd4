"""Fail at start-up, not mid-sweep: keys, servers, BERTScore backbone, prices, prompt files."""

from __future__ import annotations

import os

from ragsweep.config import SweepSpec
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.grid import Configuration
from ragsweep.pipelines.stages.graph import uses_neo4j
from ragsweep.redact import redact_url


def preflight(
    spec: SweepSpec, configs: list[Configuration], budget: float | None = None, facts: str | None = None
) -> str:
    """An API key not set, a Chroma server that does not answer, a BERTScore backbone without a layer,
    a model without a price under ``--budget``, a judge template without its placeholders: one line,
    before any work. Returns the BERTScore settings key scores are stored under."""
    from ragsweep.embeddings.factory import require_api_key
    from ragsweep.evaluation.bertscore import scorer_settings
    from ragsweep.llm.clients import check_llms

    check_llms(spec, budget)
    check_llm_settings(spec)
    check_context_windows(spec, facts)

    for emb in embeddings_in_use(configs):
        require_api_key(emb)
    if spec.vector_store.url and any(c.embedding is not None for c in configs):
        from ragsweep.retrievers.chroma import client_for

        client_for(None, spec.vector_store.url)
    if uses_neo4j(configs):
        from ragsweep.graphs.neo4j_store import preflight as neo4j_preflight

        neo4j_preflight(spec.neo4j)
    return scorer_settings(spec.scoring.bertscore, spec.seed).key


def check_llm_settings(spec: SweepSpec) -> None:
    """The LLM parts of a spec that need files or metric names: prompt placeholders, select_metric
    (also run by ``--dry-run``, which must refuse what the run would refuse)."""
    from ragsweep.pipelines.outputs.columns import SELECTABLE_METRICS

    judged = judge_metrics(spec)  # a configured judge's figures: chosen on the judged validation questions
    if spec.scoring.metric is not None and spec.scoring.metric not in SELECTABLE_METRICS + judged:
        raise RagsweepError(
            f"scoring.metric: unknown metric {spec.scoring.metric!r}; choose one of "
            f"{', '.join(SELECTABLE_METRICS + judged)}"
        )
    if spec.stage2 is not None:
        from ragsweep.evaluation.judges import check_prompt_files
        from ragsweep.pipelines.outputs.columns import SELECTABLE_METRICS

        check_prompt_files(spec.stage2.prompts)
        if spec.stage2.select_metric not in SELECTABLE_METRICS:
            raise RagsweepError(
                f"stage2.select_metric: unknown metric {spec.stage2.select_metric!r}; "
                f"choose one of {', '.join(SELECTABLE_METRICS)}"
            )
    if spec.generator.calls_llm:
        from ragsweep.pipelines.generator_prompts import check_templates

        check_templates(spec.generator)


def check_context_windows(spec: SweepSpec, remember: str | None = None) -> None:
    """An LLM whose ``context_window`` is larger than its server says it holds: LlamaIndex would pack prompts
    the server refuses (or, Ollama, silently truncates), so say it before any work."""
    from ragsweep.llm.clients import api_key_for, llms_in_use
    from ragsweep.llm.server_info import probe

    for role, llm in llms_in_use(spec):
        info = probe(llm.base_url, llm.model, api_key_for(llm, role), llm.context_window, llm.timeout, remember)
        if info.context_window is not None and llm.context_window > info.context_window:
            raise RagsweepError(
                f"{role}.context_window: {llm.context_window} tokens, but the server at "
                f"{redact_url(llm.base_url or '')} holds {info.context_window} ({info.source}); set "
                f"{role}.context_window: {info.context_window}, or start the server with a larger context"
            )


def judge_metrics(spec: SweepSpec) -> list[str]:
    """The figures of stage 2's judges (``correctness``, ``correctness_pass``, ...), none without stage 2."""
    from ragsweep.metrics.catalogue import CATALOGUE

    judges = set(spec.stage2.judges) if spec.stage2 is not None else set()
    return [m.name for m in CATALOGUE if m.judge in judges]


def context_notes(spec: SweepSpec, remember: str | None = None) -> list[str]:
    """A line per local server whose context window could not be learnt (it states none, and is no
    llama-cpp-python): the window is unknown, and a configuration stops at its first prompt refused as too long."""
    from ragsweep.llm.clients import api_key_for, llms_in_use
    from ragsweep.llm.server_info import is_local, probe

    out = []
    for role, llm in llms_in_use(spec):
        info = probe(llm.base_url, llm.model, api_key_for(llm, role), llm.context_window, llm.timeout, remember)
        if is_local(llm.base_url) and info.context_window is None and info.source is None:
            out.append(
                f"the server at {redact_url(llm.base_url or '')} states no context window and none could be learnt: "
                f"{role}.context_window {llm.context_window} is taken on trust; a configuration whose prompt it "
                "refuses as too long stops there (its other answers are not sent)"
            )
    return list(dict.fromkeys(out))


def embeddings_in_use(configs: list[Configuration]) -> list:
    used = {}
    for c in configs:
        for emb in (c.embedding, c.chunk_embedding):
            if emb is not None:
                used[emb.label()] = emb
    return list(used.values())


def secret_values(spec: SweepSpec, configs: list[Configuration]) -> tuple[str, ...]:
    """The API keys (LLMs, embeddings) and the Neo4j password in use, read from the environment, and the
    credentials any URL of the spec holds, so they can be scrubbed from stored errors."""
    from ragsweep.llm.clients import secret_values as llm_secrets

    names = sorted({e.api_key_env for e in embeddings_in_use(configs) if getattr(e, "api_key_env", None)})
    if uses_neo4j(configs) and spec.neo4j is not None:
        names.append(spec.neo4j.password_env)
    return tuple(v for v in (os.environ.get(name, "") for name in names) if len(v) >= 4) + llm_secrets(spec)
