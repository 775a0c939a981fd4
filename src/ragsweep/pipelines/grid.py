"""Expand a sweep spec into configurations with stable, readable ids.

A configuration is splitter x embedding x retriever x reranker x top_k, except that a retriever
that needs no embedding (BM25) is not multiplied by the embeddings, and a reranker only meets the
retrievers its ``apply_to`` names. Ids read like ``sentence512-minilm-fusion-k5`` (no reranker) or
``sentence512-minilm-fusion-maxsim-k5``; a hash of the resolved configuration guards the journal
against reusing results after a spec edit that keeps the id.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from ragsweep.adaptive.config_map import AdaptiveMap
from ragsweep.adaptive.config_map import resolve as resolve_adaptive
from ragsweep.config import (
    ActiveHistory,
    ActivePostprocessor,
    ActiveReranker,
    ActiveTransform,
    EmbeddingSpec,
    RetrieverSpec,
    SplitterSpec,
    SweepSpec,
    context_llm,
    uses_llm,
)
from ragsweep.config.base import absent
from ragsweep.errors import RagsweepError
from ragsweep.llm.identity import llm_identity
from ragsweep.pipelines.component_identity import reranker_identity, retriever_identity, transform_identity
from ragsweep.pipelines.generator_prompts import prompt_axis
from ragsweep.pipelines.history_axis import history_axis
from ragsweep.pipelines.outputs.columns import RETRIEVAL_METRICS
from ragsweep.postprocessors.axis import postprocessor_axis


@dataclass(frozen=True)
class Configuration:
    config_id: str
    splitter: SplitterSpec
    chunk_embedding: EmbeddingSpec | None
    embedding: EmbeddingSpec | None
    retriever: RetrieverSpec
    top_k: int
    generator: dict
    rewrite_llm: dict | None = None  # the LLM called while retrieving: rewrites, graph extraction, reranking
    reranker: ActiveReranker | None = None  # None: the retriever's own order
    query_transform: ActiveTransform | None = None  # None: the question as asked
    tune_metric: str | None = None  # weights: tune: the retrieval metric they are chosen by
    tuning_split: dict | None = None  # weights: tune: what decides the validation questions (seed, split)
    prompt: str | None = None  # generator.prompt_files: this configuration's template file
    adaptive: AdaptiveMap | None = None  # adaptive: top_k, reranker, transform per predicted class; top_k the largest
    postprocessor: ActivePostprocessor | None = None  # None: the context as retrieved
    context_llm: dict | None = None  # contextual chunks an LLM writes: its identity and the prompt's hash
    # a reference baseline (no_retrieval, oracle, full_document): answered from a context no retriever chose,
    # never chosen; its splitter and retriever are the spec's first, unused (``baseline_configurations``)
    baseline: str | None = None
    history: ActiveHistory | None = None  # None: a follow-up is searched and answered alone

    @property
    def chunk_key(self) -> str:
        """What determines the chunks: the splitter and, for semantic chunking, its embedding."""
        emb = f"@{self.chunk_embedding.label()}" if self.chunk_embedding is not None else ""
        return self.splitter.label() + emb

    def chunk_identity(self) -> dict:
        """Everything that determines the chunks, and nothing else (names and batch sizes do not)."""
        from ragsweep.embeddings.factory import model_key

        splitter = self.splitter.model_dump(mode="json", exclude={"name", "embedding"})
        if isinstance(splitter.get("context"), dict):  # its LLM's URL and key, its prompt's path: not the chunks
            splitter["context"] = {k: v for k, v in splitter["context"].items() if k not in ("llm", "prompt_file")}
        return {
            "splitter": splitter,
            "chunk_embedding": model_key(self.chunk_embedding) if self.chunk_embedding is not None else None,
            **({"context_llm": self.context_llm} if self.context_llm is not None else {}),
        }

    def identity(self) -> dict:
        """Everything that determines this configuration's results: hashed into ``config_hash``."""
        from ragsweep import __version__
        from ragsweep.embeddings.factory import model_key

        if self.baseline is not None:  # its context is the dataset's, its answer the generator's
            ident = {"ragsweep": __version__, "baseline": self.baseline, "generator": self.generator}
            if self.baseline == "no_retrieval" and self.generator.get("kind") == "llm":
                from ragsweep.baselines.closed_book import CLOSED_BOOK, QUERY

                ident["prompt"] = CLOSED_BOOK + QUERY  # the question alone, asked with this (and the refusal)
            return ident

        return {
            "ragsweep": __version__,
            **self.chunk_identity(),
            "embedding": model_key(self.embedding) if self.embedding is not None else None,
            "retriever": retriever_identity(self.retriever, self.tune_metric, self.tuning_split),
            "top_k": self.top_k,
            "generator": self.generator,
            **({"rewrite_llm": self.rewrite_llm} if self.rewrite_llm else {}),
            # absent without a reranker, so configurations from before rerankers keep their hashes
            **({"reranker": reranker_identity(self.reranker)} if self.reranker is not None else {}),
            **(
                {"query_transform": transform_identity(self.query_transform)}
                if self.query_transform is not None
                else {}
            ),
            **({"adaptive": adaptive_identity(self.adaptive)} if self.adaptive is not None else {}),
            **({"postprocessor": self.postprocessor.identity()} if self.postprocessor is not None else {}),
            **({"history": self.history.identity()} if self.history is not None else {}),
        }

    def resolved(self) -> dict:
        from ragsweep import __version__

        if self.baseline is not None:
            return {
                "ragsweep": __version__,
                "config_id": self.config_id,
                "baseline": self.baseline,
                "generator": self.generator,
            }
        return {
            "ragsweep": __version__,
            "config_id": self.config_id,
            "splitter": self.splitter.model_dump(mode="json"),
            "chunk_embedding": self.chunk_embedding.model_dump(mode="json") if self.chunk_embedding else None,
            "embedding": self.embedding.model_dump(mode="json") if self.embedding else None,
            "retriever": self.retriever.model_dump(mode="json"),
            "top_k": self.top_k,
            "generator": self.generator,
            "reranker": self.reranker.model_dump(mode="json") if self.reranker is not None else None,
            "query_transform": (
                self.query_transform.model_dump(mode="json") if self.query_transform is not None else None
            ),
            **({"adaptive": self.adaptive.spec.model_dump(mode="json")} if self.adaptive is not None else {}),
            "postprocessor": self.postprocessor.model_dump(mode="json") if self.postprocessor is not None else None,
            **({"history": self.history.model_dump(mode="json")} if self.history is not None else {}),
        }

    def labels(self) -> dict:
        """The columns naming this configuration in records, summary and the manifest."""
        if self.baseline is not None:
            return {
                "config_id": self.config_id,
                "config_hash": self.config_hash,
                "baseline": self.baseline,
                "splitter": None,
                "embedding": None,
                "retriever": self.retrieval_label,
                "top_k": None,
                "query_transform": None,
                "reranker": None,
                "postprocessor": None,
                "history": None,
                **({"prompt": Path(self.prompt).stem} if self.prompt is not None else {}),
            }
        return {
            "config_id": self.config_id,
            "config_hash": self.config_hash,
            "splitter": self.chunk_key,
            "embedding": self.embedding.label() if self.embedding is not None else None,
            "retriever": self.retrieval_label,
            "top_k": self.top_k if self.adaptive is None else None,
            "query_transform": self.query_transform.label() if self.query_transform is not None else None,
            "reranker": self.reranker.label() if self.reranker is not None else None,
            "postprocessor": self.postprocessor.label() if self.postprocessor is not None else None,
            "history": self.history.label() if self.history is not None else None,
            **({"prompt": Path(self.prompt).stem} if self.prompt is not None else {}),
        }

    @property
    def retrieval_label(self) -> str:
        """The retriever's label, with ``+transform`` and ``+reranker`` when they change what it returns
        (plots colour by it)."""
        if self.baseline is not None:
            return f"baseline:{self.baseline}"
        return "+".join(
            [self.retriever.label()]
            + [x.label() for x in (self.query_transform, self.reranker, self.postprocessor) if x is not None]
            + ([self.adaptive.spec.label()] if self.adaptive is not None else [])
            + ([self.history.label()] if self.history is not None else [])
        )

    @cached_property
    def config_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()[:12]


