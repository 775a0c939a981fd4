"""The extractive generator's abstention (``generator: {kind: extractive, abstain_below: X | tune}``).

The extractive baseline has no model to say "I don't know", so it abstains when the best retrieval
score is below a threshold: a fixed one, or one tuned per configuration (scores differ in scale per
retriever and reranker) on the dataset's validation questions by balanced accuracy of "abstain iff
unanswerable" (``metrics.abstention.tune_threshold``), as a reading-comprehension system
thresholds its no-answer score on held-out data (Rajpurkar, Jia & Liang 2018). The test questions
never take part, so the test rates the verdict reports are honest. An abstaining answer is the fixed
refusal sentence, the one the LLM generator is told to use, so both generators' refusals are scored
alike by the answer metrics (an empty answer would score 0 by BERTScore's convention).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ragsweep.metrics.abstention import REFUSAL, abstains, top_score, tune_threshold


@dataclass(frozen=True)
class AbstentionRule:
    """A configuration's threshold (None: never abstain) and, when tuned, what the tuning saw."""

    threshold: float | None
    tuning: dict | None = None

    def apply(self, nodes, answer: str) -> tuple[str, bool]:
        """The answer to record and whether it abstained, given the retrieved ``nodes``."""
        if abstains(top_score(n.score for n in nodes), self.threshold):
            return REFUSAL, True
        return answer, False

    def payload(self, abstained: bool) -> dict:
        return {
            "abstained": abstained,
            "abstain_threshold": self.threshold,
            **({"abstention_tuning": self.tuning} if self.tuning is not None else {}),
        }


def tunes_abstention(config) -> bool:
    """Whether the configuration chooses its threshold on the validation questions."""
    return (config.generator or {}).get("abstain_below") == "tune"


def abstention_rule(ctx, config, retriever) -> AbstentionRule | None:
    """The extractive generator's rule for ``config`` (None without ``abstain_below``). ``tune``: the
    built ``retriever`` (tuned weights, query transform and reranker included) searches every
    validation question of the dataset, whatever ``--limit`` says, so the threshold is a function of the
    dataset, the spec and the configuration alone."""
    from llama_index.core.schema import QueryBundle

    from ragsweep.evaluation.split import validation_questions
    from ragsweep.llm.usage import Trace, llm_scope

    gen = ctx.spec.generator
    below = getattr(gen, "abstain_below", None)
    if gen.calls_llm or below is None:
        return None
    if below != "tune":
        return AbstentionRule(float(below))
    known = ctx.abstain_thresholds.get(config.config_hash)
    if known is not None:  # chosen by the run already (``ask``, an exported pipeline)
        return AbstentionRule(known["threshold"], known.get("tuning"))
    questions = validation_questions(ctx.spec, ctx.dataset)
    t0 = time.perf_counter()
    trace = Trace()
    with llm_scope(trace, stage="tune", config_id=config.config_id):
        points = [
            (top_score(n.score for n in retriever.retrieve(QueryBundle(q.question))), not q.evidence) for q in questions
        ]
    tuning = tune_threshold(points)
    tuning["tuning_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    if trace.calls:
        tuning["llm"] = trace.as_dict()
    return AbstentionRule(tuning["threshold"], tuning)
