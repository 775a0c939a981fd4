"""Listwise LLM reranking through LlamaIndex's ``LLMRerank`` on the spec's LLM client (its cache,
budget and rate limits): the candidates go in batches of ``batch_size``; the LLM names the relevant
ones with a 1-10 score (Sun et al. 2023, "Is ChatGPT Good at Search? Investigating Large Language
Models as Re-Ranking Agents", EMNLP).

LlamaIndex drops the candidates the LLM does not name; here they follow the named ones in their
base order unless ``drop_unlisted``, so a terse reply cannot leave a configuration with fewer
sources than its top_k, and an unparsable reply means the base order, not an empty answer. Replies
are read strictly (``parse_choices``): a malformed line names no document.
"""

from __future__ import annotations

import re

from llama_index.core.schema import NodeWithScore, QueryBundle

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


def build(spec, llm=None) -> "LLMReranker":
    if llm is None:
        raise ValueError("an llm reranker needs the spec's llm section")
    return LLMReranker(llm, spec.batch_size, spec.drop_unlisted)


class LLMReranker:
    def __init__(self, llm, batch_size: int = 10, drop_unlisted: bool = False) -> None:
        from llama_index.core.postprocessor import LLMRerank

        self.drop_unlisted = drop_unlisted
        self.postprocessor = LLMRerank(
            llm=llm, choice_batch_size=batch_size, top_n=10**6, parse_choice_select_answer_fn=parse_choices
        )

    def rerank(self, query: QueryBundle, nodes: list[NodeWithScore]) -> list[NodeWithScore]:
        copies = [NodeWithScore(node=n.node, score=n.score) for n in nodes]
        named = self.postprocessor.postprocess_nodes(copies, query)
        seen, out = set(), []
        for n in named:  # LlamaIndex's order: relevance, highest first; a node named twice counts once
            if n.node.node_id not in seen:
                seen.add(n.node.node_id)
                out.append(NodeWithScore(node=n.node, score=float(n.score) if n.score is not None else None))
        if not self.drop_unlisted:
            out += [NodeWithScore(node=n.node, score=None) for n in nodes if n.node.node_id not in seen]
        return out
