"""Cross-encoder reranking through LlamaIndex's ``SentenceTransformerRerank`` (Nogueira & Cho 2019,
"Passage Re-ranking with BERT", arXiv:1901.04085).

LlamaIndex scores all candidates of a question in one padded batch, so a pair's score would depend
on which other candidates came with it (padding changes the last bits). Each pair is scored in a
call of its own instead, through the same postprocessor, so a score is a function of its (question,
text) pair and is shared by every base retriever that returns that text for that question.
"""

from __future__ import annotations

from ragsweep.rerankers.base import PointwiseReranker


def build(spec, llm=None) -> "CrossEncoderReranker":
    return CrossEncoderReranker(spec.model, spec.device)


class CrossEncoderReranker(PointwiseReranker):
    def __init__(self, model: str, device: str | None = None) -> None:
        super().__init__()
        from llama_index.core.postprocessor import SentenceTransformerRerank

        from ragsweep.embeddings.device import resolve_device

        # trust_remote_code off: a hub name must not run code from the hub
        self.postprocessor = SentenceTransformerRerank(
            top_n=1, model=model, device=resolve_device(device), trust_remote_code=False
        )

    def _score_texts(self, query: str, texts: list[str]) -> list[float]:
        from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

        bundle = QueryBundle(query)
        out = []
        for t in texts:
            scored = self.postprocessor.postprocess_nodes([NodeWithScore(node=TextNode(text=t), score=None)], bundle)
            out.append(float(scored[0].score or 0.0))  # the cross-encoder sets every score
        return out
