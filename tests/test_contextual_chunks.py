"""Contextual chunks (``splitters[].context``): the pure prefix function on hand-made documents, the
chunk's node (the prefix seen when embedding and by BM25, hidden from the LLM), the chunk cache, a BM25
search that only the title can answer, ids and hashes, and a small demo sweep whose sources stay raw."""

from __future__ import annotations

import json
import pickle

import pytest

from ragsweep.config import parse_spec
from ragsweep.datasets.types import Document
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.grid import expand
from ragsweep.splitters.build import Chunk
from ragsweep.splitters.chunk_store import load_chunks, save_chunks
from ragsweep.splitters.context_prefix import context_prefix, contextualise, document_title, headings, readable_name

DEMO = {"name": "ctx", "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}}}

CONTRACT = (
    "MASTER SERVICES AGREEMENT\n\n"
    "1. Definitions\n“Services” means the services in Schedule A.\n\n"
    "2. Obligations\nThe Supplier shall perform the Services.\n"
    "   2.3\u00a0\u00a0Term   \r\n"  # PDF whitespace: indent, no-break spaces, trailing \r
    "The term is five years.\n"
    "1. the supplier shall not assign this agreement without consent, which shall not be unreasonably withheld\n"
    "(1) A numbered clause in brackets is body text.\n"
    "§ 5 Liability\nLiability is capped.\n"
    "“SCHEDULE A”\nThe services are listed here.\n"
)


def _doc(text: str, doc_id: str = "contracts/Master_Services%20Agreement.pdf", **meta) -> Document:
    return Document(doc_id=doc_id, text=text, metadata=meta)


def _at(text: str, needle: str) -> int:
    return text.index(needle)


# --- the prefix (pure) ------------------------------------------------------------------------------------------


def test_title_is_the_loaders_title_else_the_readable_file_name():
    assert readable_name("contracts/Master_Services%20Agreement.pdf") == "Master Services Agreement"
    assert readable_name("nda_2024") == "nda 2024" and readable_name("a/b/c.txt") == "c"
    assert document_title(_doc("x", title="  The   Title ")) == "The Title"
    assert document_title(_doc("x")) == "Master Services Agreement"
    assert context_prefix(_doc("x", title="T"), 0, "title") == "T" and context_prefix(_doc("x"), 0, "none") is None


def test_heading_path_nests_numbered_section_and_caps_headings():
    doc = _doc(CONTRACT)
    heads = [(h.level, h.text) for h in headings(CONTRACT)]
    assert heads == [
        (1, "MASTER SERVICES AGREEMENT"),
        (1, "1. Definitions"),
        (1, "2. Obligations"),
        (2, "2.3 Term"),
        (1, "§ 5 Liability"),
        (1, "“SCHEDULE A”"),
    ]
    # the heading equal to the title is not repeated; the ALL-CAPS title line opens the path otherwise
    title = "Master Services Agreement"
    assert context_prefix(doc, _at(CONTRACT, "“Services”"), "title_headings") == f"{title} > 1. Definitions"
    assert context_prefix(doc, _at(CONTRACT, "The term"), "title_headings") == f"{title} > 2. Obligations > 2.3 Term"
    # a long numbered line and a bracketed clause are body text: the path stays at 2.3
    assert context_prefix(doc, _at(CONTRACT, "(1) A"), "title_headings") == f"{title} > 2. Obligations > 2.3 Term"
    assert context_prefix(doc, _at(CONTRACT, "Liability is"), "title_headings") == f"{title} > § 5 Liability"
    assert context_prefix(doc, _at(CONTRACT, "The services are"), "title_headings") == f"{title} > “SCHEDULE A”"
    # a chunk starting on a heading line belongs to that heading's section
    assert context_prefix(doc, _at(CONTRACT, "2. Obligations"), "title_headings").endswith("> 2. Obligations")


def test_markdown_headings_keep_the_nearest_of_each_level():
    text = "# Guide\nintro\n## Install\nsteps\n### Linux\napt\n## Use\nrun it\n### Flags #\n-v\n"
    doc = _doc(text, doc_id="guide.md", title="Guide")
    assert context_prefix(doc, _at(text, "apt"), "title_headings") == "Guide > Install > Linux"
    assert context_prefix(doc, _at(text, "run it"), "title_headings") == "Guide > Use"
    assert context_prefix(doc, _at(text, "-v"), "title_headings") == "Guide > Use > Flags"
    assert context_prefix(doc, 0, "title_headings") == "Guide"


def test_no_headings_gives_the_title_alone():
    text = "plain prose without any heading at all.\nanother line, still prose.\n"
    doc = _doc(text, doc_id="notes_2024.txt")
    assert headings(text) == []
    assert context_prefix(doc, 20, "title_headings") == context_prefix(doc, 20, "title") == "notes 2024"


# --- the chunk and its node ---------------------------------------------------------------------------------------


def test_the_prefix_is_embedded_and_indexed_but_the_llm_reads_the_raw_chunk(tmp_path):
    from llama_index.core.schema import MetadataMode

    text = "1. Term\nThe term is five years."
    doc = _doc(text, doc_id="lease.txt", title="Lease")
    raw = Chunk("s:lease.txt:0", "lease.txt", 8, len(text), text[8:])
    [chunk] = contextualise([raw], [doc], "title_headings")
    assert chunk.context == "Lease > 1. Term" and (chunk.text, chunk.start, chunk.end) == (raw.text, raw.start, raw.end)
    node = chunk.to_node()
    assert node.get_content(metadata_mode=MetadataMode.EMBED) == chunk.index_text == f"Lease > 1. Term\n\n{raw.text}"
    assert node.get_content(metadata_mode=MetadataMode.LLM) == node.get_content() == node.text == raw.text
    assert (node.start_char_idx, node.end_char_idx) == (8, len(text))
    assert raw.to_node().get_content(metadata_mode=MetadataMode.EMBED) == raw.index_text == raw.text
    assert contextualise([raw], [doc], "none") == [raw]
    # pickling (Ray) and the chunk cache keep the prefix; a plain chunk is stored as before (5 fields)
    assert pickle.loads(pickle.dumps(chunk)) == chunk
    save_chunks(tmp_path / "c.json", [raw, chunk])
    assert load_chunks(tmp_path / "c.json") == [raw, chunk]
    assert [len(r) for r in json.loads((tmp_path / "c.json").read_text())] == [5, 6]


def test_bm25_finds_a_chunk_by_its_title_only_with_the_title_context():
    from ragsweep.retrievers.factory import bm25_retriever

    docs = [
        _doc(t, doc_id=f"d{i}", title=title)
        for i, (title, t) in enumerate(
            [
                ("Zeppelin Hangar Lease", "The rent is due monthly in advance."),
                ("Office Cleaning Contract", "Cleaning happens every weekday evening."),
                ("Parking Permit Rules", "Permits are issued for one calendar year."),
                ("Canteen Menu Policy", "Meals are served between noon and two."),
            ]
        )
    ]
    plain = [Chunk(f"s:{d.doc_id}:0", d.doc_id, 0, len(d.text), d.text) for d in docs]

    def search(chunks):
        return [(n.node.node_id, n.score) for n in bm25_retriever(chunks, 4).retrieve("zeppelin")]

    assert all(score <= 0 for _, score in search(plain))
    found = search(contextualise(plain, docs, "title"))
    assert found[0][0] == "s:d0:0" and found[0][1] > 0 and all(score <= 0 for _, score in found[1:])


# --- spec, ids, hashes ----------------------------------------------------------------------------------------------


def _spec(*splitters: dict):
    return parse_spec(
        {**DEMO, "splitters": list(splitters), "retrievers": [{"kind": "bm25"}, {"kind": "vector"}], "top_k": [3]}
    )


PLAIN = {"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}


def test_plain_splitters_keep_ids_and_hashes_and_contextual_ones_differ():
    plain = {c.config_id: c.config_hash for c in expand(_spec(PLAIN))}
    assert {c.config_id: c.config_hash for c in expand(_spec({**PLAIN, "context": "none"}))} == plain
    both = expand(_spec(PLAIN, {**PLAIN, "context": "title"}, {**PLAIN, "context": "title_headings"}))
    assert {c.config_id: c.config_hash for c in both if c.splitter.context == "none"} == plain
    assert all("context" not in c.chunk_identity()["splitter"] for c in both if c.splitter.context == "none")
    ctx = {c.config_id: c for c in both if c.splitter.context != "none"}
    assert set(ctx) == {
        "sentence256-ctitle-bm25-k3",
        "sentence256-ctitle-minilm-vector-k3",
        "sentence256-cheadings-bm25-k3",
        "sentence256-cheadings-minilm-vector-k3",
    }
    assert ctx["sentence256-cheadings-bm25-k3"].chunk_identity()["splitter"]["context"] == "title_headings"
    assert ctx["sentence256-ctitle-bm25-k3"].labels()["splitter"] == "sentence256-ctitle"
    assert len({c.config_hash for c in both}) == len(both)


def test_a_bad_context_names_the_field():
    with pytest.raises(RagsweepError, match=r"splitters\[0\]\.context"):
        _spec({**PLAIN, "context": "headings"})


# --- a sweep ---------------------------------------------------------------------------------------------------------


def test_demo_sweep_with_contextual_chunks_records_raw_sources(tmp_path):
    """Its own cache (it embeds texts no other test does); only the contextual splitter, as the plain one is
    what every other sweep runs. Scoring trimmed as in conftest's reference spec."""
    from ragsweep.datasets.demo import load_demo_corpus
    from ragsweep.driver import SweepRequest, run_sweep
    from ragsweep.results.run import load_run
    from ragsweep.retrievers.factory import bm25_retriever

    spec = parse_spec(
        {
            **DEMO,
            "splitters": [{**PLAIN, "context": "title_headings"}],
            "top_k": [3],
            "retrievers": [{"kind": "bm25"}, {"kind": "vector"}],
            "scoring": {"bootstrap_samples": 100, "bertscore": {"baseline_pairs": 50}},
        }
    )
    out = run_sweep(SweepRequest(spec, run_dir=tmp_path / "run", cache_dir=tmp_path / "cache", limit=4, progress=False))
    run = load_run(out)
    recs = run.records
    assert run.status == "complete" and recs["error"].isna().all() and len(recs) == 8
    assert set(recs["config_id"]) == {"sentence256-cheadings-bm25-k3", "sentence256-cheadings-minilm-vector-k3"}
    assert set(recs["splitter"]) == {"sentence256-cheadings"}
    texts = {d.doc_id: d.text for d in load_demo_corpus()}
    # the cached chunks: raw document slices, each with its prefix
    [stored] = [load_chunks(f) for f in (tmp_path / "cache" / "chunks").glob("*.json")]
    assert stored and all(c.text == texts[c.doc_id][c.start : c.end] and c.context for c in stored)
    assert all(
        c.context.startswith("City of Tessaly Personal Data Protection Ordinance > § ")
        for c in stored
        if c.doc_id == "data-protection-ordinance" and c.start > 60
    )
    spans = {c.node_id: (c.doc_id, c.start, c.end) for c in stored}
    bm25 = bm25_retriever(stored, 3)
    questions = dict(zip(run.questions["qid"], run.questions["question"]))
    for row in recs.to_dict("records"):
        sources = list(row["sources"])
        assert len(sources) == 3
        for s in sources:  # offsets into the raw document: those of the chunk the node id names
            assert (s["doc_id"], s["start"], s["end"]) == spans[s["node_id"]]
        assert " > § " not in row["answer"]  # the extractive answer reads the raw chunks, never the prefix
        if row["config_id"].endswith("bm25-k3"):  # BM25 ranked the prefixed texts
            assert [s["node_id"] for s in sources] == [n.node.node_id for n in bm25.retrieve(questions[row["qid"]])]
    # the vectors are those of the prefixed texts (the embedding cache is keyed by text)
    from ragsweep.embeddings.cache import EmbeddingCache, text_key
    from ragsweep.embeddings.factory import model_key

    cache = EmbeddingCache(tmp_path / "cache" / "embeddings.sqlite")
    mkey = model_key(spec.embeddings[0])
    assert len(cache.get_many(mkey, [text_key(c.index_text) for c in stored])) == len(stored)
    assert not cache.get_many(mkey, [text_key(c.text) for c in stored])
    cache.close()
    # plain splitters' configurations keep their hashes next to a contextual one
    plain = {c.config_id: c.config_hash for c in expand(_spec(PLAIN))}
    both = expand(_spec(PLAIN, {**PLAIN, "context": "title_headings"}))
    assert {c.config_id: c.config_hash for c in both if c.splitter.context == "none"} == plain
