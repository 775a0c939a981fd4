"""Chunk context: the situating sentence an LLM writes for each chunk of a splitter with ``context: llm``
(Anthropic's Contextual Retrieval, 2024; the prompt and windows are ``splitters.situate``).

Runs inside the chunk stage, on the process that holds the run's LLM client (the driver under Ray):
every distinct prompt is sent once, all at once (the LLM engine bounds concurrency, rate and budget),
each reply is kept in the LLM call cache as it arrives, and the contexts are stored with the chunks.
A failed call fails the splitter's configurations with its reason; a re-run sends only the calls
that failed.
"""

from __future__ import annotations

import asyncio
import dataclasses

from ragsweep.config import context_llm
from ragsweep.errors import RagsweepError, short_reason
from ragsweep.pipelines.context import StageContext
from ragsweep.pipelines.stats import Timer
from ragsweep.splitters.build import Chunk


def prompts(chunks: list[Chunk], documents, context) -> tuple[list[str], int]:
    """The prompt of each chunk, and how many chunks saw only a window of their document."""
    from ragsweep.splitters.situate import fill, template_text

    template = template_text(context.prompt_file)
    seen, windowed = windows(chunks, documents, context)
    return [fill(template, w, c.text) for w, c in zip(seen, chunks)], windowed


def windows(chunks: list[Chunk], documents, context) -> tuple[list[str], int]:
    """What the LLM reads of each chunk's document, and how many chunks saw only a window of it."""
    from ragsweep.splitters.situate import TokenMap, document_window

    by_id = {d.doc_id: d for d in documents}
    maps: dict[str, TokenMap | None] = {}
    out, windowed = [], 0
    for c in chunks:
        doc = by_id[c.doc_id]
        if c.doc_id not in maps:  # a token is at least one character: a short text needs no tokenizing
            fits = len(doc.text) <= context.document_tokens
            maps[c.doc_id] = None if fits else TokenMap.of(doc.text)
            if maps[c.doc_id] is not None and len(maps[c.doc_id]) <= context.document_tokens:
                maps[c.doc_id] = None
        tokens = maps[c.doc_id]
        window = doc.text if tokens is None else document_window(doc.text, tokens, c.start, c.end,
                                                                 context.document_tokens, context.head)
        windowed += tokens is not None
        out.append(window)
    return out, windowed


def llm_contexts(ctx: StageContext, config, chunks: list[Chunk]) -> list[Chunk]:
    """``chunks`` with ``context`` set to the LLM's situating sentence (after the title with ``title: true``)."""
    from ragsweep.llm.usage import Trace
    from ragsweep.splitters.context_prefix import document_title
    from ragsweep.splitters.situate import clean_reply, prefix

    spec_ctx = config.splitter.context
    if ctx.llm_for is None:
        raise RagsweepError(f"splitter {config.chunk_key}: its chunk contexts are written by an LLM and are not "
                            "cached yet; run the sweep (ragsweep run) to write them")
    llm = ctx.llm_for(context_llm(spec_ctx, ctx.spec.llm))
    texts, windowed = prompts(chunks, ctx.dataset.documents, spec_ctx)
    unique = list(dict.fromkeys(texts))
    trace = Trace()
    bar = ctx.bars.add(f"chunk contexts {config.chunk_key}", len(unique))
    with Timer(ctx.stats, "chunk_context"):
        replies = asyncio.run(_ask_all(llm, unique, trace, lambda: ctx.bars.advance(bar, 1)))
    ctx.bars.complete(bar)
    failed = [(p, r) for p, r in replies.items() if isinstance(r, BaseException)]
    info = {"chunks": len(chunks), "prompts": len(unique), "windowed": windowed, "failed": len(failed),
            **trace.as_dict()}
    if failed:
        ctx.stats.chunk_contexts[config.chunk_key] = info
        raise RagsweepError(f"{len(failed)} of {len(unique)} chunk-context calls failed (first: "
                            f"{short_reason(failed[0][1])}); the others are cached: run again to retry")
    titles = {d.doc_id: document_title(d) for d in ctx.dataset.documents} if spec_ctx.title else {}
    out, empty = [], 0
    for c, p in zip(chunks, texts):
        sentence = clean_reply(replies[p])
        empty += not sentence
        out.append(dataclasses.replace(c, context=prefix(sentence, titles.get(c.doc_id))))
    ctx.stats.chunk_contexts[config.chunk_key] = {**info, "empty": empty}
    return out


async def _ask_all(llm, unique: list[str], trace, advance) -> dict:
    """Each prompt's reply, or the exception its call ended with; a stop (budget, a refused key) is raised
    once every call already sent has returned (they are paid for, and cached)."""
    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError
    from ragsweep.llm.usage import llm_scope

    async def one(prompt: str) -> str:
        try:
            with llm_scope(trace, stage="chunk_context", config_id=None):
                return (await llm.acomplete(prompt)).text
        finally:
            advance()

    results = await asyncio.gather(*(one(p) for p in unique), return_exceptions=True)
    stop = next((r for r in results if isinstance(r, (BudgetExhausted, LLMFatalError))), None)
    if stop is not None:
        raise stop
    return dict(zip(unique, results))


def describe(invocations: list[dict]) -> list[str]:
    """``ragsweep show``'s lines on what writing the chunk contexts took, per splitter (the latest
    invocation that wrote or re-read them); a cost is the whole splitter's, paid once per corpus."""
    latest: dict[str, dict] = {}
    for inv in invocations:
        latest.update(inv.get("chunk_contexts") or {})
    out = []
    for key, i in sorted(latest.items()):
        cost = i.get("cost_usd")
        out.append(f"{key}: {i.get('chunks', 0)} chunks, {i.get('prompts', 0)} prompts ({i.get('windowed', 0)} from a "
                   f"window of a long document), {i.get('llm_calls', 0)} LLM calls ({i.get('llm_cached', 0)} cached), "
                   f"{i.get('prompt_tokens', 0):,} prompt + {i.get('completion_tokens', 0):,} completion tokens"
                   + (f", ${cost:.4f}" if cost is not None else "")
                   + (f"; {i['failed']} failed" if i.get("failed") else "")
                   + (f"; {i['empty']} empty replies (no context)" if i.get("empty") else ""))
    return out
