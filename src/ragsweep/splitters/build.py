"""Turn a splitter spec into a LlamaIndex node parser and run it over a corpus.

Every node carries its document id and character offsets into the source text: retrieval metrics
compare chunks from different splitters by character overlap with gold spans, so offsets must be
exact. LlamaIndex fills offsets with an exact ``str.find``; splitters that re-flow whitespace
(LangChain's, the semantic chunker) defeat it, so the misses are located again here with a
whitespace-normalised search that advances through the document in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragsweep.config import (
    SplitterSpec,
)
from ragsweep.datasets.locate import find_span
from ragsweep.datasets.types import Document
from ragsweep.errors import RagsweepError

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class Chunk:
    """A chunk of one document: its text and its half-open character range in that document.

    ``context``: the prefix it is embedded and BM25-indexed with (``context_prefix``: contextual
    chunks), None without one; the text, the offsets and what the generator reads stay raw."""

    node_id: str
    doc_id: str
    start: int
    end: int
    text: str
    context: str | None = None

    @property
    def index_text(self) -> str:
        """What is embedded and BM25-indexed: the node's content in LlamaIndex's EMBED mode."""
        return self.text if self.context is None else f"{self.context}\n\n{self.text}".strip()

    def to_node(self):
        """A LlamaIndex TextNode carrying the offsets; the doc id is metadata the embedding and the
        answer never see. A context is metadata seen in EMBED mode (the vectors, BM25, rerankers, RM3)
        and hidden in LLM mode (the generator reads the raw chunk)."""
        from llama_index.core.schema import TextNode

        if self.context is None:
            return TextNode(
                id_=self.node_id,
                text=self.text,
                metadata={"doc_id": self.doc_id},
                start_char_idx=self.start,
                end_char_idx=self.end,
                excluded_embed_metadata_keys=["doc_id"],
                excluded_llm_metadata_keys=["doc_id"],
            )
        return TextNode(
            id_=self.node_id,
            text=self.text,
            metadata={"doc_id": self.doc_id, "context": self.context},
            start_char_idx=self.start,
            end_char_idx=self.end,
            metadata_template="{value}",
            excluded_embed_metadata_keys=["doc_id"],
            excluded_llm_metadata_keys=["doc_id", "context"],
        )


def parser_is_contiguous(parser) -> bool:
    """True for parsers whose chunks never overlap: pattern, semantic, or a zero chunk overlap."""
    from ragsweep.splitters.pattern import PatternSplitter

    if isinstance(parser, PatternSplitter) or type(parser).__name__ == "SentenceWindowNodeParser":
        return True
    inner = getattr(parser, "_lc_splitter", None)
    if inner is not None:
        if type(inner).__name__ == "SemanticChunker":
            return True
        return getattr(inner, "_chunk_overlap", None) == 0
    return getattr(parser, "chunk_overlap", None) == 0


def make_parser(spec: SplitterSpec, lc_embeddings=None):
    """Build the LlamaIndex node parser for ``spec``: the function its spec class names (``splitters.parsers``);
    ``lc_embeddings``: the LangChain embeddings a semantic splitter compares sentences with."""
    from ragsweep.components import builder

    return builder(spec)(spec, lc_embeddings)


def split_corpus(
    documents: list[Document], parser, key: str, progress=None, contiguous: bool | None = None
) -> list[Chunk]:
    """Run ``parser`` over every document once; return chunks with exact offsets.

    ``key`` prefixes node ids so ids are unique per splitter (Chroma needs unique ids).
    ``progress`` is an optional callable advanced by one per document. ``contiguous`` says the
    splitter never overlaps chunks, so each chunk is searched for after the previous one's end
    (decisive when a document repeats a paragraph); by default it is read off the parser.
    """
    if contiguous is None:
        contiguous = parser_is_contiguous(parser)
    exact = getattr(parser, "exact_offsets", False)  # the parser's offsets are the document's (hierarchical)
    from llama_index.core import Document as LIDocument
    from llama_index.core.schema import MetadataMode

    chunks: list[Chunk] = []
    for doc in documents:
        li_doc = LIDocument(text=doc.text, id_=doc.doc_id)
        nodes = parser.get_nodes_from_documents([li_doc])
        cursor = 0
        for i, node in enumerate(nodes):
            text = node.get_content(metadata_mode=MetadataMode.NONE)
            if not text.strip():
                continue
            start, end = node.start_char_idx, node.end_char_idx
            if start is None or end is None or (start < cursor and not exact) or doc.text[start:end] != text:
                # chunks come in document order and no two start at the same place, so search
                # after the previous chunk (repeated paragraphs stay distinct)
                span = find_span(doc.text, text, cursor)
                if span is None:
                    raise RagsweepError(
                        f"splitter {key}: could not locate chunk {i} of document {doc.doc_id!r} in its source text; "
                        "the splitter changed the text (please report this)"
                    )
                start, end = span
            cursor = end if contiguous else start + 1
            chunks.append(Chunk(node_id=f"{key}:{doc.doc_id}:{i}", doc_id=doc.doc_id, start=start, end=end, text=text))
        if progress is not None:
            progress(1)
    return chunks
