"""Splitters: every chunk must carry its document id and exact character offsets into the source text."""

from __future__ import annotations

import os
import re

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from llama_index.core.node_parser.interface import TextSplitter  # noqa: E402

from ragsweep.config import (  # noqa: E402
    HFEmbeddingSpec,
    PatternSplitterSpec,
    RecursiveSplitterSpec,
    SemanticSplitterSpec,
    SentenceSplitterSpec,
    TokenSplitterSpec,
)
from ragsweep.datasets.demo import load_demo_corpus  # noqa: E402
from ragsweep.datasets.types import Document  # noqa: E402
from ragsweep.splitters.build import Chunk, make_parser, split_corpus  # noqa: E402
from ragsweep.splitters.pattern import PatternSplitter  # noqa: E402

# the demo spec's splitters
SPECS = {
    "token": TokenSplitterSpec(kind="token", chunk_size=128, chunk_overlap=16),
    "sentence": SentenceSplitterSpec(kind="sentence", chunk_size=256, chunk_overlap=32),
    "recursive": RecursiveSplitterSpec(kind="recursive", chunk_size=800, chunk_overlap=80),
    "semantic": SemanticSplitterSpec(
        kind="semantic", breakpoint_threshold_type="percentile", breakpoint_threshold_amount=90
    ),
    "pattern": PatternSplitterSpec(kind="pattern", pattern=r"\n(?=§)", max_chunk_chars=1500),
}
# splitters whose chunk text is a verbatim slice of the document (the semantic chunker re-joins
# sentences with single spaces, so only its whitespace-normalised text matches)
VERBATIM = {"token", "sentence", "recursive", "pattern"}
# splitters that never overlap
DISJOINT = {"semantic", "pattern"}


