"""LLM judges: LlamaIndex's Correctness, Faithfulness and Relevancy evaluators, parsed strictly.

- Correctness (score 1-5 against the reference answer, passing at a threshold): LlamaIndex's
  ``CorrectnessEvaluator`` (after the LLM-as-a-judge set-up of Zheng et al. 2023, "Judging
  LLM-as-a-Judge with MT-Bench and Chatbot Arena").
- Faithfulness (is the answer supported by the retrieved context?) and Relevancy (are answer and
  context in line with the question?): LlamaIndex's YES/NO evaluators (cf. Es et al. 2024,
  "RAGAS: Automated Evaluation of Retrieval Augmented Generation").

The prompts are LlamaIndex's; the replies are asked in the forms of ``judge_forms`` (``llm.ask``): held to a
JSON schema where the endpoint takes one, else read strictly as text with one repair re-ask. A reply that still
cannot be read is *unmeasured*: kept with its raw text and reason, counted, and excluded from means.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ragsweep.config import JudgePrompts
from ragsweep.evaluation.judge_forms import CORRECTNESS, VERDICT, parse_correctness

if TYPE_CHECKING:
    from llama_index.core.evaluation import BaseEvaluator

JUDGES = ("correctness", "faithfulness", "relevancy")
# per judge: the per-question value summarised (mean with CI) in the summary


def prompt_texts(prompts: JudgePrompts) -> dict[str, str]:
    """Template texts from the spec's files (part of the judge settings key)."""
    out = {}
    for name in JudgePrompts.model_fields:
        path = getattr(prompts, name)
        if path is not None:
            out[name] = Path(path).read_text(encoding="utf-8")
    return out


_REQUIRED = {
    "correctness": {"query", "generated_answer"},
    "faithfulness": {"query_str", "context_str"},
    "faithfulness_refine": {"query_str", "existing_answer", "context_msg"},
    "relevancy": {"query_str", "context_str"},
    "relevancy_refine": {"query_str", "existing_answer", "context_msg"},
}


def check_prompt_files(prompts: JudgePrompts) -> None:
    """A replaced template must keep the placeholders LlamaIndex fills in."""
    from ragsweep.errors import RagsweepError

    for name, text in prompt_texts(prompts).items():
        found = set(re.findall(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})", text))
        missing = _REQUIRED[name] - found
        if missing:
            raise RagsweepError(
                f"stage2.prompts.{name}: {getattr(prompts, name)} lacks the placeholder(s) "
                f"{', '.join('{' + m + '}' for m in sorted(missing))}"
            )


def build_judges(names, llm, prompts: JudgePrompts, threshold: float) -> dict:
    """LlamaIndex evaluators for ``names``, on ``llm``, with the spec's templates where given."""
    from llama_index.core.evaluation import CorrectnessEvaluator, FaithfulnessEvaluator, RelevancyEvaluator

    texts = prompt_texts(prompts)
    out: dict[str, BaseEvaluator] = {}
    for name in names:
        if name == "correctness":
            out[name] = CorrectnessEvaluator(
                llm=llm,
                eval_template=texts.get("correctness"),
                score_threshold=threshold,
                parser_function=lambda raw: (parse_correctness(raw)[0], raw),
            )
        elif name == "faithfulness":
            out[name] = FaithfulnessEvaluator(
                llm=llm, eval_template=texts.get("faithfulness"), refine_template=texts.get("faithfulness_refine")
            )
        elif name == "relevancy":
            out[name] = RelevancyEvaluator(
                llm=llm, eval_template=texts.get("relevancy"), refine_template=texts.get("relevancy_refine")
            )
        else:
            raise ValueError(f"unknown judge {name!r}")
    return out


_MARGIN = 64  # tokens of slack on every size check below


