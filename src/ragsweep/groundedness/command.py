"""``ragsweep judges evaluate LABELS``: each detector scored on the labelled items, then checked against the
labels (``meta.evaluate``); the LLM ones run on the spec's judge LLM (``stage2.llm``, else ``llm``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ragsweep.errors import RagsweepError


def choose(names: str | None, spec) -> list[str]:
    from ragsweep.groundedness.detectors.registry import ALL, needs_llm, offline, with_llm

    if names is None:
        return offline() + (with_llm() if spec is not None and _judge_llm(spec) is not None else [])
    chosen = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in ALL]
    if unknown:
        raise RagsweepError(f"--detectors: unknown {unknown[0]!r}; choose from {', '.join(ALL)}")
    if any(needs_llm(n) for n in chosen) and (spec is None or _judge_llm(spec) is None):
        raise RagsweepError(
            "--detectors: llm_faithfulness, claims and llm_correctness need an LLM; give --spec with "
            "an llm: (or stage2.llm:) section"
        )
    return chosen


def _judge_llm(spec):
    return (spec.stage2.llm if spec.stage2 is not None else None) or spec.llm


@dataclass(frozen=True)
class EvaluationOptions:
    """How ``evaluate_labels`` runs: the ``judges evaluate`` flags past LABELS (``spec_path``: the spec whose LLM
    runs the LLM detectors; ``detectors``: comma-separated names, None for the default ones; ``dev_fraction`` and
    ``seed``: the dev/test split and the bootstrap; ``cache``, ``budget``: the LLM's; ``n_boot``: bootstrap
    resamples; ``repeats``: of each LLM detector). One bundle for the command and the detector benchmark."""

    spec_path: Path | None
    detectors: str | None
    dev_fraction: float
    seed: int
    cache: Path | None
    budget: float | None
    n_boot: int = 1000
    repeats: int = 1


def evaluate_labels(labels: str, options: EvaluationOptions, say=lambda line: None) -> dict:
    """Score every item with every chosen detector and evaluate each against the labels; a JSON-ready dict."""
    from dataclasses import asdict

    from ragsweep.config import JudgePrompts
    from ragsweep.groundedness import meta
    from ragsweep.groundedness.detectors.registry import build, needs_llm
    from ragsweep.groundedness.labels import load_labels

    o, items = options, load_labels(labels)
    spec = None
    if o.spec_path is not None:
        from ragsweep.config import load_spec

        spec = load_spec(o.spec_path, questions_needed=False)
    names = choose(o.detectors, spec)
    if not 0 < o.dev_fraction < 1:
        raise RagsweepError(f"--dev-fraction: {o.dev_fraction} must be between 0 and 1, e.g. 0.5")
    labelled = meta.LabelledSplit(items, *meta.split(items, o.dev_fraction, o.seed))
    clients, llm, price = None, None, None
    if any(needs_llm(n) for n in names):
        clients, llm, price = _llm(spec, o.cache, o.budget)
    rows, scores, endpoints = [], {}, []
    try:
        for name in names:
            prompts = spec.stage2.prompts if spec is not None and spec.stage2 is not None else JudgePrompts()
            det = build(name, llm=llm, prompts=prompts, price=price)
            t0 = time.perf_counter()
            runs = repeated(det, items, o.repeats if needs_llm(name) else 1, llm)
            scored = mean_of(runs)
            say(
                f"{name}: scored {sum(s.score is not None for s in scored)}/{len(items)} items in "
                f"{time.perf_counter() - t0:.1f} s" + (f" ({len(runs)} repeats)" if len(runs) > 1 else "")
            )
            scores[name] = [asdict(s) for s in scored]
            row = meta.evaluate(name, det.label, labelled, scored, n_boot=o.n_boot, seed=o.seed)
            if len(runs) > 1:
                nominal = det.label == "grounded" and name != "claims"
                row.self_agreement = agreement_of(runs, nominal=nominal, seed=o.seed)
            rows.append(row)
    finally:
        if clients is not None:
            endpoints = [engine.describe() for engine in clients.engines]
            _say_endpoints(endpoints, say)
            clients.close()
    return {
        "labels": str(labels),
        "items": len(items),
        "dev": len(labelled.dev),
        "test": len(labelled.test),
        "seed": o.seed,
        "judge_model": None if llm is None else llm.model,
        "categories": sorted({it.category for it in items if it.category}),
        "rows": [asdict(r) for r in rows],
        "scores": {n: dict(zip([it.id for it in items], s)) for n, s in scores.items()},
        "llm_endpoints": endpoints,
    }


def _say_endpoints(endpoints: list[dict], say) -> None:
    """What each LLM endpoint did, when it did more than answer (queueing, waits, timeouts, cut replies, how
    formed replies were held to their schema)."""
    from ragsweep.llm.endpoint_text import endpoint_line

    for e in endpoints:
        if line := endpoint_line(e):
            say(line)


def _llm(spec, cache: Path | None, budget: float | None):
    from ragsweep.cache_dir import DEFAULT_CACHE, CacheDir
    from ragsweep.llm.clients import LLMClients, api_key_for
    from ragsweep.llm.pricing import price_for

    judge = _judge_llm(spec)
    api_key_for(judge, "stage2.llm" if spec.stage2 is not None and spec.stage2.llm else "llm")
    price = price_for(judge.model, spec.prices)
    if budget is not None and price is None:
        raise RagsweepError(
            f"--budget: model {judge.model!r} has no price, so spending cannot be bounded; add it to "
            "the spec's prices (USD per million tokens)"
        )
    root = CacheDir(Path(cache or spec.cache_dir or DEFAULT_CACHE))
    root.root.mkdir(parents=True, exist_ok=True)
    clients = LLMClients(spec, root.llm_calls, run_id=f"judges-{int(time.time())}", budget_usd=budget)
    return clients, clients.get(judge), price


def repeated(det, items, repeats: int, llm) -> list[list]:
    """The detector's scores ``repeats`` times, each repeat after the first with its own seed (a call of its own)."""
    from ragsweep.llm.usage import llm_extra

    base = (getattr(llm, "additional_kwargs", None) or {}).get("seed") or 0  # the judge LLM's own seed
    runs = []
    for r in range(repeats):
        with llm_extra(**({"seed": base + r} if r else {})):
            runs.append(det.score_all(items))
    return runs


def mean_of(runs: list[list]) -> list:
    """Per item: the mean of the repeats' scores that were measured, their summed time and cost; unmeasured (the
    first repeat's reason) when none was."""
    from ragsweep.groundedness.detectors.base import Scored

    if len(runs) == 1:
        return runs[0]
    out = []
    for per in zip(*runs):
        got = [s.score for s in per if s.score is not None]
        costs = [s.cost_usd for s in per if s.cost_usd is not None]
        out.append(
            Scored(
                sum(got) / len(got) if got else None,
                sum(s.ms for s in per),
                sum(costs) if costs else None,
                None if got else per[0].error,
            )
        )
    return out


def agreement_of(runs: list[list], *, nominal: bool, seed: int) -> dict:
    """Krippendorff's alpha of a detector's repeats over the items (``evaluation.self_agreement``)."""
    from ragsweep.evaluation.self_agreement import self_agreement

    sa = self_agreement([[s.score for s in per] for per in zip(*runs)], nominal=nominal, seed=seed)
    return {**sa.as_dict(), "no_better_than_chance": sa.no_better_than_chance}
