"""What a postprocessor hands back, and the nodes it makes when it replaces retrieved ones."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

# node metadata read into the node's record source (``merged_from``): kept from the LLM and the embedding
SOURCE_FIELDS = "ragsweep_source"


@dataclass
class Shaped:
    """``ranked``: the nodes the retrieval metrics and the record's sources are computed on (in rank
    order); ``context``: the same nodes in the order the generator reads them; ``record``: what the
    answer's record gains (``postprocess``, ``context_order``)."""

    ranked: list
    context: list
    record: dict = field(default_factory=dict)


def unchanged(nodes: list) -> Shaped:
    return Shaped(list(nodes), list(nodes))


class DocumentRange(NamedTuple):
    """The exact range ``[start, end)`` of ``doc_id`` a merged node stands for, with its text: kept together
    so the node's offsets and text (what the span metrics score and the generator reads) always agree."""

    doc_id: str
    start: int
    end: int
    text: str


def span_node(nws_members: list, span: DocumentRange, score: float | None, how: str):
    """A node standing for ``nws_members`` (retrieved nodes, best-ranked first): the document range
    ``span`` and its text. It keeps the best-ranked member's node id (so the record's per-retriever
    ranks still name that chunk) and lists every member in ``merged_from``."""
    from llama_index.core.schema import NodeWithScore, TextNode

    best = nws_members[0].node
    merged = {"merged_from": [m.node.node_id for m in nws_members], "expanded": how}
    meta = {"doc_id": span.doc_id, SOURCE_FIELDS: merged}
    node = TextNode(
        id_=best.node_id,
        text=span.text,
        metadata=meta,
        start_char_idx=span.start,
        end_char_idx=span.end,
        excluded_embed_metadata_keys=list(meta),
        excluded_llm_metadata_keys=list(meta),
    )
    return NodeWithScore(node=node, score=score)


def chunk_index(node_id: str) -> int:
    """The position of a chunk among its document's chunks: the last part of ``key:doc_id:i``."""
    return int(node_id.rsplit(":", 1)[1])
