"""The metric a verdict decides by when ``scoring.metric`` is unset: one that follows the data (pure).

- **The extractive generator, with gold evidence spans: MRR.** Its answer is the retrieved sentences that best
  match the question, so every configuration's answer is a near-copy of the same few sentences and a text
  similarity to the reference (BERTScore F1) barely moves: on a held-out LegalBench-RAG set it tied all 27
  configurations where hit separated 14. What differs between configurations is where the evidence ranks. MRR
  (Voorhees 1999, the TREC-8 QA track) is the reciprocal rank of the first retrieved chunk that overlaps the
  gold evidence: graded, where hit is 0/1; top-heavy, as an extractive answer reads the top chunks; and defined
  by the first relevant chunk alone, so it does not depend on how many chunks the gold span happens to be cut
  into, which nDCG's ideal ranking does (docs/statistics.md).
- **An LLM generator: BERTScore F1** against the reference answers (rescaled), as the mission has it: the answer
  is written, and its text is what is judged.
- Otherwise (no gold evidence spans, e.g. questions with reference answers only): BERTScore F1.

Stage 2's judges decide a verdict once it can be chosen on judged validation questions; until then the judges'
figures are reported beside it (issue 40).
"""

from __future__ import annotations

EXTRACTIVE_METRIC = "mrr"
TEXT_METRIC = "bertscore_f1_rescaled"


def choose(explicit: str | None, generator: str, spans: bool) -> tuple[str, str]:
    """``(metric, why)``: the spec's ``scoring.metric`` when set, else the data's (see the module)."""
    if explicit:
        return explicit, "scoring.metric"
    if generator != "llm" and spans:
        return EXTRACTIVE_METRIC, (
            "scoring.metric is unset and the extractive generator's answers are copies of what it retrieved, so "
            "the verdict decides by where the gold evidence ranks (MRR)"
        )
    if generator == "llm":
        return TEXT_METRIC, "scoring.metric is unset and an LLM writes the answers: their text against the reference"
    return TEXT_METRIC, "scoring.metric is unset and the questions have no gold evidence spans to rank by"


def for_run(spec, dataset) -> tuple[str, str]:
    """``choose`` for a spec and its dataset (gold evidence spans: some question has one)."""
    spans = any(q.evidence for q in dataset.questions)
    return choose(spec.scoring.metric, spec.generator.kind, spans)


def resolved(spec, metric: str):
    """``spec`` with ``scoring.metric`` set to ``metric`` (what every stage and output reads)."""
    if spec.scoring.metric == metric:
        return spec
    return spec.model_copy(update={"scoring": spec.scoring.model_copy(update={"metric": metric})})
