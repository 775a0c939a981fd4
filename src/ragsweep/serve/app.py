"""The HTTP API of a loaded pipeline (FastAPI): ``POST /query`` (the answer and its sources: document, offsets,
page, score, text), ``POST /v1/chat/completions`` (OpenAI's chat format: the last user message is the question;
the answer is the assistant's message, the sources ride beside it), ``POST /v1/completions`` (the prompt is the
question), both streamed as server-sent events with ``stream: true`` (``openai_format``), ``GET /v1/models`` and
``GET /health``.

Questions are answered by a bounded pool of ``workers`` threads, each with a pipeline of its own (``pool``: the
given one and its twins; an LLM generator's calls run on each pipeline's own event loop), so up to ``workers``
questions are answered at once, the others queue, and none blocks the server's event loop. Every error is JSON
``{"error": {"message", "type"}}`` with one line: 400 for a request that cannot be read (strict types; a question
checked by ``questions``), 401/413 from ``limits.Guard``, 404 naming the routes, 405 for a wrong method, 422 for a
question the configuration cannot answer (too long for the LLM's context, say), 503 with ``Retry-After`` when more
questions wait than ``max_queue``, 500 for anything else, without a traceback on stderr; the server keeps serving.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException

from ragsweep.errors import RagsweepError
from ragsweep.serve import openai_format, relay
from ragsweep.serve.limits import MAX_BODY_BYTES, MAX_QUEUE, AnswerQueue, Busy, Guard
from ragsweep.serve.pool import PipelinePool
from ragsweep.serve.questions import BadRequest, chat_question, checked, completion_question, query_history
from ragsweep.serve.schema import ChatRequest, CompletionRequest, QueryRequest, QueryResponse, Source

ROUTES = "POST /query, POST /v1/chat/completions, POST /v1/completions, GET /v1/models, GET /health"


def make_app(
    pipeline,
    api_key: str | None = None,
    max_body: int = MAX_BODY_BYTES,
    max_queue: int = MAX_QUEUE,
    workers: int = 1,
) -> FastAPI:
    """The API over ``pipeline`` (a ``load_pipeline`` result); closing it is the caller's. ``api_key``: the bearer
    token every route but /health requires; ``max_body``: the largest request body, in bytes; ``max_queue``: the
    questions answered or waiting at once, over all workers (more get a 503 with Retry-After); ``workers``: the
    questions answered at once, each by its own pipeline (``workers - 1`` twins of ``pipeline`` are opened here and
    closed when the server stops, or by ``app.state.pool.close()`` where it never runs). No /docs (its page loads
    Swagger from a CDN, which fails offline); /openapi.json describes the API."""
    pool = PipelinePool(pipeline, workers)
    queue = AnswerQueue(max_queue, workers)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        pool.close()  # the questions being answered finish first, then the twins close

    app = FastAPI(
        title=f"ragsweep: {pipeline.config_id}", version="1", lifespan=lifespan, docs_url=None, redoc_url=None
    )
    app.state.pool = pool

    async def ask(
        question: str, answer: bool = True, stream: Callable[[str], None] | None = None, history: tuple = ()
    ) -> dict:
        queue.admit()
        took = [0.0]
        streamed: dict = {"stream": stream} if stream is not None else {}
        if history:  # a follow-up: the conversation before it (a question asked alone passes none)
            streamed["history"] = history

        def answered_here(own) -> dict:  # timed in the worker: the answering alone, not the wait before it
            t0 = time.perf_counter()
            try:
                return own.ask(question, answer=answer, **streamed)
            finally:
                took[0] = time.perf_counter() - t0

        try:
            return await asyncio.wrap_future(pool.submit(answered_here))
        finally:
            queue.done(took[0])

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok", "config_id": pipeline.config_id, "queued": queue.waiting}

    @app.get("/v1/models")
    async def models() -> dict:
        return {"object": "list", "data": [{"id": pipeline.config_id, "object": "model", "owned_by": "ragsweep"}]}

    @app.post("/query", response_model=QueryResponse)
    async def query(req: QueryRequest) -> QueryResponse:
        question = checked(req.question, "question")
        return _response(pipeline.config_id, await ask(question, req.answer, history=query_history(req)))

    def sent(out: dict) -> tuple[str, list[dict]]:
        reply = _response(pipeline.config_id, out)
        return reply.answer or "", [s.model_dump() for s in reply.sources]

    async def answered(asked: tuple[str, tuple], stream: bool, whole, events) -> Response:
        """The answer to ``asked`` (the question, the conversation before it) whole, or streamed as it is written
        (nothing is sent before its first piece, so a failure until then is still one JSON error line with its
        status; ``relay``)."""
        question, history = asked
        if not stream:
            return JSONResponse(whole(pipeline.config_id, *sent(await ask(question, history=history))))
        pieces = relay.Relay(asyncio.get_running_loop())
        answering = asyncio.ensure_future(_then(ask(question, stream=pieces.push, history=history), sent))
        pieces.watch(answering)
        first = await pieces.first()
        parts = relay.whole(*answering.result()) if first is None else pieces.parts(first, answering)
        return StreamingResponse(events(pipeline.config_id, parts), media_type="text/event-stream")

    @app.post("/v1/chat/completions")
    async def chat(req: ChatRequest) -> Response:
        f = openai_format
        return await answered(chat_question(req), req.stream, f.chat_completion, f.chat_events)

    @app.post("/v1/completions")
    async def completions(req: CompletionRequest) -> Response:
        f = openai_format
        return await answered((completion_question(req), ()), req.stream, f.text_completion, f.completion_events)

    _errors(app)
    app.add_middleware(Guard, api_key=api_key, max_body=max_body)  # outermost: before any body is read
    return app


async def _then(work, then):
    return then(await work)


def _response(config_id: str, out: dict) -> QueryResponse:
    sources = [
        Source(
            rank=s["rank"],
            doc_id=s.get("doc_id"),
            start=s.get("start"),
            end=s.get("end"),
            page=s.get("page"),
            score=_finite(s.get("score")),
            text=s.get("text", ""),
        )
        for s in out.get("sources", [])
    ]
    return QueryResponse(
        config_id=config_id,
        answer=out.get("answer"),
        abstained=out.get("abstained"),
        sources=sources,
        retrieval_ms=out.get("retrieval_ms"),
        generation_ms=out.get("generation_ms"),
    )


def _finite(value: float | None) -> float | None:
    """A score as JSON can carry it: NaN and infinities (a retriever without scores) are null."""
    return value if value is None or math.isfinite(value) else None


def _error(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": {"message": " ".join(message.split()), "type": kind}})


def _errors(app: FastAPI) -> None:
    """Every failure as one JSON line; none stops the server."""

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(400, _validation_line(exc.errors()), "invalid_request_error")

    @app.exception_handler(BadRequest)
    async def bad(_: Request, exc: BadRequest) -> JSONResponse:
        return _error(400, str(exc), "invalid_request_error")

    @app.exception_handler(HTTPException)
    async def http(request: Request, exc: HTTPException) -> JSONResponse:
        if exc.status_code == 404:
            return _error(404, f"Not Found: {request.url.path}; this server answers {ROUTES}", "invalid_request_error")
        return _error(exc.status_code, str(exc.detail), "invalid_request_error")

    @app.exception_handler(Busy)
    async def busy(_: Request, exc: Busy) -> JSONResponse:
        reply = _error(503, str(exc), "server_busy")
        reply.headers["Retry-After"] = str(exc.retry_after)
        return reply

    @app.exception_handler(RagsweepError)
    async def unanswerable(_: Request, exc: RagsweepError) -> JSONResponse:
        return _error(422, str(exc), "unanswerable")


def _validation_line(errors: Any) -> str:
    """The first validation error as ``field: what is wrong`` (or what makes the body unreadable)."""
    if not errors:
        return "the request could not be read"
    first = errors[0]
    if first.get("type") == "json_invalid":
        return 'the body is not valid JSON; send a JSON object such as {"question": "..."}'
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    if not where:  # the body itself: a list, a string, or JSON sent without its content type
        return 'the body must be a JSON object such as {"question": "..."}, sent as application/json'
    return f"{where}: {first.get('msg', 'invalid')}"
