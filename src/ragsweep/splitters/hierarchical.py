"""The chunk tree of LlamaIndex's ``HierarchicalNodeParser`` with exact document offsets.

LlamaIndex cuts each level's chunks out of their parent's text, so a child's ``start_char_idx`` is
relative to its parent; here every node gets its range in the document. The leaves are what the
``hierarchical`` splitter indexes (BM25 and vector see only them); the tree is what the
``auto_merging`` postprocessor merges them up (it rebuilds a document's tree on demand, memoised, so a
chunk cache entry needs nothing beyond the leaves).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, cast

from ragsweep.datasets.locate import find_span

if TYPE_CHECKING:
    from llama_index.core.schema import TextNode


@dataclass(frozen=True)
class TreeNode:
    """One chunk of the tree: its half-open range in the document, its parent's and children's
    positions in the tree (``None``: a root)."""

    start: int
    end: int
    parent: int | None
    children: tuple[int, ...]


@lru_cache(maxsize=1024)
def build_tree(text: str, chunk_sizes: tuple[int, ...], chunk_overlap: int) -> tuple[TreeNode, ...]:
    """Every level's chunks of ``text`` (roots first, level by level, each level in document order)."""
    from llama_index.core import Document
    from llama_index.core.node_parser import HierarchicalNodeParser
    from llama_index.core.schema import MetadataMode

    parser = HierarchicalNodeParser.from_defaults(
        chunk_sizes=list(chunk_sizes), chunk_overlap=chunk_overlap, include_metadata=False, include_prev_next_rel=False
    )
    # typed as BaseNode: the parser's nodes are TextNodes (they carry start_char_idx)
    nodes = cast("list[TextNode]", parser.get_nodes_from_documents([Document(text=text)]))
    pos = {n.node_id: i for i, n in enumerate(nodes)}
    spans: list[tuple[int, int]] = []
    cursors: dict[int | None, int] = {}  # per parent: where its next child is searched from
    for n in nodes:
        parent = pos[n.parent_node.node_id] if n.parent_node is not None else None
        base, limit = (0, len(text)) if parent is None else spans[parent]
        content = n.get_content(metadata_mode=MetadataMode.NONE)
        rel = n.start_char_idx
        start = base + rel if rel is not None else -1
        cursor = cursors.get(parent, base)
        if rel is None or start < cursor or text[start : start + len(content)] != content:
            span = find_span(text[:limit], content, cursor)
            if span is None:
                raise ValueError(f"could not locate a hierarchical chunk at level of parent {parent} in its text")
            start = span[0]
            end = span[1]
        else:
            end = start + len(content)
        cursors[parent] = start + 1
        spans.append((start, end))
    children: dict[int, list[int]] = {}
    parents = [pos[n.parent_node.node_id] if n.parent_node is not None else None for n in nodes]
    for i, p in enumerate(parents):
        if p is not None:
            children.setdefault(p, []).append(i)
    return tuple(TreeNode(s, e, parents[i], tuple(children.get(i, ()))) for i, (s, e) in enumerate(spans))


def leaves(tree: tuple[TreeNode, ...]) -> list[int]:
    """The tree's leaves (positions), in the order the splitter numbers its chunks."""
    return [i for i, n in enumerate(tree) if not n.children]


class HierarchicalLeafParser:
    """The ``hierarchical`` splitter for ``split_corpus``: a document's leaves as TextNodes with exact
    document offsets (``exact_offsets``: nothing to locate again; overlapping leaves of neighbouring
    parents need not start in order)."""

    exact_offsets = True

    def __init__(self, chunk_sizes: list[int], chunk_overlap: int) -> None:
        self.chunk_sizes = tuple(chunk_sizes)
        self.chunk_overlap = chunk_overlap

    def get_nodes_from_documents(self, documents) -> list:
        from llama_index.core.schema import TextNode

        out: list[TextNode] = []
        for doc in documents:
            tree = build_tree(doc.text, self.chunk_sizes, self.chunk_overlap)
            out.extend(
                TextNode(
                    text=doc.text[tree[i].start : tree[i].end], start_char_idx=tree[i].start, end_char_idx=tree[i].end
                )
                for i in leaves(tree)
            )
        return out
