"""Find a query's entry points into a knowledge graph without a model: the graph's entity names
that occur in the query.

LlamaIndex's keyword retrievers ask an LLM for keywords; offline, the graph's own vocabulary is the
better dictionary. Names and query are compared as token sequences with a light plural folding
(``rights`` ~ ``right``, ``parties`` ~ ``party``), matched leftmost-longest without overlap, and
the longest (most specific) names are kept first, up to ``max_keywords`` (HyPA-RAG's keywords per
query, Kalra et al. 2024, arXiv:2409.09046).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"§|\d+(?:\.\d+)*(?:\([a-z0-9]+\))*|[a-z]+")


def _fold(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def tokens(text: str) -> tuple[str, ...]:
    return tuple(_fold(t) for t in _TOKEN.findall(text.lower()))


@dataclass
class EntityVocabulary:
    """Entity ids of one graph indexed by their first token, longest names first."""

    by_first: dict[str, list[tuple[tuple[str, ...], list[str]]]] = field(default_factory=dict)
    size: int = 0

    @classmethod
    def of(cls, names) -> "EntityVocabulary":
        """Names that fold to the same tokens (``right``, ``rights``) are one entry: all are entry points."""
        grouped: dict[tuple[str, ...], list[str]] = {}
        for name in sorted(set(names)):
            toks = tokens(name)
            if toks:
                grouped.setdefault(toks, []).append(name)
        vocab = cls(size=sum(len(v) for v in grouped.values()))
        for toks, group in grouped.items():
            vocab.by_first.setdefault(toks[0], []).append((toks, group))
        for entries in vocab.by_first.values():
            entries.sort(key=lambda e: (-len(e[0]), e[0]))
        return vocab


def match_entities(query: str, vocab: EntityVocabulary, max_keywords: int) -> list[str]:
    """Entity ids named in ``query``: leftmost-longest, no overlaps, longest first, at most ``max_keywords``."""
    toks = tokens(query)
    found: list[tuple[int, int, list[str]]] = []  # (-length, position, ids)
    i = 0
    while i < len(toks):
        hit = None
        for name_toks, names in vocab.by_first.get(toks[i], ()):
            if toks[i : i + len(name_toks)] == name_toks:
                hit = (name_toks, names)
                break  # entries are longest first
        if hit is None:
            i += 1
            continue
        found.append((-len(hit[0]), i, hit[1]))
        i += len(hit[0])
    out: list[str] = []
    for _, _, names in sorted(found):
        out.extend(n for n in names if n not in out)
    return out[:max_keywords]
