"""``generate_questions``: from documents and a ``generate:`` section to checked questions and a summary.

Quotas per type come from the mix (largest remainder). Candidates are taken in order; each is checked
(``verify.Checker``: no placeholder or prompt text, its evidence located in the corpus, or its out-of-scope
terms verified absent), then compared with the questions already kept (``dedup.NearDuplicates``). What
fails is counted by reason and kept for the user to read (``rejected``). The offline generator draws
from a finite pool per type; the LLM generator asks for ``oversample`` x the wanted questions and, in
later rounds, replaces what was rejected.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from dataclasses import dataclass, field

from ragsweep.config import GenerateSpec
from ragsweep.datasets.types import Document
from ragsweep.generate.candidates import Candidate
from ragsweep.generate.dedup import NearDuplicates
from ragsweep.generate.verify import Checker

POOL_FACTOR, MIN_POOL = 5, 200  # offline: candidates drawn per type, per wanted question / at least
EXAMPLES = 3  # rejected questions kept per reason in the summary


def quotas(weights: dict[str, float], total: int) -> dict[str, int]:
    """Questions per type: ``total`` split by ``weights`` with largest remainders (ties: the mix's order)."""
    raw = {t: w * total for t, w in weights.items()}
    out = {t: int(math.floor(v)) for t, v in raw.items()}
    order = sorted(raw, key=lambda t: -(raw[t] - out[t]))
    for t in order[: total - sum(out.values())]:
        out[t] += 1
    return out


@dataclass
class Outcome:
    questions: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    summary: dict = field(default_factory=dict)
    stopped: BaseException | None = None  # the budget or a refused key ended generation early


class _Selection:
    """Candidates checked, deduplicated and kept per type up to its quota."""

    def __init__(self, spec: GenerateSpec, documents: list[Document], wanted: dict[str, int]) -> None:
        self.wanted = wanted
        self.checker = Checker({d.doc_id: d.text for d in documents}, spec.fuzzy_evidence, spec.min_evidence_chars)
        self.dedup = NearDuplicates(spec.near_duplicate)
        self.kept: list[dict] = []
        self.count: Counter = Counter()
        self.reasons: Counter = Counter()
        self.rejected: list[dict] = []
        self.checked = 0
        self.failed = 0  # LLM calls that ended in an error

    def short(self, qtype: str) -> int:
        return self.wanted.get(qtype, 0) - self.count[qtype]

    def reject(self, c: Candidate | None, reason: str, qtype: str, reply: str | None = None) -> None:
        kind = reason.split(":")[0]
        self.reasons[kind] += 1
        row: dict[str, object] = {"type": qtype, "reason": reason}
        if c is not None:
            row.update(
                question=c.question,
                method=c.method,
                reference_answer=c.reference_answer,
                evidence=[q.text for q in c.quotes],
                source=c.source,
                **({"history": c.history} if c.history else {}),
            )
        if reply is not None:
            row["reply"] = reply[:2000]
        self.rejected.append(row)

    def consider(self, c: Candidate) -> bool:
        """Check ``c`` and keep it if it passes and its type still wants questions."""
        if self.short(c.qtype) <= 0:
            return False
        self.checked += 1
        qid = f"gen-{len(self.kept) + 1:04d}"
        spans, reason = self.checker.check(qid, c)
        if reason is None and not self.dedup.add_if_new(c.question):
            reason = "near-duplicate"
        if reason is not None:
            self.reject(c, reason, c.qtype)
            return False
        texts = self.checker.documents
        self.kept.append(
            {
                "id": qid,
                "question": c.question,
                "reference_answer": c.reference_answer,
                "type": c.qtype,
                "method": c.method,
                "evidence": [
                    {"doc_id": s.doc_id, "start": s.start, "end": s.end, "text": texts[s.doc_id][s.start : s.end]}
                    for s in spans
                ],
                **({"history": c.history} if c.history else {}),
                **({"source": c.source} if c.source else {}),
            }
        )
        self.count[c.qtype] += 1
        return True


def document_titles(documents: list[Document]) -> dict[str, str]:
    from ragsweep.splitters.context_prefix import document_title

    return {d.doc_id: document_title(d) for d in documents}


def offline(spec: GenerateSpec, documents: list[Document], sel: _Selection) -> None:
    from itertools import islice

    from ragsweep.generate.facts import document_facts
    from ragsweep.generate.offline import OfflineRecipes

    titles = document_titles(documents)
    recipes = OfflineRecipes(
        [document_facts(d.doc_id, titles[d.doc_id], d.text) for d in documents], tuple(spec.methods), spec.seed
    )
    pools = {t: list(islice(recipes.stream(t), max(MIN_POOL, POOL_FACTOR * q))) for t, q in sel.wanted.items()}
    sel.dedup.fit([c.question for pool in pools.values() for c in pool])
    for t, pool in pools.items():
        for c in pool:
            if sel.short(t) <= 0:
                break
            sel.consider(c)


def llm_rounds(spec: GenerateSpec, documents: list[Document], sel: _Selection, llm, trace, say) -> BaseException | None:
    """Rounds of prompts until every type has its questions, the passages or rounds run out, or a stop."""
    from ragsweep.generate.llm_source import PassageCursor, ask_all, candidate, prompt_for
    from ragsweep.generate.placeholders import unparseable

    cursor = PassageCursor(documents, document_titles(documents), spec.passage_tokens, spec.seed)
    for rnd in range(spec.rounds):
        asked: list[tuple[str, list]] = []
        texts: list[str] = []
        for t in sel.wanted:
            need = sel.short(t)
            for _ in range(math.ceil(need * (spec.oversample if rnd == 0 else 1.0))):
                got = prompt_for(t, cursor)
                if got is None:
                    break
                texts.append(got[0])
                asked.append((t, got[1]))
        if not texts:
            return None
        replies, stop = asyncio.run(ask_all(llm, texts, trace))
        cands: list[tuple[str, Candidate | None, str, str]] = []
        failed = 0
        for (t, passages), prompt, reply in zip(asked, texts, replies):
            if isinstance(reply, BaseException):
                failed += 1
                continue
            cands.append((t, candidate(t, passages, reply.value, llm.model), reply.raw, prompt))
        sel.failed += failed
        sel.dedup.fit([c.question for _, c, _, _ in cands if c is not None])
        before = len(sel.kept)
        for t, c, raw, prompt in cands:
            if c is None:
                sel.reject(None, unparseable(raw, prompt), t, raw)
            else:
                sel.consider(c)
        say(
            f"round {rnd + 1}: {len(texts)} prompts, {len(sel.kept) - before} questions kept"
            + (f", {failed} calls failed" if failed else "")
        )
        if stop is not None:
            return stop
        if all(sel.short(t) <= 0 for t in sel.wanted):
            return None
    return None


def generate_questions(spec: GenerateSpec, documents: list[Document], *, llm=None, say=lambda line: None) -> Outcome:
    """Questions of ``spec``'s mix over ``documents`` (``llm``: a ``SweepLLM`` for ``generator: llm``)."""
    from ragsweep.llm.usage import Trace

    wanted = quotas(spec.weights(), spec.questions)
    sel = _Selection(spec, documents, wanted)
    trace = Trace()
    stop = None
    if spec.generator == "offline":
        offline(spec, documents, sel)
    else:
        stop = llm_rounds(spec, documents, sel, llm, trace, say)
    per_type = {t: {"wanted": q, "written": sel.count[t]} for t, q in wanted.items()}
    summary = {
        "generator": spec.generator,
        "model": getattr(llm, "model", None),
        "seed": spec.seed,
        "wanted": spec.questions,
        "written": len(sel.kept),
        "per_type": per_type,
        "checked": sel.checked,
        "rejected": dict(sorted(sel.reasons.items())),
        "evidence_tiers": sel.checker.tiers(),
        "examples": {k: [r for r in sel.rejected if r["reason"].split(":")[0] == k][:EXAMPLES] for k in sel.reasons},
        "shortfall": {t: q["wanted"] - q["written"] for t, q in per_type.items() if q["written"] < q["wanted"]},
        "settings": spec.model_dump(mode="json", exclude={"llm"}),
    }
    if spec.generator == "llm":
        summary["llm"] = trace.as_dict()
        summary["failed_calls"] = sel.failed
    if stop is not None:
        summary["stopped"] = str(stop)
    return Outcome(sel.kept, sel.rejected, summary, stop)
