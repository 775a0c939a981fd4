"""Sentence window, small-to-big (LlamaIndex ``SentenceWindowNodeParser`` + ``MetadataReplacementPostProcessor``):
single sentences are indexed and retrieved, and the generator reads each one's window of
``window_size`` sentences either side instead.

A window is cut from the document itself, from its first sentence's start to its last one's end, so
the record's source range is exactly what the generator read and the span metrics score that. The
windows of retrieved sentences in the same document that share a sentence are merged into one source
(their union, at the place of the best-ranked of them, with its score), so no text reaches the
generator, or the metrics, twice; windows that only touch stay apart. A document's sentences are
re-split on demand (memoised), exactly as the splitter cut them.
"""

from __future__ import annotations

import json
from functools import lru_cache

from ragsweep.postprocessors.base import DocumentRange, Shaped, chunk_index, span_node


@lru_cache(maxsize=4096)
def _sentences(splitter_json: str, key: str, doc_id: str, text: str) -> tuple[tuple[int, int], ...]:
    """``doc_id``'s sentence ranges, indexed by chunk number (``key:doc_id:i``), as the splitter cut them."""
    from ragsweep.config.splitters import SentenceWindowSplitterSpec
    from ragsweep.datasets.types import Document
    from ragsweep.splitters.build import make_parser, split_corpus

    spec = SentenceWindowSplitterSpec.model_validate_json(splitter_json)
    chunks = split_corpus([Document(doc_id=doc_id, text=text)], make_parser(spec), key)
    by_index = {chunk_index(c.node_id): (c.start, c.end) for c in chunks}
    return tuple(by_index.get(i, (-1, -1)) for i in range(max(by_index, default=-1) + 1))


def windows(sentence_ids: list[int], n_sentences: int, size: int) -> list[tuple[int, int, list[int]]]:
    """Merged windows ``(first, last, members)`` of the sentences at ``sentence_ids`` (rank order; inclusive
    sentence positions), ordered by their best-ranked member; members are positions in ``sentence_ids``."""
    groups: list[list] = []  # [first, last, members]
    for pos, i in enumerate(sentence_ids):
        lo, hi, members = max(0, i - size), min(n_sentences - 1, i + size), [pos]
        for g in [g for g in groups if g[0] <= hi and lo <= g[1]]:  # shares a sentence: merge (transitively)
            lo, hi, members = min(lo, g[0]), max(hi, g[1]), g[2] + members
            groups.remove(g)
        groups.append([lo, hi, sorted(members)])
    return sorted(((g[0], g[1], g[2]) for g in groups), key=lambda g: g[2][0])


def apply(spec, config, nodes: list, dataset) -> Shaped:
    splitter_json = json.dumps(config.splitter.model_dump(mode="json"), sort_keys=True)
    size = config.splitter.window_size
    by_doc: dict[str, list[int]] = {}  # doc -> positions in nodes
    for pos, n in enumerate(nodes):
        by_doc.setdefault(n.node.metadata["doc_id"], []).append(pos)
    shaped = []
    for doc_id, positions in by_doc.items():
        doc = dataset.document(doc_id)
        sents = _sentences(splitter_json, config.chunk_key, doc_id, doc.text)
        ids = [chunk_index(nodes[p].node.node_id) for p in positions]
        for lo, hi, members in windows(ids, len(sents), size):
            live = [k for k in range(lo, hi + 1) if sents[k][0] >= 0]  # skip numbers of whitespace-only pieces
            start, end = sents[live[0]][0], max(sents[k][1] for k in live)
            group = [nodes[positions[m]] for m in members]
            span = DocumentRange(doc_id, start, end, doc.text[start:end])
            shaped.append((positions[members[0]], span_node(group, span, group[0].score, "window")))
    ranked = [n for _, n in sorted(shaped, key=lambda x: x[0])]
    return Shaped(ranked, ranked, {"postprocess": {"windows": len(ranked)}})
