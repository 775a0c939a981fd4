"""LLM judges: LlamaIndex's Correctness, Faithfulness and Relevancy evaluators, parsed strictly.

- Correctness (score 1-5 against the reference answer, passing at a threshold): LlamaIndex's
  ``CorrectnessEvaluator`` (after the LLM-as-a-judge set-up of Zheng et al. 2023, "Judging
  LLM-as-a-Judge with MT-Bench and Chatbot Arena").
- Faithfulness (is the answer supported by the retrieved context?) and Relevancy (are answer and
  context in line with the question?): LlamaIndex's YES/NO evaluators (cf. Es et al. 2024,
  "RAGAS: Automated Evaluation of Retrieval Augmented Generation").

LlamaIndex's own parsing counts any reply containing "yes" as a pass and crashes on a one-line
correctness reply; here a reply that does not start with a 1-5 score (correctness) or YES/NO is
*unmeasured*: kept with its raw text and reason, counted, and excluded from means.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ragsweep.config import JudgePrompts
from ragsweep.metrics.catalogue import CATALOGUE

if TYPE_CHECKING:
    from llama_index.core.evaluation import BaseEvaluator

JUDGES = ("correctness", "faithfulness", "relevancy")
# per judge: the per-question value summarised (mean with CI) in the summary
JUDGE_METRICS = {j: [m.name for m in CATALOGUE if m.judge == j] for j in JUDGES}

_SCORE = re.compile(
    r"^\s*(?:\*\*)?(?:score\s*[:=]\s*)?(?:\*\*)?\s*(\d+(?:\.\d+)?)\s*(?:/\s*5)?\s*(?:\*\*)?\s*$", re.IGNORECASE
)
_YES_NO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


def parse_correctness(raw: str) -> tuple[float | None, str | None, str]:
    """``(score, reason_if_unmeasured, reasoning)`` from a correctness reply.

    The first non-empty line must be the score alone (``4``, ``4.5``, ``Score: 4``, ``4/5``),
    within 1-5, as LlamaIndex's prompt asks.
    """
    lines = [ln for ln in (raw or "").splitlines() if ln.strip()]
    if not lines:
        return None, "empty reply", ""
    m = _SCORE.match(lines[0])
    if m is None:
        return None, f"first line is not a score: {lines[0].strip()[:80]!r}", "\n".join(lines[1:])
    score = float(m.group(1))
    if not 1.0 <= score <= 5.0:
        return None, f"score {score:g} outside 1-5", "\n".join(lines[1:])
    return score, None, "\n".join(lines[1:]).strip()


def parse_yes_no(raw: str) -> tuple[bool | None, str | None]:
    """``(passing, reason_if_unmeasured)``: the reply must begin with YES or NO."""
    m = _YES_NO.match(raw or "")
    if m is None:
        text = (raw or "").strip()
        return None, "empty reply" if not text else f"reply does not start with YES or NO: {text[:80]!r}"
    return m.group(1).lower() == "yes", None


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


async def judge(
    name: str, evaluator, *, query: str, answer: str, contexts: list[str], reference: str | None, threshold: float
) -> dict:
    """Run one judge on one answer; returns the fields stored for it (status ok | unmeasured).

    Call failures (network, retries used up) propagate: they are not judgements.
    """
    if name in ("faithfulness", "relevancy") and not contexts:
        return {"status": "unmeasured", "reason": "nothing was retrieved", "score": None, "passing": None, "raw": ""}
    if name in ("faithfulness", "relevancy") and not answer.strip():
        return {"status": "unmeasured", "reason": "empty answer", "score": None, "passing": None, "raw": ""}
    if name == "correctness" and not (reference or "").strip():
        return {"status": "unmeasured", "reason": "no reference answer", "score": None, "passing": None, "raw": ""}
    if name in ("faithfulness", "relevancy"):
        query_str = answer if name == "faithfulness" else f"Question: {query}\nResponse: {answer}"
        context_str = single_prompt_context(contexts, evaluator, query_str)
        if context_str is not None:
            raw = await evaluator._llm.apredict(evaluator._eval_template, query_str=query_str, context_str=context_str)
        else:
            raw = (await evaluator.aevaluate(query=query, response=answer, contexts=contexts)).feedback or ""
    else:
        result = await evaluator.aevaluate(query=query, response=answer, contexts=contexts, reference=reference)
        raw = result.feedback or ""
    if name == "correctness":
        score, reason, reasoning = parse_correctness(raw)
        if score is None:
            return {"status": "unmeasured", "reason": reason, "score": None, "passing": None, "raw": raw}
        return {
            "status": "ok",
            "reason": None,
            "score": score,
            "passing": score >= threshold,
            "raw": raw,
            "reasoning": reasoning,
        }
    passing, reason = parse_yes_no(raw)
    if passing is None:
        return {"status": "unmeasured", "reason": reason, "score": None, "passing": None, "raw": raw}
    return {"status": "ok", "reason": None, "score": 1.0 if passing else 0.0, "passing": passing, "raw": raw}
