"""A loaded configuration as LlamaIndex's ``RetrieverQueryEngine``: its retriever, its postprocessor as a node
postprocessor (the generator reads the shaped context, as in the sweep), its generator as the synthesizer."""

from __future__ import annotations

from typing import Any

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle
from pydantic import ConfigDict


class ShapedContext(BaseNodePostprocessor):
    """The configuration's postprocessor (window, merge, cutoff, order, MMR): the nodes the generator reads."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    config: Any
    dataset: Any

    @classmethod
    def class_name(cls) -> str:
        return "RagsweepShapedContext"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        from ragsweep.postprocessors.registry import postprocess

        shaped, _ = postprocess(self.config, nodes, self.dataset)
        return list(shaped.context)


def query_engine(pipeline) -> Any:
    """``RetrieverQueryEngine`` of ``pipeline`` (a ``LivePipeline``): the extractive synthesizer, or the LLM
    generator's response synthesizer on the spec's ``llm`` with the configuration's prompt."""
    from llama_index.core.query_engine import RetrieverQueryEngine

    config = pipeline.config
    postprocessors: list[BaseNodePostprocessor] = []
    if config.postprocessor is not None:
        postprocessors.append(ShapedContext(config=config, dataset=pipeline.dataset))
    synth: Any
    if not pipeline.spec.generator.calls_llm:
        from ragsweep.pipelines.extractive import ExtractiveSynthesizer

        synth = ExtractiveSynthesizer(pipeline.spec.generator.max_sentences)
        if pipeline.built.abstain is not None:
            synth = Abstaining(synth, pipeline.built.abstain)
    else:
        from ragsweep.pipelines.stages.generate import make_llm_synthesizer

        llm = pipeline.clients.get(pipeline.spec.llm)
        synth = make_llm_synthesizer(pipeline.spec, llm, config.prompt or "")
    engine = RetrieverQueryEngine(
        retriever=pipeline.retriever, node_postprocessors=postprocessors, response_synthesizer=synth
    )
    # the pipeline lives as long as its engine: an exported folder's private copy, its clients and connections
    # close with the pipeline, which ``load_pipeline(FOLDER).engine.query(...)`` would otherwise drop at once
    engine._ragsweep_pipeline = pipeline  # type: ignore[attr-defined]
    return engine


class Abstaining:
    """The extractive synthesizer with the configuration's abstention rule: the refusal sentence when the best
    retrieved score is below the threshold (the run's, chosen on its validation questions when tuned)."""

    def __init__(self, inner, rule) -> None:
        self.inner, self.rule = inner, rule

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def synthesize(self, query, nodes, **kwargs):
        response = self.inner.synthesize(query, nodes, **kwargs)
        response.response, _ = self.rule.apply(nodes, response.response or "")
        return response

    async def asynthesize(self, query, nodes, **kwargs):
        response = await self.inner.asynthesize(query, nodes, **kwargs)
        response.response, _ = self.rule.apply(nodes, response.response or "")
        return response


def chat_engine(pipeline) -> Any:
    """LlamaIndex's chat engine of a configuration whose history mode is one: ``condense`` a
    ``CondenseQuestionChatEngine`` over the configuration's query engine, ``condense_plus_context`` a
    ``CondensePlusContextChatEngine`` over its retriever and shaped context; both condense with the sweep's LLM and
    prompt (the same text, met in the same LLM cache). ``LivePipeline.ask(..., history=...)`` and ``serve`` answer
    exactly as the sweep did; these are for LlamaIndex applications."""
    from llama_index.core.chat_engine import CondensePlusContextChatEngine, CondenseQuestionChatEngine

    from ragsweep.errors import RagsweepError

    config = pipeline.config
    kind = config.history.kind if config.history is not None else "none"
    if kind not in ("condense", "condense_plus_context"):
        raise RagsweepError(
            f"{config.config_id}: its history mode ({kind}) needs no chat engine; use .engine (a query engine), or "
            ".ask(question, history=...) to answer a follow-up as the sweep did"
        )
    llm = pipeline.ctx.llm
    if kind == "condense":
        return CondenseQuestionChatEngine.from_defaults(query_engine=query_engine(pipeline), llm=llm)
    postprocessors: list[BaseNodePostprocessor] = []
    if config.postprocessor is not None:
        postprocessors.append(ShapedContext(config=config, dataset=pipeline.dataset))
    engine = CondensePlusContextChatEngine.from_defaults(
        retriever=pipeline.retriever, llm=llm, node_postprocessors=postprocessors
    )
    engine._ragsweep_pipeline = pipeline  # type: ignore[attr-defined]
    return engine
