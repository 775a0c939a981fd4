"""The prompt an LLM generator's ``no_retrieval`` baseline is asked with (pure: text only). Part of that baseline's
identity (``grid.Configuration.identity``): a changed prompt is a new configuration, its answers asked again."""

from __future__ import annotations

CLOSED_BOOK = "Answer the query from your own knowledge; no documents are given.\n"
QUERY = "Query: {query_str}\nAnswer: "


def closed_book_template(generator) -> str:
    """The prompt ``no_retrieval`` asks an LLM generator with: the question alone (an LLM-only answer, as
    HyPA-RAG's and syftr's no-RAG baselines), with the refusal instruction when ``generator.refusal`` is set.
    Not the text-QA template with an empty context: that one tells the model to use the context and "not prior
    knowledge", which would measure refusals, not what the model knows."""
    refusal = getattr(generator, "refusal", None)
    # LlamaIndex's templates replace known {names} only: the refusal's own braces stay as they are
    instruction = f"If you do not know the answer, reply exactly: {refusal}\n" if refusal else ""
    return CLOSED_BOOK + instruction + QUERY
