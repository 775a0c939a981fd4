"""The HTTP API of a loaded pipeline (FastAPI): ``POST /query`` (the answer and its sources: document, offsets,
page, score, text), ``POST /v1/chat/completions`` (OpenAI's chat format: the last user message is the question;
the answer is the assistant's message, the sources ride beside it), ``GET /v1/models`` and ``GET /health``.

The pipeline answers one question at a time on one worker thread (its caches are SQLite connections of that
thread; an LLM generator's calls run on their own event loop there), so concurrent requests queue and none
blocks the server's event loop. Every error is JSON ``{"error": {"message", "type"}}`` with one line: 400 for a
request that cannot be read, 404/405 for a wrong path or method, 422 for a question the configuration cannot
answer (too long for the LLM's context, say), 500 for anything else; the server keeps serving.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from ragsweep.errors import RagsweepError, short_reason
from ragsweep.serve.schema import ChatRequest, QueryRequest, QueryResponse, Source


class BadRequest(Exception):
    """A request the API understood but refuses (400), with its one-line reason."""


def make_app(pipeline) -> FastAPI:
    """The API over ``pipeline`` (a ``load_pipeline`` result); closing it is the caller's."""
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragsweep-pipeline")

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        worker.shutdown(wait=True)  # the question being answered finishes first

    app = FastAPI(title=f"ragsweep: {pipeline.config_id}", version="1", lifespan=lifespan)

    async def ask(question: str, answer: bool = True) -> dict:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(worker, lambda: pipeline.ask(question, answer=answer))

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok", "config_id": pipeline.config_id}

    @app.get("/v1/models")
    async def models() -> dict:
        return {"object": "list", "data": [{"id": pipeline.config_id, "object": "model", "owned_by": "ragsweep"}]}

    @app.post("/query", response_model=QueryResponse)
    async def query(req: QueryRequest) -> QueryResponse:
        return _response(pipeline.config_id, await ask(req.question, req.answer))

    @app.post("/v1/chat/completions")
    async def chat(req: ChatRequest) -> dict:
        if req.stream:
            raise BadRequest("stream: true is not supported; send stream: false")
        out = _response(pipeline.config_id, await ask(_question(req)))
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": pipeline.config_id,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": out.answer or ""}, "finish_reason": "stop"}
            ],
            "sources": [s.model_dump() for s in out.sources],
        }

    _errors(app)
    return app


def _question(req: ChatRequest) -> str:
    """The text of the last user message (a string, or the text parts of a list of content parts)."""
    user = [m for m in req.messages if m.role == "user"]
    if not user:
        raise BadRequest("messages: no message with role user; send the question as a user message")
    content = user[-1].content
    if isinstance(content, list):
        content = " ".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    if not isinstance(content, str) or not content.strip():
        raise BadRequest("messages: the last user message has no text; send the question as its content")
    return content


def _response(config_id: str, out: dict) -> QueryResponse:
    sources = [
        Source(
            rank=s["rank"],
            doc_id=s.get("doc_id"),
            start=s.get("start"),
            end=s.get("end"),
            page=s.get("page"),
            score=s.get("score"),
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
    async def http(_: Request, exc: HTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail), "invalid_request_error")

    @app.exception_handler(RagsweepError)
    async def unanswerable(_: Request, exc: RagsweepError) -> JSONResponse:
        return _error(422, str(exc), "unanswerable")

    @app.exception_handler(Exception)
    async def failed(_: Request, exc: Exception) -> JSONResponse:
        return _error(500, f"answering failed: {short_reason(exc)}", "server_error")


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
