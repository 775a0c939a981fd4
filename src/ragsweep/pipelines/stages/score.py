"""Score: BERTScore every answer against its reference, each distinct (answer, reference) pair once (cached
across configurations, runs and sweeps), rescaled by the backbone's baseline."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from ragsweep.pipelines.context import StageContext

if TYPE_CHECKING:
    from ragsweep.pipelines.plan import Unit
    from ragsweep.pipelines.plan_run import PlanRun


class Blocks(NamedTuple):
    """Where the uncached pairs are scored, the executor's choice: ``run`` takes blocks of ``size`` pairs and
    yields (index, scores) as each finishes (Ray tasks); None scores them in this process."""

    run: Callable | None = None
    size: int = 4096


def run_unit(run: PlanRun, _unit: Unit) -> None:
    """The score unit, in this process (an executor may score the blocks elsewhere: ``score_answers``)."""
    st = run.st
    score_answers(st.ctx, run.questions, todo_of(run), st.journal, st.scorer_key)


def todo_of(run: PlanRun) -> list[tuple[str, str, str]]:
    """What the score unit of ``run`` scores: every answer of its configurations on its questions without a score
    (as an earlier invocation left them, found when it planned: ``RunState.unscored_before``)."""
    st = run.st
    before = None if run.trial else st.unscored_before
    return before if before is not None else unscored(st.journal, run.questions, run.plan.configs, st.scorer_key)


def unscored(journal, questions, configs, scorer_key: str) -> list[tuple[str, str, str]]:
    """(configuration hash, qid, answer text) of every journaled answer without a score made with the
    current settings (a score made with another backbone, layer or baseline is redone)."""
    hashes = {c.config_hash for c in configs}
    qids = {q.qid for q in questions}
    keys = {(h, qid) for h, qid in journal.unscored(scorer_key) if h in hashes and qid in qids}
    return journal.answer_texts(keys) if keys else []


def score_answers(
    ctx: StageContext,
    questions,
    todo: list[tuple[str, str, str]],
    journal,
    scorer_key: str,
    blocks: Blocks = Blocks(),
) -> None:
    """BERTScore the answers ``unscored`` listed (``todo``) and journal the scores; identical pairs are
    scored once, the uncached ones in ``blocks``."""
    if not todo:
        return
    from ragsweep.evaluation.bertscore import BERTScoreRunner, release_encoder, score_fields
    from ragsweep.pipelines.extractive import sentences

    qs = {q.qid: q for q in questions}
    runner = BERTScoreRunner(ctx.spec.scoring.bertscore, ctx.cache.bertscore)
    try:
        pairs, index = _pairs(todo, qs)
        n_unique = len(set(pairs))
        bar = ctx.bars.add("scoring (BERTScore)", n_unique)
        raw = runner.score(
            pairs, progress=lambda n, _total: ctx.bars.advance(bar, n), run_blocks=blocks.run, block=blocks.size
        )
        ctx.stats.bertscore_pairs_computed += runner.computed
        ctx.stats.bertscore_pairs_total += n_unique
        dataset = ctx.dataset
        base = runner.baseline(
            lambda: [s for d in dataset.documents for s in sentences(d.text)],
            dataset.corpus_fingerprint(),
            seed=ctx.spec.seed,
            run_blocks=blocks.run,
        )
        for (h, qid, _), i in zip(todo, index):
            ref = qs[qid].reference_answer or ""
            if i is not None:
                fields = score_fields(raw[i], base)
            elif ref.strip():  # empty answer against a real reference: bert-score's convention is 0
                fields = score_fields((0.0, 0.0, 0.0), base)
            else:  # no reference answer: BERTScore is undefined for this question
                fields = score_fields(None, base)
            journal.add_score(
                h,
                qid,
                {
                    **fields,
                    "baseline": [base.p, base.r, base.f],
                    "baseline_source": base.source,
                    "backbone": runner.model_id,
                    "layer": runner.num_layers,
                    "scorer": scorer_key,
                },
            )
        journal.flush()
    finally:
        runner.close()
        release_encoder(ctx.spec.scoring.bertscore)  # a Ray worker keeps its own (``score_block``)


def _pairs(todo: list[tuple[str, str, str]], qs: dict) -> tuple[list[tuple[str, str]], list[int | None]]:
    """The (answer, reference) pairs to score, and for each row of ``todo`` its pair's index (None: an
    empty answer or reference, not scored)."""
    pairs: list[tuple[str, str]] = []
    index: list[int | None] = []
    for _h, qid, answer in todo:
        ref = qs[qid].reference_answer or ""
        if answer.strip() and ref.strip():
            index.append(len(pairs))
            pairs.append((answer, ref))
        else:
            index.append(None)
    return pairs, index