def single_prompt_context(contexts: list[str], evaluator, query_str: str) -> str | None:
    """The context text LlamaIndex's YES/NO evaluator sends when everything fits in one prompt.

    ``FaithfulnessEvaluator``/``RelevancyEvaluator`` build a ``SummaryIndex`` over the contexts and
    answer through a compact-and-refine query engine; when no context exceeds the index's chunk
    size and all fit in one prompt, that is exactly one call with the stripped contexts joined by
    blank lines (a test checks the request is byte-identical). Building the index costs more CPU
    than the call, so ragsweep sends that prompt directly; otherwise (None) the evaluator runs.
    """
    from llama_index.core import Settings

    from ragsweep.llm.tokens import count_tokens

    parts = [c.strip() for c in contexts if c.strip()]
    if not parts:
        return None
    lengths = [count_tokens(c) for c in parts]
    if max(lengths) > Settings.chunk_size - _MARGIN:
        return None
    meta = evaluator._llm.metadata
    template = evaluator._eval_template.get_template()
    used = count_tokens(template) + count_tokens(query_str) + sum(lengths) + 2 * len(parts)
    if used + max(meta.num_output, 0) + _MARGIN > meta.context_window:
        return None
    return "\n\n".join(parts)


def _unmeasured(reason: str, raw: str = "", reasked: bool = False) -> dict:
    return {"status": "unmeasured", "reason": reason, "score": None, "passing": None, "raw": raw, "reasked": reasked}


class JudgeCase(NamedTuple):
    """What a judge reads of one answer: the question, the answer, the retrieved contexts' texts and the reference
    answer (correctness only)."""

    query: str
    answer: str
    contexts: list[str]
    reference: str | None = None


async def judge(name: str, evaluator, case: JudgeCase, *, threshold: float) -> dict:
    """Run one judge on one answer (``case``); returns the fields stored for it (status ok | unmeasured).
    ``threshold``: the correctness score that passes.

    Call failures (network, retries used up) propagate: they are not judgements.
    """
    from ragsweep.llm.ask import aask

    query, answer, contexts, reference = case

    if name in ("faithfulness", "relevancy") and not contexts:
        return _unmeasured("nothing was retrieved")
    if name in ("faithfulness", "relevancy") and not answer.strip():
        return _unmeasured("empty answer")
    if name == "correctness" and not (reference or "").strip():
        return _unmeasured("no reference answer")
    llm = evaluator._llm
    if name == "correctness":
        messages = llm._get_messages(
            evaluator._eval_template, query=query, generated_answer=answer, reference_answer=reference
        )
        reply = await aask(llm, messages, CORRECTNESS)
        if reply.value is None:
            return _unmeasured(reply.reason or "unreadable reply", reply.raw, reply.reasked)
        score, reasoning = reply.value
        return {
            "status": "ok",
            "reason": None,
            "score": score,
            "passing": score >= threshold,
            "raw": reply.raw,
            "reasoning": reasoning,
            "reasked": reply.reasked,
        }
    query_str = answer if name == "faithfulness" else f"Question: {query}\nResponse: {answer}"
    context_str = single_prompt_context(contexts, evaluator, query_str)
    if context_str is not None:
        messages = llm._get_messages(evaluator._eval_template, query_str=query_str, context_str=context_str)
        reply = await aask(llm, messages, VERDICT)
    else:
        reply = await _refined_verdict(evaluator, query, answer, contexts)
    if reply.value is None:
        return _unmeasured(reply.reason or "unreadable reply", reply.raw, reply.reasked)
    passing = bool(reply.value)
    return {
        "status": "ok",
        "reason": None,
        "score": 1.0 if passing else 0.0,
        "passing": passing,
        "raw": reply.raw,
        "reasked": reply.reasked,
    }


async def _refined_verdict(evaluator, query: str, answer: str, contexts: list[str]):
    """LlamaIndex's compact-and-refine over contexts that do not fit one prompt, each call asked in the verdict's
    form; an unreadable last reply is asked again once, after the prompt that produced it (the trace keeps it)."""
    from ragsweep.llm.ask import Reply, arepair
    from ragsweep.llm.reply_form import wanting
    from ragsweep.llm.usage import current_trace

    with wanting(VERDICT):
        raw = (await evaluator.aevaluate(query=query, response=answer, contexts=contexts)).feedback or ""
    value, reason = VERDICT.read(raw)
    trace = current_trace()
    if value is not None or trace is None or not trace.last_messages:
        return Reply(value, raw, reason)
    return await arepair(evaluator._llm, trace.last_messages, raw, reason, VERDICT)
