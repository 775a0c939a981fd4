"""Tracing (issue 42): a small sweep's and a served query's spans sent to a real Arize Phoenix server
(``scripts/phoenix-server.sh``: Phoenix on loopback; ``.ci/run`` starts it) and read back through Phoenix's REST
API, compared with what the run recorded; and a sweep without tracing that never loads ragsweep's tracer."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import uuid

import httpx
import pytest
from conftest import BASE_SPEC, SENTENCE256, describe, seed_cache
from phoenix_spans import documents, spans_of
from served_app import running

import ragsweep

KEY = "sk-tracing-test"


@pytest.fixture(scope="module")
def traced(phoenix_url, make_spec, run_cli, shared_cache, base_run, tmp_path_factory):
    """A small traced sweep: BM25 and vector, LLM answers and a judge from the scripted OpenAI server, whose spans
    go to a project of its own; the server stays up for the served query."""
    from fake_openai import FakeOpenAI

    project = f"ragsweep-test-{uuid.uuid4().hex[:8]}"
    fake = FakeOpenAI(api_key=KEY).start()
    try:
        spec = make_spec(
            "traced",
            splitters=[SENTENCE256],
            retrievers=[{"kind": "bm25"}, {"kind": "vector"}],
            top_k=[3],
            generator={"kind": "llm"},
            llm={"model": "trace-model", "base_url": fake.base_url, "api_key_env": "TRACE_KEY", "concurrency": 4},
            stage2={"judges": ["correctness"], "top_n": 1, "max_configs": 1},
            tracing={"otlp": f"{phoenix_url}/v1/traces", "project": project},
        )
        cache = seed_cache(tmp_path_factory.mktemp("traced-cache"), shared_cache)
        proc = run_cli("run", spec.path, "--cache", cache, "--limit", 6, env={"TRACE_KEY": KEY})
        assert proc.returncode == 0, describe(proc)
        os.environ["TRACE_KEY"] = KEY  # the served pipeline's generator
        yield phoenix_url, project, spec, proc
    finally:
        os.environ.pop("TRACE_KEY", None)
        fake.stop()


def _journal(run_dir, table: str) -> list[tuple]:
    with sqlite3.connect(run_dir / "journal.sqlite") as db:
        rows = db.execute(
            f"SELECT config_id, qid, payload FROM {table}"
            if table == "answer"
            else "SELECT a.config_id, j.qid, j.judge FROM judgement j JOIN answer a "
            "ON a.config_hash = j.config_hash AND a.qid = j.qid"
        ).fetchall()
    db.close()
    return rows


def test_a_sweep_sends_one_chain_per_question_and_configuration(traced, read_run):
    url, project, spec, proc = traced
    run = read_run(spec.run_dir, proc)
    records = run.records
    spans = spans_of(url, project, lambda s: sum(x["span_kind"] == "CHAIN" for x in s) >= len(records))
    chains = [s for s in spans if s["span_kind"] == "CHAIN" and s["name"] == "rag_query"]
    key = {(s["attributes"]["ragsweep.config_id"], s["attributes"]["ragsweep.qid"]): s for s in chains}
    assert len(chains) == len(key) == len(records) == 2 * 6
    children: dict[str, list[dict]] = {}
    for s in spans:
        children.setdefault(s["parent_id"], []).append(s)
    for row in records.itertuples():
        chain = key[(row.config_id, row.qid)]
        a = chain["attributes"]
        assert a["input.value"] == row.question and a["output.value"] == row.answer
        assert a["session.id"] == spec.name
        kids = {c["span_kind"]: c for c in children[chain["context"]["span_id"]]}
        docs = documents(kids["RETRIEVER"])
        assert [d["id"] for d in docs] == [s["node_id"] for s in row.sources]
        assert [d["score"] for d in docs] == pytest.approx([s["score"] for s in row.sources])
        meta = [d["metadata"] for d in docs]
        assert [m["rank"] for m in meta] == [s["rank"] for s in row.sources]
        assert [m["doc_id"] for m in meta] == [s["doc_id"] for s in row.sources]
        assert all(d["content"] for d in docs)
        llm = kids["LLM"]["attributes"]
        assert llm["llm.model_name"] == "trace-model" and llm["output.value"] == row.answer
        assert llm["llm.token_count.prompt"] == row.prompt_tokens > 0
        assert llm["llm.token_count.completion"] == row.completion_tokens
        assert llm["ragsweep.llm.queue_ms"] == pytest.approx(row.generation_queue_ms)
        assert llm["ragsweep.llm.service_ms"] == pytest.approx(row.generation_ms)
        if row.config_id.endswith("vector-k3"):  # the question's embedding, inside the retrieval
            assert "EMBEDDING" in {c["span_kind"] for c in children[kids["RETRIEVER"]["context"]["span_id"]]}


def test_each_judgement_is_an_evaluator_span(traced):
    url, project, spec, _ = traced
    judged = _journal(spec.run_dir, "judgement")
    assert judged
    spans = spans_of(url, project, lambda s: sum(x["span_kind"] == "EVALUATOR" for x in s) >= len(judged))
    evaluators = [s["attributes"] for s in spans if s["span_kind"] == "EVALUATOR"]
    assert sorted((a["ragsweep.config_id"], a["ragsweep.qid"], a["ragsweep.judge"]) for a in evaluators) == sorted(
        judged
    )
    for a in evaluators:
        assert a["llm.token_count.prompt"] > 0 and "ragsweep.llm.queue_ms" in a and "ragsweep.llm.service_ms" in a
        assert json.loads(a["output.value"])["status"]


def test_a_served_query_is_traced(traced, run_cli, tmp_path, monkeypatch):
    """The export keeps the sweep's project, not its collector: the operator names one (the standard variable)."""
    from ragsweep.serve import make_app

    url, project, spec, _ = traced
    cid = "sentence256-minilm-vector-k3"
    folder = tmp_path / cid
    proc = run_cli("export", spec.run_dir, cid, "--out", folder)
    assert proc.returncode == 0, describe(proc)
    exported = json.loads((folder / "pipeline.json").read_text())["spec"]["tracing"]
    assert exported == {"otlp": None, "project": project, "session": None}
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
    question = f"Who may terminate the lease? ({uuid.uuid4().hex[:6]})"
    pipeline = ragsweep.load_pipeline(folder)
    try:
        with running(make_app(pipeline)) as served:
            body = httpx.post(f"{served}/query", json={"question": question}, timeout=120).json()
    finally:
        pipeline.close()  # sends what is buffered

    def mine(spans: list[dict]) -> list[dict]:
        return [s for s in spans if s["attributes"].get("input.value") == question and s["span_kind"] == "CHAIN"]

    spans = spans_of(url, project, lambda s: bool(mine(s)))
    (chain,) = mine(spans)
    assert chain["attributes"]["session.id"] == "live" and chain["attributes"]["ragsweep.config_id"] == cid
    assert chain["attributes"]["output.value"] == body["answer"]
    (retriever,) = [s for s in spans if s["parent_id"] == chain["context"]["span_id"] and s["span_kind"] == "RETRIEVER"]
    docs = documents(retriever)
    assert [(d["metadata"]["doc_id"], d["metadata"]["start"], d["metadata"]["rank"]) for d in docs] == [
        (s["doc_id"], s["start"], s["rank"]) for s in body["sources"]
    ]
    assert [d["score"] for d in docs] == pytest.approx([s["score"] for s in body["sources"]])
    assert [d["content"] for d in docs] == [s["text"] for s in body["sources"]]


