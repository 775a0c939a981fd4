"""The offline legal-pattern triplets (``legal_patterns``) as a LlamaIndex kg extractor for PropertyGraphIndex."""

from __future__ import annotations

from typing import Any, Sequence

from llama_index.core.graph_stores.types import KG_NODES_KEY, KG_RELATIONS_KEY, EntityNode, Relation
from llama_index.core.schema import BaseNode, MetadataMode, TransformComponent

from ragsweep.graphs.legal_patterns import extract_triplets


class LegalPatternExtractor(TransformComponent):
    """LlamaIndex kg extractor built on :func:`extract_triplets`: no LLM, no network, deterministic.

    Mirrors SimpleLLMPathExtractor: appends EntityNode/Relation objects (carrying the chunk's metadata
    as properties) to any lists already in ``node.metadata`` under KG_NODES_KEY / KG_RELATIONS_KEY."""

    max_triplets_per_chunk: int = 64

    @classmethod
    def class_name(cls) -> str:
        return "LegalPatternExtractor"

    def __call__(self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any) -> Sequence[BaseNode]:
        for node in nodes:
            kg_nodes, kg_relations = node.metadata.pop(KG_NODES_KEY, []), node.metadata.pop(KG_RELATIONS_KEY, [])
            metadata = node.metadata.copy()
            text = node.get_content(metadata_mode=MetadataMode.NONE)
            for t in extract_triplets(text, self.max_triplets_per_chunk):
                subj = EntityNode(name=t.subject, label=t.subject_label, properties=metadata)
                obj = EntityNode(name=t.object, label=t.object_label, properties=metadata)
                kg_nodes += [subj, obj]
                kg_relations.append(
                    Relation(label=t.relation, source_id=subj.id, target_id=obj.id, properties=metadata)
                )
            node.metadata[KG_NODES_KEY], node.metadata[KG_RELATIONS_KEY] = kg_nodes, kg_relations
        return nodes

    async def acall(self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any) -> Sequence[BaseNode]:
        return self.__call__(nodes, show_progress=show_progress, **kwargs)
