"""The spans themselves: OpenTelemetry's SDK and OTLP/HTTP exporter (the ``tracing`` extra), imported only when
tracing is on. Attribute names follow OpenInference's semantic conventions (``openinference.span.kind``,
``input.value``, ``retrieval.documents.N.document.*``, ``llm.token_count.*``, ``session.id``), which Phoenix reads.

A span is written once its work is done, from the record the stage wrote: its end is now and its start is now less
the measured time, and its children are laid out in the order the work ran (retrieval with the query's embedding
and the rerank at its end, then the generation). An LLM answer in a sweep is generated after every question was
retrieved, so its trace is that question's own timeline, not the wall clock's."""

from __future__ import annotations

import json
import time
from typing import Any, NamedTuple

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

KIND = "openinference.span.kind"
MS = 1_000_000  # nanoseconds
SOURCE_META = ("doc_id", "rank", "start", "end", "page", "rank_vector", "rank_bm25", "rank_graph", "rank_base")


def _label(part: Any) -> str | None:
    """A configuration part's label (embedding, reranker, transform), or None when it has none."""
    if part is None:
        return None
    label = getattr(part, "label", None)
    return str(label()) if callable(label) else str(part)


def _ms(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _llm_attrs(use: dict | None, model: str | None = None) -> dict[str, Any]:
    """Tokens and times of a unit's LLM calls (``usage.Trace.as_dict``): OpenInference's token counts, ragsweep's
    service time and queue wait (the split the LLM engine records per call)."""
    if not use:
        return {}
    p, c = int(use.get("prompt_tokens") or 0), int(use.get("completion_tokens") or 0)
    out: dict[str, Any] = {
        "llm.token_count.prompt": p,
        "llm.token_count.completion": c,
        "llm.token_count.total": p + c,
        "ragsweep.llm.calls": int(use.get("llm_calls") or 0),
        "ragsweep.llm.cached": int(use.get("llm_cached") or 0),
        "ragsweep.llm.wall_ms": _ms(use.get("llm_ms")),
        "ragsweep.llm.service_ms": _ms(use.get("llm_service_ms")),
        "ragsweep.llm.queue_ms": _ms(use.get("llm_queue_ms")),
    }
    if use.get("cost_usd") is not None:
        out["llm.cost.total"] = float(use["cost_usd"])
    if model:
        out["llm.model_name"] = model
    return out


def _documents(sources: list[dict], texts: dict[str, str]) -> dict[str, Any]:
    """OpenInference's retrieval documents: node id, score, text (where the nodes are at hand) and metadata (the
    document, its offsets and the node's rank in the result and in each retriever)."""
    out: dict[str, Any] = {}
    for i, s in enumerate(sources):
        key = f"retrieval.documents.{i}.document"
        out[f"{key}.id"] = str(s.get("node_id"))
        if s.get("score") is not None:
            out[f"{key}.score"] = float(s["score"])
        if s.get("node_id") in texts:
            out[f"{key}.content"] = texts[s["node_id"]]
        meta = {k: s[k] for k in SOURCE_META if s.get(k) is not None}
        out[f"{key}.metadata"] = json.dumps(meta, sort_keys=True, default=str)
    return out


class _Answered(NamedTuple):
    """One answered (configuration, question): its record and the attributes every one of its spans carries."""

    config: Any
    question: Any
    record: dict
    common: dict


class SpanWriter:
    """One process's tracer: a private provider (the process-wide one is left to the application) sending to
    ``url`` in batches, under the Phoenix project ``project`` (``exporter``: another one, for the tests)."""

    def __init__(self, url: str, project: str, session: str, exporter: Any = None) -> None:
        self.key = (url, project, session)
        self.session = session
        resource = Resource.create({"service.name": "ragsweep", "openinference.project.name": project})
        self.provider = TracerProvider(resource=resource)
        self.provider.add_span_processor(BatchSpanProcessor(exporter or OTLPSpanExporter(endpoint=url)))
        self.tracer = self.provider.get_tracer("ragsweep")

    def same(self, url: str, project: str, session: str) -> bool:
        return self.key == (url, project, session)

    def flush(self, timeout_s: float = 30.0) -> None:
        self.provider.force_flush(timeout_millis=int(timeout_s * 1000))

    def close(self) -> None:
        self.provider.shutdown()

    def _span(self, name: str, start: int, attrs: dict[str, Any], parent: Any = None) -> Any:
        ctx = trace.set_span_in_context(parent) if parent is not None else None
        return self.tracer.start_span(name, context=ctx, start_time=start, attributes=attrs)

    def _common(self, config: Any, question: Any) -> dict[str, Any]:
        ids = {"config_id": config.config_id, "config_hash": config.config_hash, "qid": question.qid}
        return {
            "session.id": self.session,
            "metadata": json.dumps(ids, sort_keys=True),
            "ragsweep.config_id": config.config_id,
            "ragsweep.qid": question.qid,
        }

    def answer(self, config: Any, question: Any, record: dict, nodes: list | None) -> None:
        """The CHAIN span of one (configuration, question) and its children, ending now."""
        end = time.time_ns()
        retrieval = _ms(record.get("retrieval_ms"))
        generation = _ms(record.get("generation_wall_ms") or record.get("generation_ms"))
        start = end - int((retrieval + generation) * MS)
        common = self._common(config, question)
        chain = {
            **common,
            KIND: "CHAIN",
            "input.value": question.question,
            "output.value": record.get("answer") or "",
            "ragsweep.generator": str(record.get("generator") or ""),
        }
        if record.get("error"):
            chain["ragsweep.error"] = str(record["error"])
        root = self._span("rag_query", start, chain)
        retrieved = start + int(retrieval * MS)
        answered = _Answered(config, question, record, common)
        self._retrieval(root, answered, nodes, start, retrieved)
        self._generation(root, answered, retrieved, end)
        root.end(end_time=end)

    def _retrieval(self, root, answered: _Answered, nodes, start: int, end: int) -> None:
        config, question, record, common = answered
        texts = {n.node.node_id: n.node.get_content() for n in nodes or [] if hasattr(n, "node")}
        sources = record.get("sources") or []
        attrs = {**common, KIND: "RETRIEVER", "input.value": question.question, **_documents(sources, texts)}
        attrs["ragsweep.retrieval_ms"] = _ms(record.get("retrieval_ms"))
        span = self._span("retrieve", start, attrs, root)
        if record.get("query_embedding_ms") is not None:
            emb = {**common, KIND: "EMBEDDING", "input.value": question.question}
            model = _label(config.embedding)
            if model:
                emb["embedding.model_name"] = model
            child = self._span("embed_query", start, emb, span)
            child.end(end_time=start + int(_ms(record["query_embedding_ms"]) * MS))
        transformed = record.get("transformed_queries") or record.get("expanded_query")
        if transformed or record.get("transform_llm"):
            out = transformed if isinstance(transformed, str) else json.dumps(transformed or [])
            tr = {**common, KIND: "CHAIN", "input.value": question.question, "output.value": out}
            tr.update(_llm_attrs(record.get("transform_llm")))
            tr["ragsweep.transform"] = _label(config.query_transform) or ""
            child = self._span("query_transform", start, tr, span)
            child.end(end_time=start + int(_ms((record.get("transform_llm") or {}).get("llm_ms")) * MS))
        if record.get("rerank_ms") is not None:
            rr = {**common, KIND: "RERANKER", "reranker.query": question.question}
            rr["reranker.model_name"] = _label(config.reranker) or ""
            rr["reranker.top_k"] = len(sources)
            rr.update(
                {
                    f"reranker.output_documents.{k[len('retrieval.documents.') :]}": v
                    for k, v in _documents(sources, {}).items()
                }
            )
            rr.update(_llm_attrs(record.get("rerank_llm")))
            rstart = max(start, end - int(_ms(record["rerank_ms"]) * MS))
            child = self._span("rerank", rstart, rr, span)
            child.end(end_time=end)
        span.end(end_time=end)

    def _generation(self, root, answered: _Answered, start: int, end: int) -> None:
        _, question, record, common = answered
        if "answer" not in record:
            return
        use = record.get("llm")
        if use is None:  # the extractive baseline: sentences of the context, no model
            attrs = {**common, KIND: "CHAIN", "output.value": record.get("answer") or ""}
            span = self._span("extractive_answer", start, attrs, root)
            span.end(end_time=end)
            return
        model = str(record.get("generator") or "").removeprefix("llm:") or None
        attrs = {**common, KIND: "LLM", "input.value": question.question, "output.value": record.get("answer") or ""}
        attrs.update(_llm_attrs(use, model))
        attrs["ragsweep.generation_ms"] = _ms(record.get("generation_ms"))
        attrs["ragsweep.generation_queue_ms"] = _ms(record.get("generation_queue_ms"))
        attrs["ragsweep.truncated"] = bool(record.get("truncated"))
        span = self._span("generate", start, attrs, root)
        span.end(end_time=end)

    def judgement(self, config: Any, question: Any, judge: str, repeat: int, result: dict, use: Any) -> None:
        """One EVALUATOR span per judgement (a repeat is its own), ending now, as long as its calls' wall time."""
        end = time.time_ns()
        wall = _ms((use or {}).get("llm_ms"))
        verdict = {k: result.get(k) for k in ("status", "score", "passing", "reason") if result.get(k) is not None}
        attrs = {
            **self._common(config, question),
            KIND: "EVALUATOR",
            "input.value": question.question,
            "output.value": json.dumps(verdict, sort_keys=True, default=str),
            "ragsweep.judge": judge,
            "ragsweep.repeat": repeat,
            **_llm_attrs(use),
        }
        if isinstance(result.get("score"), int | float):
            attrs["ragsweep.judge.score"] = float(result["score"])
        span = self._span(f"judge:{judge}", end - int(wall * MS), attrs)
        span.end(end_time=end)
