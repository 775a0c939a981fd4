"""Knowledge-graph extractors: the offline legal patterns or LlamaIndex's LLM path extractors, and what
identifies the graph each extracts (part of the graph's cache key)."""

from __future__ import annotations

from ragsweep.errors import RagsweepError


def make_extractor(rspec, llm, workers: int = 8):
    """The kg extractor a retriever spec names: the offline legal patterns, or LlamaIndex's LLM ones."""
    if rspec.extractor == "legal_patterns":
        from ragsweep.graphs.legal_extractor import LegalPatternExtractor

        return LegalPatternExtractor(max_triplets_per_chunk=rspec.max_triplets_per_chunk)
    if llm is None:
        raise RagsweepError(f"extractor {rspec.extractor} needs the spec's llm")
    if rspec.extractor == "llm_simple":
        from llama_index.core.indices.property_graph import SimpleLLMPathExtractor

        return SimpleLLMPathExtractor(
            llm=llm, max_paths_per_chunk=rspec.max_triplets_per_chunk, num_workers=workers, raise_on_error=True
        )
    from llama_index.core.indices.property_graph import DynamicLLMPathExtractor

    return DynamicLLMPathExtractor(
        llm=llm, max_triplets_per_chunk=rspec.max_triplets_per_chunk, num_workers=workers, raise_on_error=True
    )


def extractor_identity(rspec, llm_spec) -> dict:
    ident = rspec.graph_identity()
    if rspec.uses_llm and llm_spec is not None:
        from ragsweep.llm.identity import llm_identity

        ident["llm"] = llm_identity(llm_spec)
    return ident