def norm(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def demo_docs() -> list[Document]:
    docs = load_demo_corpus()[:3]
    assert len(docs) == 3 and all(len(d.text) > 1500 for d in docs)
    return docs


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    """The bundled MiniLM behind the embedding cache, as LangChain embeddings; loaded once per module."""
    from ragsweep.embeddings.cache import EmbeddingCache
    from ragsweep.embeddings.cached import LangChainEmbeddingAdapter
    from ragsweep.embeddings.factory import cached_model

    cache = EmbeddingCache(tmp_path_factory.mktemp("embcache") / "embeddings.sqlite")
    embedding = cached_model(HFEmbeddingSpec(), cache)
    yield LangChainEmbeddingAdapter(embedding)
    cache.close()


def parser_for(kind: str, request, spec=None):
    spec = spec or SPECS[kind]
    if kind == "semantic":
        return make_parser(spec, request.getfixturevalue("minilm"))
    return make_parser(spec)


def check_chunks(chunks: list[Chunk], docs: list[Document], *, verbatim: bool, disjoint: bool) -> None:
    """Every invariant the retrieval metrics rely on."""
    by_id = {d.doc_id: d for d in docs}
    assert chunks, "no chunks"
    assert len({c.node_id for c in chunks}) == len(chunks), "node ids are not unique"
    assert {c.doc_id for c in chunks} == set(by_id), "some document produced no chunk"
    for doc in docs:
        mine = [c for c in chunks if c.doc_id == doc.doc_id]
        for c in mine:
            assert 0 <= c.start < c.end <= len(doc.text), (c.node_id, c.start, c.end)
            piece = doc.text[c.start : c.end]
            assert norm(piece) == norm(c.text), c.node_id
            if verbatim:
                assert piece == c.text, c.node_id
            # offsets are tight: a chunk's range neither starts nor ends in whitespace
            assert not piece[0].isspace() and not piece[-1].isspace(), c.node_id
        starts = [c.start for c in mine]
        ends = [c.end for c in mine]
        assert starts == sorted(starts) and len(set(starts)) == len(starts), f"{doc.doc_id}: starts {starts}"
        assert ends == sorted(ends), f"{doc.doc_id}: ends {ends}"
        if disjoint:
            for a, b in zip(mine, mine[1:]):
                assert a.end <= b.start, f"{a.node_id} [{a.start},{a.end}) overlaps {b.node_id} [{b.start},{b.end})"
        covered = bytearray(len(doc.text))
        for c in mine:
            covered[c.start : c.end] = b"\1" * (c.end - c.start)
        missing = [i for i, ch in enumerate(doc.text) if not ch.isspace() and not covered[i]]
        assert not missing, (
            f"{doc.doc_id}: characters not in any chunk, first at {missing[0]}: "
            f"{doc.text[missing[0] : missing[0] + 40]!r}"
        )


@pytest.mark.parametrize("kind", list(SPECS))
def test_demo_documents_offsets_are_exact(kind, demo_docs, request):
    parser = parser_for(kind, request)
    chunks = split_corpus(demo_docs, parser, SPECS[kind].label())
    check_chunks(chunks, demo_docs, verbatim=kind in VERBATIM, disjoint=kind in DISJOINT)
    assert all(c.node_id.startswith(f"{SPECS[kind].label()}:{c.doc_id}:") for c in chunks)
    # each demo document is longer than one chunk of every splitter
    for doc in demo_docs:
        assert sum(c.doc_id == doc.doc_id for c in chunks) >= 2, (kind, doc.doc_id)


def test_split_corpus_reports_progress_per_document(demo_docs):
    seen: list[int] = []
    split_corpus(demo_docs, make_parser(SPECS["pattern"]), "pattern", progress=seen.append)
    assert seen == [1, 1, 1]


def test_overlapping_splitters_do_overlap(demo_docs):
    """token/sentence with chunk_overlap > 0 really repeat text between neighbours."""
    for kind in ("token", "sentence"):
        chunks = split_corpus(demo_docs[:1], make_parser(SPECS[kind]), kind)
        assert any(b.start < a.end for a, b in zip(chunks, chunks[1:])), kind


# --------------------------------------------------------------------------- pattern splitter
SECTIONS = (
    '\n§ 1 Definitions\nA "tenant" is a person who rents a dwelling.\n'
    "§ 2 Rent\nRent is due on the first day of each month.\n"
    "§ 3 Deposits\nA deposit may not exceed two months' rent.\n"
    "  § 3a is not a heading because it does not start a line.\n"
    "§ 4 Notice\nEither party may end the tenancy with 30 days' notice."
)


def test_pattern_splitter_starts_every_chunk_at_a_section():
    doc = Document("sections", SECTIONS)
    chunks = split_corpus([doc], make_parser(PatternSplitterSpec(kind="pattern")), "pattern")
    assert [c.text.split("\n", 1)[0] for c in chunks] == ["§ 1 Definitions", "§ 2 Rent", "§ 3 Deposits", "§ 4 Notice"]
    assert all(c.text.startswith("§") for c in chunks)
    assert "§ 3a is not a heading" in chunks[2].text
    check_chunks(chunks, [doc], verbatim=True, disjoint=True)
    # boundaries fall exactly on the newline before each "§"
    assert [c.start for c in chunks] == [m.start() + 1 for m in re.finditer(r"\n(?=§)", SECTIONS)]


def test_pattern_splitter_keeps_the_preamble_as_its_own_chunk():
    text = "Residential Tenancy Regulation\n\n" + SECTIONS.lstrip("\n")
    chunks = split_corpus([Document("d", text)], make_parser(PatternSplitterSpec(kind="pattern")), "p")
    assert chunks[0].text == "Residential Tenancy Regulation"
    assert all(c.text.startswith("§") for c in chunks[1:])
    assert len(chunks) == 5


def test_pattern_splitter_custom_regex():
    text = "ARTICLE I\nFirst.\nARTICLE II\nSecond.\nARTICLE III\nThird."
    parser = PatternSplitter(pattern=r"\n(?=ARTICLE )", max_chunk_chars=None)
    assert parser.split_text(text) == ["ARTICLE I\nFirst.", "ARTICLE II\nSecond.", "ARTICLE III\nThird."]


@pytest.mark.parametrize("max_chars", [200, 400, 1000])
def test_pattern_splitter_resplits_overlong_sections(max_chars):
    long = " ".join(
        f"Clause {i} requires the operator to file report number {i} with the registrar." for i in range(40)
    )
    text = "\n§ 1 Short\nA short section.\n§ 2 Long\n" + long + "\n§ 3 Tail\nThe end."
    doc = Document("long", text)
    spec = PatternSplitterSpec(kind="pattern", max_chunk_chars=max_chars)
    chunks = split_corpus([doc], make_parser(spec), "p")
    check_chunks(chunks, [doc], verbatim=False, disjoint=True)
    assert chunks[0].text == "§ 1 Short\nA short section."
    assert chunks[-1].text == "§ 3 Tail\nThe end."
    middle = chunks[1:-1]
    assert len(middle) >= len(long) // max_chars  # really re-split
    assert middle[0].text.startswith("§ 2 Long")
    # "no chunk exceeds max_chunk_chars by much"
    assert all(len(c.text) <= 1.25 * max_chars for c in chunks), [len(c.text) for c in chunks]
    # the pieces tile the long section
    sec_start = text.index("§ 2 Long")
    sec_end = text.index("\n§ 3")
    assert middle[0].start == sec_start and middle[-1].end == sec_end

    unlimited = split_corpus([doc], make_parser(PatternSplitterSpec(kind="pattern", max_chunk_chars=None)), "p")
    assert len(unlimited) == 3


# --------------------------------------------------------------------------- repeated paragraphs
PARA = "The landlord must repair the roof within\n30 days of notice. Repairs are\nfree of charge.\n\n"
REPEATED = "Title line\n\n" + PARA * 4 + "§ 9 End\nNothing more here at all."
SECTION = "§ 1 Fees\nThe tenant shall pay a fee of ten pounds.\nThe fee is due monthly.\n"
REPEATED_SECTIONS = "Fee Schedule\n" + SECTION * 4 + "§ 5 End\nNothing more."

SMALL = {
    "token": (TokenSplitterSpec(kind="token", chunk_size=16, chunk_overlap=0), False),
    "sentence": (SentenceSplitterSpec(kind="sentence", chunk_size=24, chunk_overlap=0), False),
    "recursive": (RecursiveSplitterSpec(kind="recursive", chunk_size=90, chunk_overlap=0), True),
    "pattern": (PatternSplitterSpec(kind="pattern", pattern=r"\n\n"), True),
}


@pytest.mark.parametrize("kind", list(SMALL))
def test_repeated_paragraphs_get_distinct_increasing_offsets(kind):
    spec, disjoint = SMALL[kind]
    doc = Document("rep", REPEATED)
    chunks = split_corpus([doc], make_parser(spec), kind)
    assert len(chunks) >= 4
    check_chunks(chunks, [doc], verbatim=True, disjoint=disjoint)
    if kind in ("recursive", "pattern"):
        # one chunk per paragraph: the four identical ones sit at four different places
        para_chunks = [c for c in chunks if c.text == PARA.strip()]
        assert [c.start for c in para_chunks] == [m.start() for m in re.finditer(re.escape(PARA.strip()), REPEATED)]


def test_repeated_identical_sections_pattern_splitter():
    doc = Document("fees", REPEATED_SECTIONS)
    chunks = split_corpus([doc], make_parser(PatternSplitterSpec(kind="pattern")), "pattern")
    same = [c for c in chunks if c.text == SECTION.strip()]
    assert len(same) == 4
    assert [c.start for c in same] == [m.start() for m in re.finditer(re.escape(SECTION.strip()), REPEATED_SECTIONS)]
    check_chunks(chunks, [doc], verbatim=True, disjoint=True)


class ReflowSplitter(TextSplitter):
    """One chunk per blank-line paragraph with whitespace collapsed, as LangChain-style splitters do."""

    @classmethod
    def class_name(cls) -> str:
        return "ReflowSplitter"

    def split_text(self, text: str) -> list[str]:
        return [norm(p) for p in text.split("\n\n") if p.strip()]


def test_reflowed_chunks_are_located_in_order():
    """Chunks whose whitespace differs from the source are found again with the normalised search."""
    text = "Alpha one\ntwo.\n\nBeta three\nfour.\n\nGamma five\nsix."
    doc = Document("d", text)
    chunks = split_corpus([doc], ReflowSplitter(include_metadata=False), "reflow")
    assert [c.text for c in chunks] == ["Alpha one two.", "Beta three four.", "Gamma five six."]
    assert [(c.start, c.end) for c in chunks] == [(0, 14), (16, 32), (34, 49)]
    check_chunks(chunks, [doc], verbatim=False, disjoint=True)


def test_reflowed_repeated_paragraphs_get_distinct_offsets():
    doc = Document("rep", REPEATED)
    chunks = split_corpus([doc], ReflowSplitter(include_metadata=False), "reflow")
    para_chunks = [c for c in chunks if c.text == norm(PARA)]
    assert len(para_chunks) == 4
    check_chunks(chunks, [doc], verbatim=False, disjoint=True)


def test_semantic_splitter_repeated_paragraphs_are_in_order(minilm):
    """What holds today for the semantic splitter on repeated text: exact (normalised) text, ordered starts."""
    doc = Document("rep", REPEATED)
    spec = SemanticSplitterSpec(kind="semantic", breakpoint_threshold_amount=50)
    chunks = split_corpus([doc], make_parser(spec, minilm), "semantic")
    assert len(chunks) >= 2
    for c in chunks:
        assert norm(doc.text[c.start : c.end]) == norm(c.text)
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)
    assert chunks[-1].text.startswith("§ 9 End")


