"""Listwise LLM reranking with LlamaIndex's ``LLMRerank`` prompt and batches on the spec's LLM client (its cache,
budget and rate limits): the candidates go in batches of ``batch_size``; the LLM names the relevant
ones with a 1-10 score (Sun et al. 2023, "Is ChatGPT Good at Search? Investigating Large Language
Models as Re-Ranking Agents", EMNLP). The reply is asked in ``ranking_form`` (``llm.ask``): held to a
schema where the endpoint takes one, else read as text with one repair re-ask.

LlamaIndex drops the candidates the LLM does not name; here they follow the named ones in their
base order unless ``drop_unlisted``, so a terse reply cannot leave a configuration with fewer
sources than its top_k, and an unparsable reply means the base order, not an empty answer. Replies
are read strictly (``parse_choices``): a malformed line names no document.
"""

from __future__ import annotations

import re
from functools import lru_cache

from llama_index.core.schema import NodeWithScore, QueryBundle

from ragsweep.llm.reply_form import ReplyForm, strict_object

_CHOICE = re.compile(r"^\s*doc(?:ument)?\s*:?\s*(\d+)\s*,\s*relevance\s*:?\s*(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)


def parse_choices(answer: str, num_choices: int) -> tuple[list[int], list[float]]:
    """The documents a reply names, as (numbers, relevances): lines "Doc: N, Relevance: R" with
    1 <= N <= ``num_choices``; any other line is ignored and a document named twice keeps its first
    line. LlamaIndex's default parser reads "Doc: 0" as the batch's last document and, after a line
    without a relevance number, pairs the later numbers with the wrong documents."""
    numbers: list[int] = []
    relevances: list[float] = []
    for line in answer.splitlines():
        m = _CHOICE.match(line)
        if m and 1 <= int(m.group(1)) <= num_choices and int(m.group(1)) not in numbers:
            numbers.append(int(m.group(1)))
            relevances.append(float(m.group(2)))
    return numbers, relevances


def _ranking_json(obj: dict) -> tuple[list[int], list[float]]:
    numbers: list[int] = []
    relevances: list[float] = []
    for item in obj["ranking"]:
        if item["document"] not in numbers:
            numbers.append(int(item["document"]))
            relevances.append(float(item["relevance"]))
    return numbers, relevances


@lru_cache(maxsize=64)
def ranking_form(num_choices: int) -> ReplyForm:
    """The reply's form for a batch of ``num_choices`` documents: the named documents, each with a 1-10
    relevance (numbers outside the batch cannot be named where the server is held to the schema)."""

    def text(reply: str):
        numbers, relevances = parse_choices(reply, num_choices)
        return ((numbers, relevances), None) if numbers else (None, "no 'Doc: N, Relevance: R' line")

    item = strict_object(
        {
            "document": {"type": "integer", "enum": list(range(1, num_choices + 1))},
            "relevance": {"type": "integer", "enum": list(range(1, 11))},
        }
    )
    return ReplyForm(
        name=f"ranking_{num_choices}",
        schema=strict_object({"ranking": {"type": "array", "items": item, "maxItems": num_choices}}),
        from_json=_ranking_json,
        parse_text=text,
        text_format='one line "Doc: N, Relevance: R" per relevant document, most relevant first',
        json_hint='Reply with one JSON object: {"ranking": [{"document": <its number>, "relevance": <1 to 10>}, '
        "...]}, the relevant documents only, most relevant first.",
    )


def build(spec, llm=None) -> "LLMReranker":
    if llm is None:
        raise ValueError("an llm reranker needs the spec's llm section")
    return LLMReranker(llm, spec.batch_size, spec.drop_unlisted)


class LLMReranker:
    def __init__(self, llm, batch_size: int = 10, drop_unlisted: bool = False) -> None:
        from llama_index.core.postprocessor import LLMRerank

        self.llm, self.drop_unlisted = llm, drop_unlisted
        # LlamaIndex's prompt, batches and the message its predict call sends; the reply is asked in a form
        self.postprocessor = LLMRerank(llm=llm, choice_batch_size=batch_size, top_n=10**6)

    def rerank(self, query: QueryBundle, nodes: list[NodeWithScore]) -> list[NodeWithScore]:
        from ragsweep.llm.ask import ask

        pp = self.postprocessor
        named: list[NodeWithScore] = []
        for batch in pp._get_node_batches([NodeWithScore(node=n.node, score=n.score) for n in nodes]):
            messages = self.llm._get_messages(pp.choice_select_prompt, **pp._get_predict_kwargs(batch, query.query_str))
            reply = ask(self.llm, messages, ranking_form(len(batch)))
            numbers, relevances = reply.value or ([], [])
            named += [NodeWithScore(node=batch[i - 1], score=r) for i, r in zip(numbers, relevances)]
        named.sort(key=lambda n: n.score or 0.0, reverse=True)  # LlamaIndex's order: relevance, highest first
        seen, out = set(), []
        for n in named:  # a node named twice counts once
            if n.node.node_id not in seen:
                seen.add(n.node.node_id)
                out.append(NodeWithScore(node=n.node, score=float(n.score) if n.score is not None else None))
        if not self.drop_unlisted:
            out += [NodeWithScore(node=n.node, score=None) for n in nodes if n.node.node_id not in seen]
        return out
