"""The LLM generator: passages of the corpus, one prompt per wanted question, replies turned into candidates.

Passages are LlamaIndex ``SentenceSplitter`` chunks of ``generate.passage_tokens``, in a seeded order that
takes each document in turn (so a long document does not crowd out the others). Every prompt goes through
the run's LLM client (cache, concurrency, rate limits, budget); a re-run with the same settings is answered
from the cache.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from ragsweep.generate import prompts
from ragsweep.generate.candidates import Candidate, Quote

MIN_PASSAGE_WORDS = 20


@dataclass(frozen=True)
class Passage:
    doc_id: str
    title: str
    text: str


class PassageCursor:
    """Hands out passages in a seeded, document-interleaved order, each at most once."""

    def __init__(self, documents, titles: dict[str, str], tokens: int, seed: int) -> None:
        from llama_index.core.node_parser import SentenceSplitter

        splitter = SentenceSplitter(chunk_size=tokens, chunk_overlap=0)
        rng = random.Random(f"{seed}:passages")
        per_doc = []
        for d in sorted(documents, key=lambda d: d.doc_id):
            ps = [
                Passage(d.doc_id, titles[d.doc_id], t)
                for t in splitter.split_text(d.text)
                if len(t.split()) >= MIN_PASSAGE_WORDS
            ]
            rng.shuffle(ps)
            if ps:
                per_doc.append(ps)
        rng.shuffle(per_doc)
        self.order: list[Passage] = []
        for i in range(max((len(p) for p in per_doc), default=0)):
            self.order += [p[i] for p in per_doc if i < len(p)]
        self.used: set[int] = set()

    def take(self, two: bool = False, same_doc: bool = True) -> list[Passage] | None:
        """One passage, or two (of one document, or of two documents); None when none are left."""
        free = [i for i in range(len(self.order)) if i not in self.used]
        if not free:
            return None
        first = free[0]
        picked = [first]
        if two:
            want = (
                (lambda p: p.doc_id == self.order[first].doc_id)
                if same_doc
                else (lambda p: p.doc_id != self.order[first].doc_id)
            )
            second = next((i for i in free[1:] if want(self.order[i])), None)
            if second is None and not same_doc:
                return None
            if second is not None:
                picked.append(second)
        self.used.update(picked)
        return [self.order[i] for i in picked]


def prompt_for(qtype: str, cursor: PassageCursor) -> tuple[str, list[Passage]] | None:
    two = qtype in prompts.TWO_PASSAGES
    got = cursor.take(two=two, same_doc=qtype != "comparative")
    if got is None:
        return None
    return prompts.build(qtype, [(p.title, p.text) for p in got]), got


def candidate(qtype: str, passages: list[Passage], parsed: dict | None, model: str) -> Candidate | None:
    """A reply read in ``prompts.QUESTION_FORM`` as a candidate question (None when it could not be read)."""
    if parsed is None:
        return None
    quotes = []
    for number, text in parsed["quotes"]:
        p = passages[number - 1] if number is not None and 1 <= number <= len(passages) else passages[0]
        quotes.append(Quote(text, p.doc_id))
    source: dict = {"passages": [p.doc_id for p in passages], "model": model}
    if parsed["absent_terms"]:
        source["absent_terms"] = parsed["absent_terms"]
    question, history = parsed["question"], list[dict]()
    split = prompts.follow_up(question) if qtype == "conversational" else None
    if split is not None:  # "Earlier: ... Follow-up: ...": the follow-up, with its conversation (else the checks
        question, history = split  # reject it: a follow-up needs the question it follows)
    return Candidate(
        qtype,
        "llm",
        question,
        parsed["answer"],
        quotes,
        doc_id=passages[0].doc_id if qtype != "out_of_scope" else None,
        source=source,
        history=history,
    )


async def ask_all(llm, prompt_texts: list[str], trace) -> tuple[list, BaseException | None]:
    """Each prompt's ``ask.Reply`` (read in ``prompts.QUESTION_FORM``, one repair re-ask for an unreadable one)
    or the exception its call ended with, and the stop (budget, refused key) if one came: the replies that did
    arrive are kept (they are paid for, and cached)."""
    from ragsweep.llm.ask import aask_text
    from ragsweep.llm.budget import BudgetExhausted
    from ragsweep.llm.engine import LLMFatalError
    from ragsweep.llm.usage import llm_scope

    async def one(prompt: str):
        with llm_scope(trace, stage="generate", config_id=None):
            return await aask_text(llm, prompt, prompts.QUESTION_FORM)

    results = await asyncio.gather(*(one(p) for p in prompt_texts), return_exceptions=True)
    return results, next((r for r in results if isinstance(r, (BudgetExhausted, LLMFatalError))), None)
