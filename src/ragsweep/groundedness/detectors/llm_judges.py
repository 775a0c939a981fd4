"""ragsweep's stage-2 LLM judges as detectors: faithfulness (LlamaIndex's ``FaithfulnessEvaluator``, YES/NO:
scored 1/0) against the grounded labels, correctness (``CorrectnessEvaluator``, 1-5) against the
correctness labels; the same prompts and calls as ``evaluation.judges.judge``."""

from __future__ import annotations

from ragsweep.groundedness.detectors.base import Detector, Scored
from ragsweep.groundedness.detectors.llm_items import Unmeasured, run_items


class LLMJudge(Detector):
    @classmethod
    def build(cls, name: str, *, llm=None, prompts=None, price=None) -> "LLMJudge":
        return cls(name.removeprefix("llm_"), llm, prompts, price)

    def __init__(self, judge: str, llm, prompts, price, threshold: float = 4.0) -> None:
        from ragsweep.evaluation.judges import build_judges

        self.judge, self.price, self.threshold = judge, price, threshold
        self.name = f"llm_{judge}"
        self.label = "correctness" if judge == "correctness" else "grounded"
        self.evaluator = build_judges([judge], llm, prompts, threshold)[judge]

    def score_all(self, items) -> list[Scored]:
        from ragsweep.evaluation.judges import JudgeCase, judge

        async def one(item) -> float | None:
            if self.judge == "correctness" and not item.reference_answer:
                raise Unmeasured("no reference answer")
            case = JudgeCase(item.question, item.answer, list(item.contexts), item.reference_answer)
            out = await judge(self.judge, self.evaluator, case, threshold=self.threshold)
            if out["status"] != "ok":
                raise Unmeasured(out.get("reason") or "")
            return out["score"]

        return run_items(items, one, self.price, self.name)
