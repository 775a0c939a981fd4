"""HyDE, Hypothetical Document Embeddings (Gao, Ma, Lin & Callan 2022, "Precise Zero-Shot Dense Retrieval
without Relevance Labels", arXiv:2212.10496), with LlamaIndex's ``HyDEQueryTransform``.

The LLM writes a passage that answers the question (LlamaIndex's HyDE prompt); the vector part of a
retriever searches with the embedding of that passage, averaged with the question's when
``include_original`` (LlamaIndex's ``VectorIndexRetriever`` aggregates a bundle's embedding texts
with the mean, each embedded by the configuration's cached embedding model). BM25 and graph parts
keep the question. A blank passage falls back to the question alone, recorded as such.
"""

from __future__ import annotations

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from ragsweep.retrievers.memo import SharedResults
from ragsweep.retrievers.transforms.base import AppliedTransform, TransformOutput, require_llm, transform_key


def prompt(spec, question: str) -> str:
    """The text sent for ``question``: LlamaIndex's HyDE prompt."""
    from llama_index.core.prompts.default_prompts import DEFAULT_HYDE_PROMPT

    return DEFAULT_HYDE_PROMPT.format(context_str=question)


class HyDERetriever(BaseRetriever):
    """A vector index retriever searching with a question's HyDE embedding texts."""

    def __init__(self, vector: BaseRetriever, texts) -> None:
        super().__init__()
        self._vector = vector
        self._texts = texts  # question -> TransformOutput

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        texts = list(self._texts(query_bundle.query_str).queries)
        return self._vector.retrieve(QueryBundle(query_str=query_bundle.query_str, custom_embedding_strs=texts))


class HyDETransform(AppliedTransform):
    def __init__(self, spec, host) -> None:
        from llama_index.core.indices.query.query_transform import HyDEQueryTransform

        self._key = transform_key(spec)
        self._memo = host.transform_memo
        self._hyde = HyDEQueryTransform(llm=require_llm(host, spec.kind), include_original=spec.include_original)
        vector = host.vector
        # one HyDE search per question at the index's depth, shared by every top_k and fusion
        self.shared = (
            SharedResults(HyDERetriever(vector.base, self.outputs), vector.k_max) if vector is not None else None
        )

    def outputs(self, question: str) -> TransformOutput:
        return self._memo.get(self._key, question, self._write)

    def _write(self, question: str) -> tuple[list[str], str | None]:
        texts = list(self._hyde.run(question).embedding_strs)
        if not texts or not texts[0].strip():
            return [question], "the LLM wrote an empty passage: searched with the question alone"
        return texts, None

    def part(self, name: str, shared: SharedResults) -> SharedResults:
        return self.shared if name == "vector" and self.shared is not None else shared

    def record(self, question: str) -> dict:
        out = self._memo.peek(self._key, question)
        return out.record() if out is not None else {}