def _chunk_embedding(splitter: SplitterSpec, embedding: EmbeddingSpec | None, spec: SweepSpec) -> EmbeddingSpec | None:
    """Semantic chunking uses the named embedding, else the configuration's, else the first one."""
    if not splitter.embeds:
        return None
    named = getattr(splitter, "embedding", None)  # a splitter that embeds may name the model it chunks with
    if named is not None:
        return next(e for e in spec.embeddings if e.label() == named)
    return embedding if embedding is not None else spec.embeddings[0]


def tune_metric(spec: SweepSpec, retriever: RetrieverSpec) -> str | None:
    """What a tuned fusion's weights are chosen by: its ``tune_metric``, else the verdict's metric when
    it is a retrieval metric (the tuning sees rankings, not answers), else nDCG."""
    if not getattr(retriever, "tuned", False):
        return None
    chosen = getattr(retriever, "tune_metric", None)
    if chosen:
        return chosen
    metric = spec.scoring.metric  # unset (chosen from the data): nDCG, so the hash needs no dataset
    return metric if metric in RETRIEVAL_METRICS else "ndcg"


def tuning_split(spec: SweepSpec, retriever: RetrieverSpec) -> dict | None:
    """For a tuned retriever: the seed and split settings that choose its validation questions."""
    if not getattr(retriever, "tuned", False):
        return None
    return {"seed": spec.seed, **spec.split.model_dump(mode="json")}


