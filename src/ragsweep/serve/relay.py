"""A streamed answer carried from the worker thread that writes it to the HTTP response that sends it.

The worker pushes each piece of an LLM generator's answer as its server writes it (``LivePipeline.ask(stream=)``);
the response waits for the first piece, or for the answer to end without one (an extractive answer, a failure),
before it sends anything, so a question that fails before any text still gets one JSON
error line with its status. Once text was sent, the end is the answer the pipeline recorded: what it adds to the
text sent (a whole reply the synthesizer replaced), or an error event where it would contradict what was shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from ragsweep.errors import RagsweepError, short_reason
from ragsweep.serve.openai_format import Ending, pieces


class Relay:
    """The pieces of one answer, pushed from any thread onto ``loop`` (the server's), in order, then its end."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()

    def push(self, piece: str) -> None:
        """Called by the worker for each piece (all before its answer is done: one queue keeps them in order)."""
        if piece:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, piece)

    def watch(self, answering: asyncio.Future) -> None:
        """End the pieces when ``answering`` is done (its failure is read: a client gone mid-stream leaves no
        "never retrieved" warning)."""

        def ended(done: asyncio.Future) -> None:
            if not done.cancelled():
                done.exception()
            self._queue.put_nowait(None)

        answering.add_done_callback(ended)

    async def first(self) -> str | None:
        """The first piece, or None when the answer ended without one."""
        return await self._queue.get()

    async def parts(self, first: str, answering: asyncio.Future) -> AsyncIterator[str | Ending]:
        """``first`` and every later piece, then the rest of the recorded answer and its ``Ending``."""
        sent = ""
        piece: str | None = first
        while piece is not None:
            sent += piece
            yield piece
            piece = await self._queue.get()
        try:
            answer, sources = answering.result()
        except Exception as exc:  # noqa: BLE001 - the status is sent: the failure becomes the stream's last event
            kind = "unanswerable" if isinstance(exc, RagsweepError) else "server_error"
            yield Ending([], {"message": " ".join(short_reason(exc).split()), "type": kind})
            return
        if not answer.startswith(sent):
            differs = "the answer recorded is not the text streamed; ask again"
            yield Ending([], {"message": differs, "type": "server_error"})
            return
        if answer[len(sent) :]:
            yield answer[len(sent) :]
        yield Ending(sources)


async def whole(answer: str, sources: list[dict]) -> AsyncIterator[str | Ending]:
    """An answer that is all there, streamed in pieces, then its sources."""
    for piece in pieces(answer):
        yield piece
    yield Ending(sources)