def test_semantic_splitter_repeated_paragraphs_tile_the_document(minilm):
    doc = Document("rep", REPEATED)
    spec = SemanticSplitterSpec(kind="semantic", breakpoint_threshold_amount=50)
    chunks = split_corpus([doc], make_parser(spec, minilm), "semantic")
    check_chunks(chunks, [doc], verbatim=False, disjoint=True)


# --------------------------------------------------------------------------- misc
def test_semantic_parser_requires_embeddings():
    with pytest.raises(ValueError, match="embedding"):
        make_parser(SemanticSplitterSpec(kind="semantic"))


def test_whitespace_only_document_gives_no_chunks():
    doc = Document("blank", "   \n\n  \t ")
    assert split_corpus([doc], make_parser(SPECS["pattern"]), "p") == []
    assert split_corpus([doc], make_parser(SPECS["sentence"]), "s") == []


def test_node_ids_unique_across_documents_with_same_text():
    docs = [Document("a", SECTIONS), Document("b", SECTIONS)]
    chunks = split_corpus(docs, make_parser(SPECS["pattern"]), "pattern")
    assert len({c.node_id for c in chunks}) == len(chunks) == 8
    a = [(c.start, c.end) for c in chunks if c.doc_id == "a"]
    b = [(c.start, c.end) for c in chunks if c.doc_id == "b"]
    assert a == b
