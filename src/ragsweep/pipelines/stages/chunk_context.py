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

BATCH = 1024  # prompts built and in flight at once (the engine's concurrency bounds what is sent)
Key = tuple  # (doc_id, window bounds, chunk text): what decides a chunk's prompt


def keys(chunks: list[Chunk], documents, context) -> tuple[list[Key], int]:
    """Each chunk's prompt key, and how many chunks saw only a window of their document; a document is
    tokenized once, and only when it may be longer than the window."""
    from ragsweep.splitters.situate import TokenMap, may_exceed, window_bounds

    by_id = {d.doc_id: d for d in documents}
    first: dict[str, str] = {}  # a document's text -> the first id it has: duplicated documents share prompts
    maps: dict[str, TokenMap | None] = {}
    out, windowed = [], 0
    for c in chunks:
        text = by_id[c.doc_id].text
        doc_id = first.setdefault(text, c.doc_id)
        if doc_id not in maps:
            maps[doc_id] = TokenMap.of(text) if may_exceed(text, context.document_tokens) else None
        tokens = maps[doc_id]
        bounds = () if tokens is None else window_bounds(tokens, c.start, c.end, context.document_tokens, context.head)
        windowed += bool(bounds)
        out.append((doc_id, bounds, c.text))
    return out, windowed


def prompt_of(key: Key, texts: dict[str, str], template: str) -> str:
    from ragsweep.splitters.situate import fill, render_window

    doc_id, bounds, chunk = key
    return fill(template, render_window(texts[doc_id], bounds), chunk)


def llm_contexts(ctx: StageContext, config, chunks: list[Chunk]) -> list[Chunk]:
    """``chunks`` with ``context`` set to the LLM's situating sentence (after the title with ``title: true``)."""
    from ragsweep.llm.usage import Trace
    from ragsweep.splitters.context_prefix import document_title
    from ragsweep.splitters.situate import clean_reply, prefix, template_text

    spec_ctx = config.splitter.context
    if ctx.llm_for is None:
        raise RagsweepError(
            f"splitter {config.chunk_key}: its chunk contexts are written by an LLM and are not "
            "cached yet; run the sweep (ragsweep run) to write them"
        )
    llm = ctx.llm_for(context_llm(spec_ctx, ctx.spec.llm))
    ks, windowed = keys(chunks, ctx.dataset.documents, spec_ctx)
    unique = list(dict.fromkeys(ks))
    texts = {d.doc_id: d.text for d in ctx.dataset.documents}
    template = template_text(spec_ctx.prompt_file)
    trace = Trace()
    bar = ctx.bars.add(f"chunk contexts {config.chunk_key}", len(unique))
    replies: dict = {}
    with Timer(ctx.stats, "chunk_context"):
        for i in range(0, len(unique), BATCH):  # a stop (budget, refused key) is raised after its batch returns
            part = unique[i : i + BATCH]
            prompts_ = [prompt_of(k, texts, template) for k in part]
            got = asyncio.run(_ask_all(llm, prompts_, trace, lambda: ctx.bars.advance(bar, 1)))
            replies.update(zip(part, got))
    ctx.bars.complete(bar)
    failed = [r for r in replies.values() if isinstance(r, BaseException)]
    info = {
        "chunks": len(chunks),
        "prompts": len(unique),
        "windowed": windowed,
        "failed": len(failed),
        **trace.as_dict(),
    }
    if failed:
        ctx.stats.chunk_contexts[config.chunk_key] = info
        raise RagsweepError(
            f"{len(failed)} of {len(unique)} chunk-context calls failed (first: "
            f"{short_reason(failed[0])}); the others are cached: run again to retry"
        )
    titles = {d.doc_id: document_title(d) for d in ctx.dataset.documents} if spec_ctx.title else {}
    out, empty = [], 0
    for c, k in zip(chunks, ks):
        sentence = clean_reply(replies[k])
        empty += not sentence
        out.append(dataclasses.replace(c, context=prefix(sentence, titles.get(c.doc_id))))
    ctx.stats.chunk_contexts[config.chunk_key] = {**info, "empty": empty}
    return out


async def _ask_all(llm, prompts_: list[str], trace, advance) -> list:
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

    results = await asyncio.gather(*(one(p) for p in prompts_), return_exceptions=True)
    stop = next((r for r in results if isinstance(r, (BudgetExhausted, LLMFatalError))), None)
    if stop is not None:
        raise stop
    return results


def describe(invocations: list[dict]) -> list[str]:
    """``ragsweep show``'s lines on what writing the chunk contexts took, per splitter (the latest
    invocation that wrote or re-read them); a cost is the whole splitter's, paid once per corpus."""
    latest: dict[str, dict] = {}
    for inv in invocations:
        latest.update(inv.get("chunk_contexts") or {})
    out = []
    for key, i in sorted(latest.items()):
        cost = i.get("cost_usd")
        out.append(
            f"{key}: {i.get('chunks', 0)} chunks, {i.get('prompts', 0)} prompts ({i.get('windowed', 0)} from a "
            f"window of a long document), {i.get('llm_calls', 0)} LLM calls ({i.get('llm_cached', 0)} cached), "
            f"{i.get('prompt_tokens', 0):,} prompt + {i.get('completion_tokens', 0):,} completion tokens"
            + (f", ${cost:.4f}" if cost is not None else "")
            + (f"; {i['failed']} failed" if i.get("failed") else "")
            + (f"; {i['empty']} empty replies (no context)" if i.get("empty") else "")
        )
    return out
