"""Auto-merging (LlamaIndex ``AutoMergingRetriever`` over a ``HierarchicalNodeParser`` tree): when more
than ``ratio`` of a parent's children were retrieved, they are replaced by the parent, level by level
up while that holds.

LlamaIndex's class wraps a vector retriever and a docstore; ragsweep's retrievers are memoised and
shared by many configurations, so this is the same merge as a step over their results
(``_get_parents_and_merge``: the ratio rule, the parent scored by its retrieved children's mean score,
repeated until nothing merges). Two things differ, on purpose: the parent takes the place of its
best-ranked child (LlamaIndex re-sorts by score, and scores of different retrievers are on different
scales), and LlamaIndex's gap filling between list neighbours is left out. A merged source has the
parent's exact document range, so the span metrics score what the generator read.
"""

from __future__ import annotations

from ragsweep.postprocessors.base import DocumentRange, Shaped, chunk_index, span_node
from ragsweep.splitters.hierarchical import build_tree, leaves


def merge(
    items: list[tuple[int, list[int], float | None]], tree, ratio: float
) -> list[tuple[int, list[int], float | None]]:
    """``items``: ``(tree position, members, score)`` in rank order, members being rank positions.
    Returns them merged up the tree, ordered by their best-ranked member."""
    changed = True
    while changed:
        changed = False
        by_parent: dict[int, list[int]] = {}
        for i, (node, _, _) in enumerate(items):
            if tree[node].parent is not None:
                by_parent.setdefault(tree[node].parent, []).append(i)
        merged: dict[int, tuple] = {}
        drop: set[int] = set()
        for parent, idx in by_parent.items():
            if len(idx) / len(tree[parent].children) > ratio:
                members = sorted(m for i in idx for m in items[i][1])
                scores = [items[i][2] or 0.0 for i in idx]
                merged[min(idx)] = (parent, members, sum(scores) / len(scores))
                drop.update(idx)
        if drop:
            changed = True
            items = [merged.get(i, it) for i, it in enumerate(items) if i not in drop or i in merged]
            items.sort(key=lambda it: it[1][0])
    return items


def apply(spec, config, nodes: list, dataset) -> Shaped:
    splitter = config.splitter
    by_doc: dict[str, list[int]] = {}
    for pos, n in enumerate(nodes):
        by_doc.setdefault(n.node.metadata["doc_id"], []).append(pos)
    shaped = []
    merges = 0
    for doc_id, positions in by_doc.items():
        doc = dataset.document(doc_id)
        tree = build_tree(doc.text, tuple(splitter.chunk_sizes), splitter.chunk_overlap)
        leaf_at = leaves(tree)
        items = [(leaf_at[chunk_index(nodes[p].node.node_id)], [p], nodes[p].score) for p in positions]
        for node, members, score in merge(items, tree, spec.ratio):
            if len(members) == 1 and tree[node].children == ():  # a leaf left as it was
                shaped.append((members[0], nodes[members[0]]))
                continue
            merges += 1
            t = tree[node]
            group = [nodes[m] for m in members]
            span = DocumentRange(doc_id, t.start, t.end, doc.text[t.start : t.end])
            shaped.append((members[0], span_node(group, span, score, "parent")))
    ranked = [n for _, n in sorted(shaped, key=lambda x: x[0])]
    return Shaped(ranked, ranked, {"postprocess": {"merged": merges}})
