"""Degenerate LLM answers: an answer that echoes its prompt, or that is mostly a verbatim copy of the context.

A small generator (SmolLM2-135M through llama.cpp, say) often does not answer at all: it repeats the prompt it
was given, instructions and retrieved passages included. Such an answer holds every word of the reference
answer, so a similarity metric rewards it (a rescaled BERTScore F1 up to .52 was seen), and a sweep would pick
the configuration on that basis. Two flags make it visible, per answer (journaled by the generate stage as
``echoed_prompt`` and ``copied_context``, 1/0) and per configuration (counts and rates in the summary, a note
in the verdict):

- ``echoes_prompt``: the answer reproduces the prompt's **scaffolding**, the text of the generator's template
  with its ``{context_str}`` / ``{query_str}`` slots taken out (``scaffolding``): one of its instruction lines
  (``MIN_INSTRUCTION_WORDS`` words or more, e.g. "Given the context information and not prior knowledge,
  answer the query."), one of its separator lines ("---------------------"), one of its labels (a line of at
  most ``MAX_LABEL_WORDS`` words ending with a colon: "Query:", "Some rules to follow:") at the start of a line
  of the answer (a leading "Answer:", the label of the answer's own slot, is allowed), or the query line
  restated ("Query: <the question>"). With no template file (``template`` None) the scaffolding is
  LlamaIndex's: its default text-QA template and, since the sweep's LLM is a chat model, the system prompt
  LlamaIndex sends with it. A whole instruction line must be reproduced (case and spacing aside, punctuation
  kept), so an answer that uses a few of its words is not an echo, nor is a refusal that gives the refusal
  sentence the template asks for; a short instruction ("Be brief.") is too weak a sign and is not matched.
- ``copies_context``: most of the answer is verbatim context, and there is a lot of it. "Most": at least
  ``COPY_SHARE`` of the answer's character 21-grams occur in the contexts (QuIP, Weller et al. 2024,
  ``groundedness/detectors/quip.py``; 21 characters are 3-4 words, so shared stock phrases do not count).
  "A lot": the copied words (share x the answer's words) reach ``COPY_SENTENCES`` sentences' worth of the
  context, a sentence's worth being the context's word-weighted mean sentence length (the length of the
  sentence an average word of the context sits in; ``datasets.sentences``). The bar follows the documents'
  own style, so long legal sentences raise it: a faithful answer that quotes one sentence, however long by
  the context's standards, is not flagged, nor (mostly) a quote of two; an answer that pastes a chunk or
  several is. QuIP alone cannot tell them apart, as both score near 1. On the demo corpus in 256-token chunks,
  3 retrieved at a time: no single sentence is flagged, 0.3 % of sentence pairs, 5 % of runs of three
  sentences with a lead-in, 90 % of whole chunks and 99 % of two chunks pasted together.

- chat-template markup in the answer is an echo too: the turn and system markers of the common templates (Llama
  2's ``[INST]`` and ``<<SYS>>``, ChatML's ``<|im_start|>``, Gemma's ``<start_of_turn>``, Llama 3's
  ``<|start_header_id|>``; ``CHAT_MARKUP``), which a model whose server applied another template, or a base
  model, writes back (Gemma 3 270M under llama-cpp-python's Llama 2 fallback opened every answer so).
- ``loops``: the answer restates itself: some run of ``LOOP_WORDS`` words comes back ``LOOP_TIMES`` times or
  more ("Q: ... A: Q: ... A: ..."), or it restates the question twice. An answer cut at ``max_tokens`` is
  flagged apart (``truncated``, from the reply's ``finish_reason``); the verdict counts both beside these.

Extractive answers (``pipelines/stages/answer.py``) are copies of the context by construction: they are not
flagged (their payloads have no such fields: NaN in the records). Pure but for ``answer_flags``, which reads the
generator's template file.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from ragsweep.groundedness.detectors.quip import quip_score
from ragsweep.groundedness.text_norm import normalised as _norm

MIN_INSTRUCTION_WORDS = 4  # a template line this long is an instruction ("Context information is below.")
MAX_LABEL_WORDS = 4  # a line this short ending with ":" is a label ("Query:", "Some rules to follow:")
MIN_RULE_CHARS = 8  # a line of punctuation only this long is a separator ("---------------------")
COPY_SHARE = 0.5  # most of the answer: a majority of its character 21-grams in the contexts (QuIP)
COPY_SENTENCES = 3  # and at least this many of the context's sentences' worth of copied words
SLOTS = ("context_str", "query_str")
# the turn and system markers of the common chat templates: Llama 2, ChatML, Gemma, Llama 3 (and Mistral's)
CHAT_MARKUP = (
    "[INST]",
    "[/INST]",
    "<<SYS>>",
    "<</SYS>>",
    "<|im_start|>",
    "<|im_end|>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<|begin_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
)
LOOP_WORDS = 6  # a run of this many words ...
LOOP_TIMES = 3  # ... this many times is a loop
_LEADING_MARKUP = " \t*#>_-`"  # markdown before a label: "**Query:**", "> Query:"
FLAGS_COMPUTED: Counter[str] = Counter()  # "answers" -> distinct (answer, context, ...) flagged (``answer_flags``)


def _head(line: str) -> str:
    """A line as labels are compared: markup stripped from its start, case folded, whitespace collapsed."""
    return " ".join(line.lstrip(_LEADING_MARKUP).casefold().split())


@dataclass(frozen=True)
class Scaffolding:
    """What a template says around its slots, in the forms ``echoes_prompt`` compares."""

    instructions: tuple[str, ...]  # instruction lines, ``_flat``: case folded, whitespace collapsed
    labels: tuple[str, ...]  # ``_head``-ed labels, colon included
    rules: tuple[str, ...]  # separator lines, verbatim
    query_prefix: str | None  # ``normalised`` text before ``{query_str}`` on its line ("query")
    answer_label: str | None  # the label the template ends with, its answer's own ("answer:")


def _flat(text: str) -> str:
    """Case folded, whitespace collapsed, punctuation kept: a whole instruction line must be reproduced, so
    "the context information is below the fold" does not reproduce "Context information is below."."""
    return " ".join(text.casefold().split())


def _pieces(template: str) -> list[tuple[str, str | None]]:
    """(literal text, the slot after it) along the template, braces unescaped; a template ``str.format``
    cannot parse has only its slots cut out (LlamaIndex fills those alone)."""
    try:
        return [(lit, field) for lit, field, _, _ in string.Formatter().parse(template)]
    except ValueError:
        parts = re.split(r"\{(%s)\}" % "|".join(SLOTS), template.replace("{{", "{").replace("}}", "}"))
        return [(parts[i], parts[i + 1] if i + 1 < len(parts) else None) for i in range(0, len(parts), 2)]


def default_templates() -> tuple[str, ...]:
    """The text LlamaIndex frames a question with when no template is given: its default text-QA template
    and the system prompt its chat variant (used for a chat model, as the sweep's LLM is) sends with it."""
    from llama_index.core.prompts.chat_prompts import TEXT_QA_SYSTEM_PROMPT
    from llama_index.core.prompts.default_prompts import DEFAULT_TEXT_QA_PROMPT_TMPL

    return DEFAULT_TEXT_QA_PROMPT_TMPL, TEXT_QA_SYSTEM_PROMPT.content or ""


@lru_cache(maxsize=64)
def scaffolding(template: str | None) -> Scaffolding:
    """The scaffolding of ``template`` (None: LlamaIndex's default text-QA prompt): its lines with the slots
    removed (a slot ends a line), sorted into instructions, labels and separators; lines of fewer words and
    no colon are too generic to count. The first text holds the slots; the label it ends with is the answer's."""
    instructions: list[str] = []
    labels: list[str] = []
    rules: list[str] = []
    query_prefix, answer_label = None, None
    texts = default_templates() if template is None else (template,)
    for n, text in enumerate(texts):
        # the literal text with each slot as "\0name\0", so that lines and the query's prefix can be found
        joined = "".join(lit + (f"\0{field}\0" if field is not None else "") for lit, field in _pieces(text))
        if query_prefix is None and (m := re.search(r"([^\n\0]*)\0query_str\0", joined)):
            query_prefix = _norm(m.group(1)) or None
        for line in re.split(r"\n|\0[^\0]*\0", joined):
            line = line.strip()
            words = _norm(line).split()
            if not words:
                if len(line) >= MIN_RULE_CHARS:
                    rules.append(line)
            elif line.endswith(":") and len(words) <= MAX_LABEL_WORDS:
                labels.append(_head(line))
            elif len(words) >= MIN_INSTRUCTION_WORDS:
                instructions.append(_flat(line))
        if n == 0:
            tail = [ln.strip() for ln in joined.rsplit("\0", 1)[-1].splitlines() if ln.strip()]
            last = _head(tail[-1]) if tail else ""
            answer_label = last if last in labels else None
    return Scaffolding(
        tuple(dict.fromkeys(instructions)),
        tuple(dict.fromkeys(labels)),
        tuple(dict.fromkeys(rules)),
        query_prefix,
        answer_label,
    )


def echoes_prompt(answer: str | None, template: str | None = None, question: str | None = None) -> bool:
    """Whether ``answer`` reproduces the scaffolding of ``template`` (None: LlamaIndex's default): a whole
    instruction or separator line of it, one of its labels opening a line (but for a leading answer label),
    or, given the ``question``, the query line restated. An empty answer echoes nothing."""
    if not answer or not answer.strip():
        return False
    if any(mark in answer for mark in CHAT_MARKUP):
        return True
    s = scaffolding(template)
    flat = _flat(answer)
    if any(re.search(r"(?<!\w)" + re.escape(line), flat) for line in s.instructions):
        return True
    if any(rule in answer for rule in s.rules):
        return True
    query = _norm(question or "")
    if query and s.query_prefix and f" {s.query_prefix} {query} " in f" {_norm(answer)} ":
        return True
    lines = [_head(ln) for ln in answer.splitlines() if ln.strip()]
    for i, line in enumerate(lines):
        for label in s.labels:
            if line.startswith(label) and not (i == 0 and label == s.answer_label):
                return True
    return False


def loops(answer: str | None, question: str | None = None) -> bool:
    """Whether ``answer`` restates itself: a run of ``LOOP_WORDS`` words ``LOOP_TIMES`` times or more, or the
    ``question`` (its words, case and punctuation aside) twice or more."""
    words = _norm(answer or "").split()
    if len(words) >= LOOP_WORDS * LOOP_TIMES:
        seen: dict[tuple[str, ...], int] = {}
        for i in range(len(words) - LOOP_WORDS + 1):
            run = tuple(words[i : i + LOOP_WORDS])
            seen[run] = seen.get(run, 0) + 1
            if seen[run] >= LOOP_TIMES:
                return True
    q = _norm(question or "")
    return bool(q) and len(q.split()) >= 3 and f" {_norm(answer or '')} ".count(f" {q} ") >= 2


def sentence_words(contexts) -> float:
    """The contexts' word-weighted mean sentence length: sum(w^2) / sum(w) over their sentences of w words,
    the length of the sentence an average word sits in (headings and list items weigh little)."""
    sums = [_sentence_sums(c or "") for c in contexts]
    total = sum(s[0] for s in sums)
    return sum(s[1] for s in sums) / total if total else 0.0


@lru_cache(maxsize=4096)
def _sentence_sums(text: str) -> tuple[int, int]:
    """sum(w) and sum(w^2) over one chunk's sentences of w words: split once per distinct chunk text."""
    from ragsweep.datasets.sentences import sentences

    lengths = [s.words for s in sentences("", text)]
    return sum(lengths), sum(w * w for w in lengths)


def copied_share(answer: str | None, contexts) -> float | None:
    """The share of ``answer`` found verbatim in ``contexts``: its QuIP score (None for an empty answer or
    no context)."""
    contexts = [c for c in contexts if c]
    if not answer or not answer.strip() or not contexts:
        return None
    return quip_score(answer, contexts)


def copies_context(answer: str | None, contexts, share: float | None = None) -> bool:
    """Whether ``answer`` is mostly verbatim context (``COPY_SHARE``) and long with it: its copied words reach
    ``COPY_SENTENCES`` x the contexts' ``sentence_words``. ``share``: its ``copied_share``, if known."""
    share = copied_share(answer, contexts) if share is None else share
    if share is None or share < COPY_SHARE:
        return False
    copied_words = share * len((answer or "").split())
    return copied_words >= COPY_SENTENCES * max(sentence_words([c for c in contexts if c]), 1.0)


def degeneracy(answer: str | None, contexts, template: str | None = None, question: str | None = None) -> dict:
    """Both flags of an LLM answer and the share it copies: ``echoed_prompt``, ``copied_context`` (bools) and
    ``copied_share`` (QuIP against ``contexts``; None without an answer or a context)."""
    contexts = list(contexts)
    share = copied_share(answer, contexts)
    return {
        "echoed_prompt": echoes_prompt(answer, template, question),
        "copied_context": copies_context(answer, contexts, share),
        "looped": loops(answer, question),
        "copied_share": share,
    }


def answer_flags(answer: str | None, nodes, generator, prompt: str | None, question: str | None) -> dict:
    """The generate stage's payload fields for an LLM answer written from ``nodes`` with the template
    ``make_llm_synthesizer`` uses (``prompt``: a configuration's template file, else the generator's own): its
    ``quip`` (the copied share) and the flags ``echoed_prompt``, ``copied_context``, ``looped`` (1/0). Computed
    once per distinct (answer, context, template, question): configurations that retrieved the same context and
    got the same reply (a cached call) share them."""
    from ragsweep.pipelines.generator_prompts import template_text

    template = template_text(generator, prompt or getattr(generator, "prompt_file", None))
    return dict(_flags(answer, tuple(n.node.get_content() for n in nodes or []), template, question))


@lru_cache(maxsize=4096)
def _flags(answer: str | None, contexts: tuple[str, ...], template: str | None, question: str | None) -> tuple:
    FLAGS_COMPUTED["answers"] += 1
    flags = degeneracy(answer, contexts, template, question)
    return (
        # the record's ``quip``: the copied share (the nodes' texts, empty ones too, when none has any)
        (
            "quip",
            flags["copied_share"]
            if flags["copied_share"] is not None or not contexts
            else quip_score(answer or "", contexts),
        ),
        ("echoed_prompt", int(flags["echoed_prompt"])),
        ("copied_context", int(flags["copied_context"])),
        ("looped", int(flags["looped"])),
    )


def forget_memos() -> None:
    """Empty this module's per-answer memos (``pipelines.memos.forget``, once answering is done)."""
    _flags.cache_clear()
    _sentence_sums.cache_clear()
