"""Generate: LLM-written answers from what each configuration retrieved, many at once (the LLM engine bounds
concurrency, rate and budget); and the fusion query rewrites asked for ahead of retrieval."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ragsweep import tracing
from ragsweep.errors import RagsweepError, short_reason
from ragsweep.pipelines.answer_record import AnswerRecord, AnswerSink, Retrieved
from ragsweep.pipelines.stats import Timer

if TYPE_CHECKING:
    from ragsweep.pipelines.plan import Unit
    from ragsweep.pipelines.plan_run import PlanRun

# where the answers written in this context stream to, piece by piece (``streamed_to``; ``serve`` with stream: true)
_STREAM: ContextVar[Callable[[str], None] | None] = ContextVar("ragsweep_answer_stream", default=None)

# what LlamaIndex's synthesizers answer whole for an empty reply (compact, refine and simple_summarize say so;
# tree_summarize returns it as it is): a streamed answer is recorded as the whole one would be
_EMPTY_REPLY = {"tree_summarize": ""}


@contextmanager
def streamed_to(on_delta: Callable[[str], None]) -> Iterator[None]:
    """Answers written inside pass each piece of their text to ``on_delta`` as the LLM writes it (LlamaIndex's
    streaming synthesizer: only the final call of a refine streams); each is recorded as it would be whole."""
    token = _STREAM.set(on_delta)
    try:
        yield
    finally:
        _STREAM.reset(token)


def generator_label(spec) -> str:
    from ragsweep.pipelines.extractive import GENERATOR_LABEL

    return f"llm:{spec.llm.model}" if spec.generator.calls_llm else GENERATOR_LABEL


def make_llm_synthesizer(spec, llm, prompt: str | None = None, streaming: bool = False):
    """LlamaIndex's response synthesizer in the spec's mode, with the spec's prompt file if any (``prompt``:
    a configuration's template of the ``prompt_files`` axis; the refusal instruction with no file); ``streaming``:
    its answers come as a stream of text pieces."""
    from llama_index.core import get_response_synthesizer
    from llama_index.core.prompts import PromptTemplate

    from ragsweep.pipelines.generator_prompts import template_text

    text = template_text(spec.generator, prompt or spec.generator.prompt_file)
    template = PromptTemplate(text) if text is not None else None
    kwargs: dict[str, Any] = {"text_qa_template": template} if template is not None else {}
    return get_response_synthesizer(llm=llm, response_mode=spec.generator.response_mode, streaming=streaming, **kwargs)


def prefetch_rewrites(configs, pending, llm, stats) -> None:
    """Ask for every fusion query rewrite at once (concurrently), so that retrieval, which asks one
    question at a time, finds them in the LLM cache. Same prompt text as QueryFusionRetriever's."""
    import asyncio

    from llama_index.core.retrievers.fusion_retriever import QUERY_GEN_PROMPT

    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError
    from ragsweep.llm.usage import llm_scope

    prompts = sorted(
        {
            QUERY_GEN_PROMPT.format(num_queries=c.retriever.num_queries - 1, query=q.question)
            for c in configs
            if getattr(c.retriever, "num_queries", 1) > 1
            for q in pending[c.config_hash]
        }
    )
    if not prompts:
        return

    async def one(prompt: str) -> None:
        try:
            with llm_scope(None, stage="query_rewrite", config_id=None):
                await llm.acomplete(prompt)
        except (BudgetExhausted, LLMFatalError):
            raise
        except Exception:  # noqa: BLE001 - the retrieval step retries it and records the failure
            pass

    async def main() -> None:
        # return_exceptions: a stop (budget, refused key) must not cancel calls already sent and paid
        results = await asyncio.gather(*(one(p) for p in prompts), return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r

    with Timer(stats, "query_rewrites"):
        asyncio.run(main())


def run_unit(run: PlanRun, _unit: Unit) -> None:
    """The generate unit: LLM-written answers from what every answer unit retrieved (here or on a worker).

    In the sweep's order of configurations and questions, whichever process retrieved them and when: of two
    equal prompts the first sent pays and the other is served from it, so the same record pays in every run,
    local or Ray."""
    configs = {h: i for i, h in enumerate(run.plan.pending)}
    questions = {h: {q.qid: i for i, q in enumerate(qs)} for h, qs in run.plan.pending.items()}
    items = sorted(
        run.retrieved,
        key=lambda it: (configs[it.config.config_hash], questions[it.config.config_hash][it.question.qid]),
    )
    if items:
        st = run.st
        error = generate_all(st.spec, items, st.journal, st.clients, st.stats, run.bar)
        if error is not None:
            raise error


def generate_all(spec, items: list[Retrieved], sink: AnswerSink, clients, stats, bar) -> RagsweepError | None:
    """Write the answers of ``items`` (what each configuration retrieved for each question) with the LLM;
    returns the error that stopped it (budget, an endpoint refusing every call), if any."""
    import asyncio

    with Timer(stats, "generation"):
        return asyncio.run(_agenerate(spec, items, sink, clients, stats, bar))


async def _agenerate(spec, items: list[Retrieved], sink: AnswerSink, clients, stats, bar) -> RagsweepError | None:
    from llama_index.core.schema import QueryBundle

    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import ConfigurationStopped, LLMContextError, LLMFatalError
    from ragsweep.llm.usage import Trace, llm_scope
    from ragsweep.pipelines.stages.baselines import closed_book_answer
    from ragsweep.pipelines.workpool import drain

    llm = clients.get(spec.llm)
    on_delta = _STREAM.get()
    prompts = sorted({item.config.prompt or "" for item in items})
    synths = {p: make_llm_synthesizer(spec, llm, p, streaming=on_delta is not None) for p in prompts}
    label = generator_label(spec)

    async def write(config, q, nodes, query: str) -> str:
        if config.baseline == "no_retrieval":  # the question alone: what the model knows without RAG
            return await closed_book_answer(llm, spec.generator, q.question)
        if nodes:  # nothing retrieved: an empty answer, no call
            response = await synths[config.prompt or ""].asynthesize(QueryBundle(query), nodes)
            return await _relayed(response, on_delta, spec.generator.response_mode)
        return ""

    async def answer(item: Retrieved) -> None:
        config, q, nodes = item.config, item.question, item.context
        trace = Trace()
        error, kind, text = None, None, ""
        try:
            with llm_scope(trace, stage="generation", config_id=config.config_id):
                text = await write(config, q, nodes, item.query or q.question)
        except (BudgetExhausted, LLMFatalError):
            raise  # stops the pool; this item stays pending
        except ConfigurationStopped as exc:  # not sent (another of its prompts was refused): a re-run sends it
            error, kind = exc.advice("generation"), "context_window_stopped"
        except LLMContextError as exc:  # this prompt fails the same way every time: the configuration's size
            error, kind = exc.advice("generation"), "context_window"
        except Exception as exc:  # noqa: BLE001 - one question failing must not lose the rest
            error = f"generation failed: {short_reason(exc)}"
        if error is not None:
            tracing.answered(config, q, {**item.record, "error": error, "llm": trace.as_dict()}, nodes)
            sink.add_answer(
                config.config_hash,
                q.qid,
                config.config_id,
                {"error": error, "llm": trace.as_dict(), **({"error_kind": kind} if kind else {})},
            )
            stats.failed += 1
            stats.failed_for_good += kind == "context_window"
        else:
            row = _generated_row(spec, item, text, trace, label, stats.invocation)
            tracing.answered(config, q, row, nodes)  # off: one check
            sink.add_answer(config.config_hash, q.qid, config.config_id, row)
            stats.answered += 1
        bar.advance(1)

    stop = await drain(items, answer, 2 * spec.llm.concurrency)
    sink.flush()
    return stop


async def _relayed(response, on_delta, mode: str) -> str:
    """A synthesizer's answer text; streamed (``on_delta``), each piece handed on as it comes, and the text
    recorded as the whole answer would be."""
    if on_delta is None or not hasattr(response, "async_response_gen"):
        return response.response or ""
    text = ""
    async for piece in response.async_response_gen():
        if piece:
            on_delta(piece)
            text += piece
    return text or _EMPTY_REPLY.get(mode, "Empty Response")


def _generated_row(spec, item: Retrieved, text: str, trace, label: str, invocation: int) -> AnswerRecord:
    """The retrieval row of ``item`` with its generated answer: the text, its flags and the LLM's costs."""
    from ragsweep.metrics.abstention import is_refusal
    from ragsweep.pipelines.degenerate import answer_flags

    nodes = item.context
    flags = answer_flags(text, nodes, spec.generator, item.config.prompt, item.query or item.question.question)
    return {
        **item.record,
        "answer": text,
        "answer_empty": not text.strip(),
        "generator": label,
        "abstained": is_refusal(text, getattr(spec.generator, "refusal", None)),
        # generation_ms: the server's time on the calls (their wall time where it is not known, see
        # llm.capacity); generation_wall_ms adds what they waited in the server's queue
        "generation_ms": trace.service_ms,
        "generation_wall_ms": trace.ms,
        "generation_queue_ms": trace.queue_ms,
        "truncated": trace.truncated > 0,
        "invocation": invocation,
        "llm": trace.as_dict(),
        **flags,  # quip, echoed_prompt, copied_context, looped: once per distinct (answer, context)
    }
