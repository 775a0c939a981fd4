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
- **With stage 2 judging validation questions: its first judge** (correctness, else faithfulness, else relevancy),
  chosen on the judged validation questions and reported on the judged test ones. A judge with no figures, or one
  shown to be no better than chance (its self-agreement across repeats, or its agreement with imported human
  labels, has a CI reaching 0), never decides: the verdict falls back to the stage-1 choice above and says why
  (``fallback``).
"""

from __future__ import annotations

from ragsweep.run_records import Stage2Record

EXTRACTIVE_METRIC = "mrr"
TEXT_METRIC = "bertscore_f1_rescaled"


JUDGE_ORDER = {"correctness": "correctness", "faithfulness": "faithfulness", "relevancy": "relevancy"}


def choose(
    explicit: str | None, generator: str, spans: bool, judges: tuple[str, ...] = (), judged_validation: bool = False
) -> tuple[str, str]:
    """``(metric, why)``: the spec's ``scoring.metric`` when set, else the data's (see the module); ``judges``:
    stage 2's, which decide when ``judged_validation`` (a share of the validation questions is judged)."""
    if explicit:
        return explicit, "scoring.metric"
    judge = next((m for j, m in JUDGE_ORDER.items() if j in judges), None)
    if judge is not None and judged_validation:
        return judge, (
            f"scoring.metric is unset and stage 2 judges validation and test questions, so its {judge} judge "
            "decides: chosen on the judged validation questions, reported on the judged test ones"
        )
    return stage1(generator, spans)


def stage1(generator: str, spans: bool) -> tuple[str, str]:
    """The data's choice among the stage-1 metrics (see the module)."""
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
    s2 = spec.stage2
    judges = tuple(s2.judges) if s2 is not None and not spec.search.searching else ()  # a search's is stage 1's
    return choose(spec.scoring.metric, spec.generator.kind, spans, judges, s2 is not None and s2.validation_share > 0)


def fallback(judge: str, reason: str, generator: str, spans: bool) -> tuple[str, str]:
    """The stage-1 metric a verdict decides by when the judge that was to decide cannot, and why."""
    metric, why = stage1(generator, spans)
    return (
        metric,
        f"the {judge} judge cannot decide it ({reason}), so {why.removeprefix('scoring.metric is unset and ')}",
    )


def resolved(spec, metric: str):
    """``spec`` with ``scoring.metric`` set to ``metric`` (what every stage and output reads)."""
    if spec.scoring.metric == metric:
        return spec
    return spec.model_copy(update={"scoring": spec.scoring.model_copy(update={"metric": metric})})


def judge_of(metric: str) -> str | None:
    """The judge whose figure ``metric`` is (``correctness_pass`` -> correctness), None for a stage-1 metric."""
    from ragsweep.metrics.catalogue import BY_NAME

    m = BY_NAME.get(metric)
    return m.judge if m is not None else None


def settle(metric: str, why: str, verdict_for, flags: dict[str, str], generator: str, spans: bool):
    """``(verdict, why)`` by ``metric`` (``verdict_for(metric)``), unless it is a judge's that cannot decide: one
    flagged (``flags``: judge -> why it is no better than chance) or with no figures; then by the stage-1 metric,
    and ``why`` says so."""
    verdict = verdict_for(metric)
    judge = judge_of(metric)
    if judge is None:
        return verdict, why
    reason = flags.get(judge) or (None if verdict.chosen is not None else "it has no figures on the judged questions")
    if reason is None:
        return verdict, why
    metric, why = fallback(judge, reason, generator, spans)
    return verdict_for(metric), why


def spans_in(records) -> bool:
    """Whether the records have retrieval figures: some question had gold evidence spans."""
    return "hit" in records.columns and bool(records["hit"].notna().any())


def agreement_flags(stage2: Stage2Record | None) -> dict[str, str]:
    """Per judge shown no better than chance by stage 2 (its self-agreement across repeats), why."""
    out = {}
    for judge, agreement in ((stage2 or {}).get("self_agreement") or {}).items():
        if agreement.get("alpha") is None:
            out[judge] = (
                "its self-agreement across repeats is undefined: fewer than two answers judged twice, or one value "
                "everywhere"
            )
        elif agreement.get("no_better_than_chance"):
            out[judge] = "its self-agreement across repeats (Krippendorff's alpha) has a CI reaching 0"
    return out


def constant_flags(records, metric: str) -> dict[str, str]:
    """A judge whose every figure on the judged questions is the same says nothing of which configuration is better
    (a judge that passes everything, a scripted one): it does not decide."""
    from ragsweep.baselines.rows import configurations

    judge = judge_of(metric)
    if judge is None or metric not in records.columns:
        return {}
    values = configurations(records)[metric].dropna()  # the reference baselines never decide anything
    if len(values) and values.nunique() == 1:
        return {judge: f"every judged answer got the same {metric}, {float(values.iloc[0]):g}"}
    return {}
