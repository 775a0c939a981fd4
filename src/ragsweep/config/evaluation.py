"""How configurations are scored and compared: the split, stage 2, BERTScore and bootstrap (``split:``,
``stage2:``, ``scoring:``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from ragsweep.config import backend_default
from ragsweep.config.base import Strict
from ragsweep.config.llm import LLMSpec


class SplitSpec(Strict):
    """Deterministic validation/test split: stage 1 selects on validation, final figures use test."""

    validation_fraction: float = Field(
        0.5, gt=0, lt=1, description="share of questions configurations are chosen on; the rest report the figures"
    )
    stratify: bool = Field(True, description="by question type, when the dataset has types")


JudgeName = Literal["correctness", "faithfulness", "relevancy"]


class JudgePrompts(Strict):
    """Template files replacing LlamaIndex's default judge prompts (same placeholders)."""

    correctness: Path | None = Field(None, description="placeholders {query} {reference_answer} {generated_answer}")
    faithfulness: Path | None = Field(None, description="placeholders {query_str} {context_str}")
    faithfulness_refine: Path | None = Field(
        None, description="refine step: {query_str} {existing_answer} {context_msg}"
    )
    relevancy: Path | None = Field(None, description="placeholders {query_str} {context_str}")
    relevancy_refine: Path | None = Field(None, description="refine step: {query_str} {existing_answer} {context_msg}")


class Stage2Spec(Strict):
    """LLM judges on the configurations stage 1 selects, on validation questions (where a verdict by a judge is
    chosen) and test questions (where it is reported)."""

    judges: list[JudgeName] = Field(
        ["correctness", "faithfulness", "relevancy"],
        min_length=1,
        description="LlamaIndex's evaluators run on each selected answer",
    )
    llm: LLMSpec | None = Field(None, description="judge model; default: the spec's llm")
    select_metric: str = Field(
        "bertscore_f1_rescaled",
        description="the stage-1 metric configurations are selected by, on the validation questions",
    )
    top_n: int = Field(3, gt=0, description="the best N go to the judges, with those not significantly worse")
    max_configs: int = Field(10, gt=0, description="at most this many configurations are judged")
    alpha: float = Field(0.05, gt=0, lt=1, description="significance level of 'not significantly worse'")
    correctness_threshold: float = Field(4.0, ge=1, le=5, description="passing score (1-5 scale)")
    validation_share: float = Field(
        1.0,
        ge=0,
        le=1,
        description="share of the validation questions judged (a seeded draw): where a verdict by a judge is "
        "chosen; 0: judged on test only, and such a verdict is chosen and reported on the same questions",
    )
    test_share: float = Field(
        1.0, gt=0, le=1, description="share of the test questions judged (a seeded draw): where the figures are"
    )
    repeats: int = Field(
        1,
        ge=1,
        le=20,
        description="times each judgement is asked (each with its own seed; set the judge LLM's temperature above "
        "0 for replies that can differ): the means and CIs resample questions, then repeats, and each judge's "
        "self-agreement (Krippendorff's alpha) is reported; a judge whose alpha CI reaches 0 never decides a verdict",
    )
    prompts: JudgePrompts = Field(JudgePrompts(), description="the judges' prompt templates; default: LlamaIndex's")

    @field_validator("judges")
    @classmethod
    def _distinct(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("judges must be distinct")
        return v


class BERTScoreSpec(backend_default.AutoBackend):
    model: str = Field("minilm", description="'minilm' (bundled), an HF model id or a local path")
    num_layers: int | None = Field(None, gt=0, description="default: bert-score's tuned layer, or 6 for minilm")
    # never None once parsed: an unset backend is resolved by ``AutoBackend`` (the default only marks it unset)
    backend: Literal["torch", "onnx", "onnx-int8"] = Field(
        None,  # type: ignore[arg-type]
        description="torch (bert-score's runtime), onnx (ONNX Runtime, exported once into the cache) or "
        "onnx-int8 (int8 weights: fastest on a CPU; agreement in BENCHMARKS.md); unset: onnx-int8 on a machine "
        "without a GPU, torch with one (auto; RAGSWEEP_DEFAULT_BACKEND overrides)",
    )
    batch_size: int = Field(64, gt=0, description="pairs encoded at once (scores do not depend on it)")
    baseline: Literal["auto", "none"] = Field(
        "auto",
        description="auto: the *_rescaled columns rescale against bert-score's published baseline, else "
        "random sentence pairs of the corpus; none: raw scores only",
    )
    baseline_pairs: int = Field(500, gt=0, description="random sentence pairs for a corpus baseline")
    idf: Literal[False] = Field(False, description="IDF weighting: not supported (false only)")
    device: str | None = Field(None, description="cpu, cuda, ...; default: the GPU when torch sees one")


class ScoringSpec(Strict):
    bertscore: BERTScoreSpec = Field(
        default_factory=BERTScoreSpec, description="how answers are BERTScored against references"
    )
    bootstrap_samples: int = Field(1000, ge=100, description="resamples behind every confidence interval")
    confidence: float = Field(0.95, gt=0, lt=1, description="the confidence intervals' level")
    metric: str | None = Field(
        None,
        description="the metric the verdict decides by (chosen on validation, reported on test; `show`/`report "
        "--metric` override it); unset: MRR with the extractive generator and gold evidence spans, else BERTScore "
        "F1 (rescaled); the verdict says which and why",
    )
    alpha: float = Field(
        0.05,
        gt=0,
        lt=1,
        description="family-wise error rate of the verdict's paired tests "
        "(the best against each other configuration, Holm)",
    )
    max_missing: float = Field(
        0.2,
        ge=0,
        le=1,
        description="the largest share of its validation and test questions a configuration may be missing "
        "(failed or unanswered) and still be in the verdict; the verdict names the ones left out",
    )
