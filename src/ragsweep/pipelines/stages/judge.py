"""Judge (stage 2): select configurations on the validation questions, then judge them on a share of the validation
questions (where a verdict by a judge is chosen) and of the test ones (where it is reported).

Selection (``evaluation.selection``): rank by the stage-1 metric on validation questions; keep the
top N and every configuration not significantly worse than the N-th. Judging: LlamaIndex's
evaluators through the shared LLM client (cached, limited, retried, priced), many at once; every
judgement is journaled as it completes, so a killed stage 2 resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import TYPE_CHECKING

from ragsweep import tracing
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.run_state import RunState
from ragsweep.run_records import Stage2Record

if TYPE_CHECKING:
    from ragsweep.pipelines.plan import Unit
    from ragsweep.pipelines.plan_run import PlanRun


def judge_keys(spec) -> dict[str, str]:
    """Per judge, a hash of what determines its verdicts: judge model settings, prompt, threshold."""
    from ragsweep import __version__
    from ragsweep.evaluation.judge_forms import CORRECTNESS, VERDICT
    from ragsweep.evaluation.judges import prompt_texts
    from ragsweep.llm.identity import llm_identity

    s2 = spec.stage2
    llm = s2.llm or spec.llm
    texts = prompt_texts(s2.prompts)
    out = {}
    for name in s2.judges:
        ident = {
            "ragsweep": __version__,
            "judge": name,
            "llm": llm_identity(llm),
            "prompts": {k: v for k, v in texts.items() if k.startswith(name)},
            "threshold": s2.correctness_threshold if name == "correctness" else None,
            "reply_form": (CORRECTNESS if name == "correctness" else VERDICT).digest,  # a changed schema asks again
        }
        out[name] = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]
    return out


def select(spec, records, split: dict[str, str]):
    """The stage-2 selection from stage-1 records (validation questions only)."""
    from ragsweep.evaluation.selection import select_configurations
    from ragsweep.evaluation.test_options import TestOptions

    s2 = spec.stage2
    metric = s2.select_metric
    from ragsweep.baselines.rows import configurations

    ok = configurations(records[records["error"].isna()]) if not records.empty else records  # never a baseline
    val = ok[ok["qid"].map(split).eq("validation")] if not ok.empty else ok
    if val.empty or val[metric].notna().sum() == 0:
        raise RagsweepError(
            f"stage2.select_metric: {metric} has no values on the validation questions (no reference answers "
            "or no answers yet); choose a retrieval metric such as ndcg"
        )
    return select_configurations(
        val[["config_id", "qid", metric]],
        metric,
        top_n=s2.top_n,
        max_configs=s2.max_configs,
        tests=TestOptions.of(spec).at(s2.alpha),
    )


def judged_references(spec, configs) -> list:
    """The reference baselines stage 2 judges beside its selection: all of them with an LLM generator; with the
    extractive one not no_retrieval, whose answers are empty by construction (nothing to judge)."""
    from ragsweep.pipelines.grid import is_baseline

    extractive = not spec.generator.calls_llm
    return [c for c in configs if is_baseline(c) and not (extractive and c.baseline == "no_retrieval")]


def judged_questions_of(spec, questions, split) -> list:
    """The validation and test questions stage 2 judges (``stage2.validation_share``, ``test_share``)."""
    from ragsweep.evaluation.stage2_questions import judged_questions

    s2 = spec.stage2
    shares = {"validation": s2.validation_share, "test": s2.test_share}
    return judged_questions(questions, split, shares, spec.seed)


def judged_ids(stage2: Stage2Record) -> list[str]:
    """The configurations stage 2 judged (its manifest record): its selection, then the reference baselines."""
    return list(stage2.get("selected") or []) + list(stage2.get("references") or [])


def contexts_of(payload: dict, docs: dict[str, str]) -> list[str]:
    """The retrieved chunk texts, cut from the corpus by their character offsets."""
    out = []
    for s in payload.get("sources") or []:
        text = docs.get(s.get("doc_id"))
        if text is not None and s.get("start") is not None and s.get("end") is not None:
            out.append(text[s["start"] : s["end"]])
    return out


def run_unit(run: PlanRun, _unit: Unit) -> None:
    """The judge unit: stage 2 over what stage 1 evaluated (``RunState.judged``), its record kept on the state."""
    st = run.st
    try:
        st.stage2_info, error = run_stage2(st)
    except RagsweepError as exc:  # (one it did not return): the record says why stage 2 stopped
        st.stage2_info = {"judge_keys": judge_keys(st.spec), "selected": [], "error": str(exc)}
        raise
    if error is not None:
        raise error


def run_stage2(st: RunState) -> tuple[Stage2Record, RagsweepError | None]:
    """Select among ``st.judged`` (what stage 1 evaluated) on the validation questions, then judge what is not
    judged yet on the test questions. Returns (info for the manifest, stopping error)."""
    from ragsweep.pipelines.outputs.records import build_records, question_rows

    spec, questions, configs, journal = st.spec, st.questions, st.judged, st.journal
    clients, split, scorer_key = st.clients, st.split, st.scorer_key

    records = build_records(
        question_rows(questions, split), [c.labels() for c in configs], journal, scorer_key, sources=False
    )
    try:
        selection = select(spec, records, split)
    except RagsweepError as exc:
        return {"error": str(exc)}, exc
    assert spec.stage2 is not None, "stage 2 runs with a stage2 section only"
    keys = judge_keys(spec)
    info: Stage2Record = {
        "metric": spec.stage2.select_metric,
        "rule": selection.rule,
        "selected": list(selection.selected),
        "ranking": json.loads(selection.ranking.to_json(orient="records")),
        "judge_keys": keys,
        "judges": list(spec.stage2.judges),
    }
    by_id = {c.config_id: c for c in configs}
    # the reference baselines are judged too, never selected: the judges' floor and ceiling (an LLM-only
    # correctness beside the pick's, as HyPA-RAG reports it)
    references = judged_references(spec, configs)
    info["references"] = [c.config_id for c in references]
    chosen = [by_id[i] for i in selection.selected] + references
    judged_qs = judged_questions_of(spec, questions, split)
    info["questions"] = {s: sum(split.get(q.qid) == s for q in judged_qs) for s in ("validation", "test")}
    info["repeats"] = repeats = spec.stage2.repeats
    answers = {(h, qid): p for h, qid, _, p in journal.answers({c.config_hash for c in chosen}) if not p.get("error")}
    made = journal.repeated_judgements(keys, repeats)
    todo = [
        (c, q, name, r)
        for c in chosen
        for q in judged_qs
        for name in spec.stage2.judges
        for r in range(repeats)
        if (c.config_hash, q.qid) in answers
        and not ((made.get((c.config_hash, q.qid, name)) or [None] * repeats)[r] or {}).get("ok")
    ]
    info["judgements_todo"] = len(todo)
    if repeats > 1:  # how much each judge disagrees with itself, over what is judged so far (the flags' source)
        info["self_agreement"] = agreement(spec, made)
    if not todo:
        return info, None
    assert clients is not None and (spec.stage2.llm or spec.llm) is not None, "stage 2 has its LLM"
    judge_llm = clients.get(spec.stage2.llm or spec.llm)  # type: ignore[arg-type]
    stop = asyncio.run(judge_all(st, todo, answers, judge_llm, keys))
    journal.flush()
    if repeats > 1:
        info["self_agreement"] = agreement(spec, journal.repeated_judgements(keys, repeats))
    return info, stop


def agreement(spec, made: dict) -> dict:
    """Per judge: Krippendorff's alpha of its repeats over every item judged more than once (interval for the
    correctness score, nominal for a YES/NO verdict), its CI, and the share of items that flip."""
    from ragsweep.evaluation.self_agreement import self_agreement

    out = {}
    for name in spec.stage2.judges:
        items = [
            [(p or {}).get("score") if (p or {}).get("status") == "ok" else None for p in payloads]
            for (_, _, j), payloads in sorted(made.items())
            if j == name
        ]
        sa = self_agreement(
            items,
            nominal=name != "correctness",
            n_boot=spec.scoring.bootstrap_samples,
            confidence=spec.scoring.confidence,
            seed=spec.seed,
        )
        out[name] = {**sa.as_dict(), "no_better_than_chance": sa.no_better_than_chance}
    return out


async def judge_all(st: RunState, todo: list, answers: dict, llm, keys: dict[str, str]) -> RagsweepError | None:
    """Every judgement of ``todo`` ((configuration, question, judge, repeat)) on ``answers``, many at once, each
    journaled under its judge's key as it completes; returns what stopped the pool (a budget, a refused key)."""
    from ragsweep.errors import short_reason
    from ragsweep.evaluation.judges import JudgeCase, build_judges, judge
    from ragsweep.history.base import in_full
    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError
    from ragsweep.llm.usage import Trace, llm_extra, llm_scope
    from ragsweep.pipelines.journal import repeat_name
    from ragsweep.pipelines.workpool import drain

    spec, journal, stats, bars = st.spec, st.journal, st.stats, st.bars
    s2 = spec.stage2
    assert s2 is not None, "stage 2 runs with a stage2 section only"
    evaluators = build_judges(s2.judges, llm, s2.prompts, s2.correctness_threshold)
    docs = {d.doc_id: d.text for d in st.dataset.documents}
    bar = bars.add("stage 2 (LLM judges)", len(todo))

    async def judge_one(item) -> None:
        config, q, name, r = item
        payload = answers[(config.config_hash, q.qid)]
        trace = Trace()
        # a repeat is asked with its own seed (the judge LLM's plus its number): a call of its own, not the cache's
        extra = {"seed": (llm.additional_kwargs.get("seed") or 0) + r} if r else {}
        try:
            with llm_scope(trace, stage="judge", judge=name, config_id=config.config_id), llm_extra(**extra):
                # a follow-up is judged with the conversation it follows (it means nothing alone)
                case = JudgeCase(
                    in_full(q), payload.get("answer") or "", contexts_of(payload, docs), q.reference_answer
                )
                result = await judge(name, evaluators[name], case, threshold=s2.correctness_threshold)
            stats.judged += 1
        except (BudgetExhausted, LLMFatalError):
            raise  # stops the pool; this judgement stays pending
        except Exception as exc:  # noqa: BLE001 - one judgement failing must not lose the rest
            result = {"status": "failed", "reason": short_reason(exc), "score": None, "passing": None, "raw": None}
            stats.judge_failed += 1
        journal.add_judgement(
            config.config_hash, q.qid, repeat_name(name, r), keys[name], {**result, "llm": trace.as_dict()}
        )
        tracing.judged(config, q, name, r, result, trace.as_dict())  # off: one check
        bars.advance(bar, 1)

    return await drain(todo, judge_one, 2 * llm._engine.spec.concurrency)
