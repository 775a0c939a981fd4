"""One function per splitter kind: the LlamaIndex node parser its spec describes. Each spec class names its own
(``builder`` in ``config/splitters.py``), so ``build.make_parser`` is one lookup (``components.builder``) and a
new kind is its spec class and a function here (or in a module of its own)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from langchain_text_splitters import TextSplitter


def token(spec, lc_embeddings=None):
    from llama_index.core.node_parser import TokenTextSplitter

    return TokenTextSplitter(chunk_size=spec.chunk_size, chunk_overlap=spec.chunk_overlap, include_metadata=False)


def sentence(spec, lc_embeddings=None):
    from llama_index.core.node_parser import SentenceSplitter

    return SentenceSplitter(chunk_size=spec.chunk_size, chunk_overlap=spec.chunk_overlap, include_metadata=False)


def recursive(spec, lc_embeddings=None):
    """LangChain's recursive character splitter, through LangchainNodeParser."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from llama_index.core.node_parser import LangchainNodeParser

    kwargs: dict[str, Any] = {"separators": spec.separators} if spec.separators else {}
    lc = RecursiveCharacterTextSplitter(chunk_size=spec.chunk_size, chunk_overlap=spec.chunk_overlap, **kwargs)
    return LangchainNodeParser(lc, include_metadata=False)


def semantic(spec, lc_embeddings=None):
    """LangChain's SemanticChunker over the configuration's embedding model (``lc_embeddings``)."""
    from langchain_experimental.text_splitter import SemanticChunker
    from llama_index.core.node_parser import LangchainNodeParser

    if lc_embeddings is None:
        raise ValueError("the semantic splitter needs an embedding model")
    chunker = SemanticChunker(
        lc_embeddings,
        buffer_size=spec.buffer_size,
        breakpoint_threshold_type=spec.breakpoint_threshold_type,
        breakpoint_threshold_amount=spec.breakpoint_threshold_amount,
    )
    # typed for a TextSplitter; a SemanticChunker has the split_text it calls
    return LangchainNodeParser(cast("TextSplitter", chunker), include_metadata=False)


def pattern(spec, lc_embeddings=None):
    from ragsweep.splitters.pattern import PatternSplitter

    return PatternSplitter(pattern=spec.pattern, max_chunk_chars=spec.max_chunk_chars, include_metadata=False)


def sentence_window(spec, lc_embeddings=None):
    """Single sentences; their windows are cut from the document by the sentence_window postprocessor."""
    from llama_index.core.node_parser import SentenceWindowNodeParser

    return SentenceWindowNodeParser.from_defaults(
        window_size=spec.window_size, include_metadata=False, include_prev_next_rel=False
    )


def hierarchical(spec, lc_embeddings=None):
    from ragsweep.splitters.hierarchical import HierarchicalLeafParser

    return HierarchicalLeafParser(spec.chunk_sizes, spec.chunk_overlap)