def generator_identity(spec: SweepSpec) -> dict:
    """The generator as it affects answers: for an LLM, the model settings and the prompt text."""
    import hashlib

    # prompt_files: each configuration's own template is hashed by prompt_axis
    gen = spec.generator.model_dump(mode="json", exclude={"prompt_file", "prompt_files"})
    for key in ("abstain_below", "refusal"):  # absent unless set: older hashes stay
        if gen.get(key, 0) is None:
            gen.pop(key)
    if gen.get("abstain_below") == "tune":  # another split must not reuse a threshold tuned on test questions
        gen["abstain_tuning_split"] = {"seed": spec.seed, **spec.split.model_dump(mode="json")}
    if spec.generator.calls_llm:
        assert spec.llm is not None
        gen["llm"] = llm_identity(spec.llm)
        prompt_file = getattr(spec.generator, "prompt_file", None)  # an LLM generator's
        if prompt_file is not None:
            text = Path(prompt_file).read_text(encoding="utf-8")
            gen["prompt_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    return gen


def context_identity(spec: SweepSpec, splitter: SplitterSpec) -> dict:
    """What decides the contexts an LLM writes for a splitter's chunks: the model settings and the prompt."""
    from ragsweep.splitters.situate import template_sha256

    context = splitter.context
    assert not isinstance(context, str), "a splitter's LLM context only"
    return {"llm": llm_identity(context_llm(context, spec.llm)), "prompt_sha256": template_sha256(context.prompt_file)}


def _retrieval_llm(spec: SweepSpec, retriever, parts) -> dict | None:
    """The identity of the LLM a configuration calls while retrieving (fusion rewrites, an LLM graph
    extractor, an LLM transform or reranker among ``parts``), else None."""
    uses_llm = (
        getattr(retriever, "num_queries", 1) > 1
        or getattr(retriever, "uses_llm", False)
        or any(x is not None and x.uses_llm for x in parts)
    )
    return llm_identity(spec.llm) if uses_llm and spec.llm else None


def _retrieval_variants(spec: SweepSpec, retriever) -> list[tuple]:
    """(query transform, reranker) pairs a retriever is combined with; None for ``none``."""
    return [
        (None if absent(t) else t, None if absent(r) else r)
        for t in spec.transforms_for(retriever)
        for r in spec.rerankers_for(retriever.label())
    ]


def expand(spec: SweepSpec) -> list[Configuration]:
    generator = generator_identity(spec)
    out: list[Configuration] = []
    for splitter in spec.splitters:
        for retriever in spec.retrievers:
            embeddings: list[EmbeddingSpec | None] = list(spec.embeddings) if retriever.needs_embedding else [None]
            for emb in embeddings:
                chunk_emb = _chunk_embedding(splitter, emb, spec)
                for transform, reranker in _retrieval_variants(spec, retriever):
                    for k in spec.top_k:
                        parts = (
                            [splitter.label()]
                            + ([emb.label()] if emb is not None else [])
                            + [retriever.label()]
                            + [x.label() for x in (transform, reranker) if x is not None]
                            + [f"k{k}"]
                        )
                        rewrite = _retrieval_llm(spec, retriever, (transform, reranker))
                        out.append(
                            Configuration(
                                "-".join(parts),
                                splitter,
                                chunk_emb,
                                emb,
                                retriever,
                                k,
                                generator,
                                rewrite,
                                reranker,
                                transform,
                                tune_metric(spec, retriever),
                                tuning_split(spec, retriever),
                            )
                        )
    out = postprocessor_axis(spec, out)  # postprocessors: one configuration per one that applies
    out += adaptive_configurations(spec, generator)
    out = history_axis(spec, out)  # history: one configuration per mode of using a follow-up's conversation
    out = [
        replace(c, context_llm=context_identity(spec, c.splitter)) if uses_llm(c.splitter.context) else c for c in out
    ]
    out += baseline_configurations(spec, generator)
    out = prompt_axis(spec, out)  # generator.prompt_files: one configuration per template
    ids = [c.config_id for c in out]
    clash = next((i for i in ids if ids.count(i) > 1), None)
    if clash is not None:  # e.g. a retriever named "bm25-maxsim" beside bm25 with a maxsim reranker
        raise RagsweepError(
            f"two configurations share the id {clash!r}; give a retriever, query transform or "
            "reranker a distinct 'name'"
        )
    return out


def baseline_configurations(spec: SweepSpec, generator: dict) -> list[Configuration]:
    """One configuration per ``baselines`` entry, ``baseline-<kind>``; the spec's first splitter, retriever and
    largest top_k stand in for what it does not use."""
    return [
        Configuration(
            f"baseline-{kind}",
            spec.splitters[0],
            None,
            None,
            spec.retrievers[0],
            max(spec.top_k),
            generator,
            baseline=kind,
        )
        for kind in spec.baselines
    ]


def is_baseline(config: Configuration) -> bool:
    """A reference baseline: scored, shown, never chosen, searched or exported."""
    return config.baseline is not None


def adaptive_identity(amap: AdaptiveMap) -> dict:
    """What decides an adaptive configuration's routing: the classifier's labels, settings and training
    split, and each class's top_k, reranker and transform (the top-level ones stay empty)."""
    return {
        "classifier": amap.classifier_identity(),
        "classes": {
            r.name: {
                "top_k": r.top_k,
                "reranker": reranker_identity(r.reranker) if r.reranker is not None else None,
                "query_transform": r.transform.identity() if r.transform is not None else None,
            }
            for r in amap.routes
        },
    }


def adaptive_configurations(spec: SweepSpec, generator: dict) -> list[Configuration]:
    """One configuration per (splitter, embedding) of each ``adaptive`` entry's retriever, its id without
    ``-k``: ``sentence512-minilm-fusion-adaptive-hypa``."""
    out: list[Configuration] = []
    for i, a in enumerate(spec.adaptive):
        amap = resolve_adaptive(spec, i)
        retriever = next(r for r in spec.retrievers if r.label() == a.retriever)
        rewrite = _retrieval_llm(spec, retriever, [x for r in amap.routes for x in (r.transform, r.reranker)])
        for splitter in spec.splitters:
            for emb in list(spec.embeddings) if retriever.needs_embedding else [None]:
                parts = [splitter.label()] + ([emb.label()] if emb is not None else []) + [retriever.label(), a.label()]
                out.append(
                    Configuration(
                        "-".join(parts),
                        splitter,
                        _chunk_embedding(splitter, emb, spec),
                        emb,
                        retriever,
                        amap.top_k_max,
                        generator,
                        rewrite,
                        tune_metric=tune_metric(spec, retriever),
                        tuning_split=tuning_split(spec, retriever),
                        adaptive=amap,
                    )
                )
    return out