def test_without_tracing_a_sweep_never_loads_the_tracer(make_spec, shared_cache, base_run, tmp_path):
    """Off costs one check per hook: ragsweep's tracer and the OTLP/HTTP exporter are never imported (Chroma
    imports OpenTelemetry's SDK for its own telemetry, so the SDK alone says nothing)."""
    spec = make_spec("untraced", splitters=[SENTENCE256], retrievers=[{"kind": "bm25"}], top_k=[3])
    cache = seed_cache(tmp_path / "cache", shared_cache)
    watched = ("ragsweep.tracing.", "opentelemetry.exporter.otlp.proto.http")
    script = (
        "import sys\n"
        "from ragsweep.api import sweep\n"
        f"sweep({str(spec.path)!r}, cache={str(cache)!r}, limit=4, progress=False)\n"
        f"print(sorted(m for m in sys.modules if m.startswith({watched!r})))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_rerank_and_transform_steps_are_children_of_the_retrieval():
    """The steps a configuration has beyond retrieval, from a record as the answer stage writes it (no server)."""
    from types import SimpleNamespace

    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from ragsweep.config import CrossEncoderSpec, RM3Spec
    from ragsweep.tracing.spans import SpanWriter

    config = SimpleNamespace(
        config_id="c1",
        config_hash="h1",
        embedding=None,
        reranker=CrossEncoderSpec(kind="cross_encoder", model="cross-encoder/ms-marco-MiniLM-L-6-v2"),
        query_transform=RM3Spec(kind="rm3"),
    )
    question = SimpleNamespace(qid="q1", question="Who may terminate the lease?")
    sources = [{"rank": 1, "node_id": "n1", "doc_id": "d", "start": 0, "end": 9, "score": 0.9, "rank_base": 3}]
    record = {
        "sources": sources,
        "retrieval_ms": 12.0,
        "rerank_ms": 5.0,
        "expanded_query": "terminate lease landlord",
        "answer": "The landlord.",
        "generation_ms": 1.0,
    }
    memory = InMemorySpanExporter()
    writer = SpanWriter("http://127.0.0.1:9/v1/traces", "p", "s", exporter=memory)
    writer.answer(config, question, record, None)
    writer.flush()
    spans = {s.name: s for s in memory.get_finished_spans()}
    writer.close()
    assert set(spans) == {"rag_query", "retrieve", "query_transform", "rerank", "extractive_answer"}
    retrieve = spans["retrieve"].context.span_id
    assert spans["rerank"].parent.span_id == spans["query_transform"].parent.span_id == retrieve
    rerank = spans["rerank"].attributes
    assert rerank["openinference.span.kind"] == "RERANKER" and rerank["reranker.output_documents.0.document.id"] == "n1"
    assert json.loads(rerank["reranker.output_documents.0.document.metadata"])["rank_base"] == 3
    assert spans["query_transform"].attributes["output.value"] == "terminate lease landlord"
    assert spans["rerank"].end_time - spans["rerank"].start_time == 5_000_000  # the measured rerank time
    assert spans["rag_query"].end_time - spans["rag_query"].start_time == 13_000_000


def test_a_collector_that_does_not_answer_is_one_line_and_no_tracing(get_free_port, capsys, monkeypatch):
    from ragsweep import tracing
    from ragsweep.config import TracingSpec

    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    url = f"http://127.0.0.1:{get_free_port()}/v1/traces"
    stop = tracing.start(TracingSpec(otlp=url), "p", "s")
    assert not tracing.active()
    stop()
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("warning: tracing is off: no trace collector answers at http://127.0.0.1:")
    assert tracing.start(TracingSpec(otlp=url), "p", "s") is tracing.flush  # said once: a serve worker's twin
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://user:CANARY-9f2@127.0.0.1:{get_free_port()}")
    tracing.start(None, "p", "s")
    err = capsys.readouterr().err
    assert "tracing is off" in err and "CANARY-9f2" not in err  # the variable's credentials are not printed
    with pytest.raises(ValueError, match="without credentials or a query"):
        TracingSpec(otlp="http://collector:4318/v1/traces?api_key=CANARY")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")
    assert tracing.endpoint(None) == "http://collector:4318/v1/traces"
    assert tracing.endpoint(TracingSpec(otlp="http://a:1/v1/traces")) == "http://a:1/v1/traces"


def test_ray_workers_trace_where_the_driver_does_and_never_get_its_credentials(monkeypatch, capsys):
    """``for_workers`` names the driver's endpoint, project and session in the spec the workers get; with tracing
    off on the driver, or an endpoint a spec may not carry (credentials from an OTEL_* variable), they get none,
    and the second says so once, redacted."""
    from types import SimpleNamespace

    from ragsweep import tracing
    from ragsweep.config import parse_spec

    spec = parse_spec({**BASE_SPEC, "tracing": {"project": "p"}})
    monkeypatch.setattr(tracing, "_WRITER", None)
    assert tracing.for_workers(spec).tracing.otlp is None
    monkeypatch.setattr(tracing, "_WRITER", SimpleNamespace(key=("http://127.0.0.1:6006/v1/traces", "p", "run-a")))
    named = tracing.for_workers(spec).tracing
    assert (named.otlp, named.project, named.session) == ("http://127.0.0.1:6006/v1/traces", "p", "run-a")
    secret = "https://user:tok-SECRET@collector.example/v1/traces"
    monkeypatch.setattr(tracing, "_WRITER", SimpleNamespace(key=(secret, "p", "run-a")))
    assert tracing.for_workers(spec).tracing.otlp is None
    assert tracing.for_workers(spec).tracing.otlp is None
    err = capsys.readouterr().err
    assert err.count("Ray workers send no spans") == 1 and "tok-SECRET" not in err
