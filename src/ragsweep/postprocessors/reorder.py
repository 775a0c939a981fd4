"""Long-context reorder (LlamaIndex ``LongContextReorder``): the best-ranked nodes at the start and the
end of the context, the weakest in the middle, where a long context's reader attends least (Liu et al.
2023, "Lost in the Middle: How Language Models Use Long Contexts", arXiv:2307.03172).

Only the generator's order changes: the record's sources and its retrieval metrics stay in rank
order, and ``context_order`` lists the ranks in the order the generator reads them. LlamaIndex sorts
by score; it is given each node's rank as its score (rank 1 highest), so ties and missing scores
(graph retrievers) cannot reorder the ranking it starts from.
"""

from __future__ import annotations

from ragsweep.postprocessors.base import Shaped


def apply(spec, config, nodes: list, dataset) -> Shaped:
    from llama_index.core.postprocessor import LongContextReorder
    from llama_index.core.schema import NodeWithScore

    by_rank = [NodeWithScore(node=n.node, score=-float(rank)) for rank, n in enumerate(nodes, start=1)]
    order = [int(-(n.score or 0.0)) for n in LongContextReorder().postprocess_nodes(by_rank)]  # set just above
    return Shaped(list(nodes), [nodes[r - 1] for r in order], {"context_order": order})
