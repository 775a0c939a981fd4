"""What of a component determines a configuration's results: the part of its identity (``config_hash``) that
its spec's settings alone do not say (a local model's weights, an LLM reply's schema, how tuned weights are
chosen)."""

from __future__ import annotations

from ragsweep.config import ActiveReranker, RetrieverSpec


def retriever_identity(retriever: RetrieverSpec, tune_metric: str | None, tuning_split: dict | None = None) -> dict:
    """The retriever's settings; the tuning ones only when its weights are tuned (so fusions from
    before tuning existed keep their hashes), with the metric resolved and what decides the
    validation questions it is tuned on (another split must not reuse answers tuned on test questions)."""
    out = retriever.model_dump(mode="json", exclude={"name"})
    if getattr(retriever, "tuned", False):
        out["tune_metric"] = tune_metric
        out["tuning_split"] = tuning_split
    else:
        out.pop("tune_steps", None)
        out.pop("tune_metric", None)
    return out


def reranker_identity(reranker: ActiveReranker) -> dict:
    """What determines a reranker's order: its settings and a local model's fingerprint (retrained
    weights in the same directory are new results); an LLM reranker's LLM is the ``rewrite_llm``."""
    from ragsweep.embeddings.factory import weights_identity

    out = reranker.identity()
    if "model" in out:
        out["model"] = weights_identity(out["model"])
    if out.get("kind") == "llm":  # its reply's schema (a changed schema asks again)
        from ragsweep.rerankers.llm import ranking_form

        out["reply_form"] = ranking_form(out.get("batch_size", 10)).digest
    return out


def transform_identity(transform) -> dict:
    """A query transform's settings, and for decomposition its reply's schema."""
    out = transform.identity()
    if out.get("kind") == "decompose":
        from ragsweep.retrievers.transforms.decompose import subquestions_form

        out["reply_form"] = subquestions_form(transform.max_subquestions).digest
    return out
