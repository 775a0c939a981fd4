"""Multi-query retrieval ("RAG-Fusion"; Raudaschl 2023): the question and ``num_queries`` - 1 rewrites the
LLM writes with LlamaIndex's ``QueryFusionRetriever`` prompt, each through the whole retriever, fused by
reciprocal rank fusion (Cormack et al. 2009; ``fanout``). The prompt is LlamaIndex's, so a fusion
retriever with the same ``num_queries`` sends the same request (one LLM cache entry for both).
"""

from __future__ import annotations

import re

from ragsweep.retrievers.transforms.fanout import FanOutTransform

_NUMBERING = re.compile(r"^(?:\d{1,2}[.)]|[-*\u2022])\s+")


def prompt(spec, question: str) -> str:
    """The text sent for ``question``: ``QueryFusionRetriever``'s query-generation prompt."""
    from llama_index.core.retrievers.fusion_retriever import QUERY_GEN_PROMPT

    return QUERY_GEN_PROMPT.format(num_queries=spec.num_queries - 1, query=question)


def parse_queries(reply: str, question: str, wanted: int) -> list[str]:
    """The rewrites in a reply, strictly: one per non-blank line, a leading "1." / "1)" / "-" / "*" and
    enclosing quotes removed; code fences, lines ending with ":" (a preamble such as "Here are 2
    queries:"), repeats and the question itself are skipped; at most ``wanted``, in reply order."""
    out: list[str] = []
    seen = {question.strip().casefold()}
    for line in reply.splitlines():
        text = _NUMBERING.sub("", line.strip()).strip().strip('"').strip()
        if not text or text.startswith("```") or text.endswith(":") or text.casefold() in seen:
            continue
        seen.add(text.casefold())
        out.append(text)
    return out[:wanted]


class MultiQueryTransform(FanOutTransform):
    def _write(self, question: str) -> tuple[list[str], str | None]:
        reply = self._llm.complete(prompt(self.spec, question)).text
        rewrites = parse_queries(reply, question, self.spec.num_queries - 1)
        if not rewrites:
            return [question], "no usable rewrite in the LLM's reply: searched with the question alone"
        note = (
            None
            if len(rewrites) == self.spec.num_queries - 1
            else f"the LLM's reply held {len(rewrites)} of {self.spec.num_queries - 1} rewrites"
        )
        return [question, *rewrites], note
