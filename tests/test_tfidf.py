"""The TF-IDF retriever (``retrievers.tfidf``): a part built in memory, added as a kind with its module, its spec
class and its place in ``RetrieverSpec`` alone (issue 43's proof of one registration). Its ranking, a sweep of it
beside BM25, and the same answer again through ``ask``'s pipeline (the Ray executor's: test_ray.py)."""

from __future__ import annotations

from conftest import BASE_LIMIT, SENTENCE256, describe
from llama_index.core.schema import QueryBundle, TextNode

from ragsweep.retrievers.tfidf import TfidfRetriever

TEXTS = [
    "The tenant pays the rent monthly.",
    "The notice period is three months for the landlord.",
    "Either party may terminate with a notice period of one month.",
    "Deposits are returned within thirty days.",
]


def _nodes() -> list[TextNode]:
    return [TextNode(id_=f"n{i}", text=t) for i, t in enumerate(TEXTS)]


def test_tfidf_ranks_by_cosine_and_leaves_out_what_shares_no_term():
    retriever = TfidfRetriever(_nodes(), similarity_top_k=3)
    got = retriever.retrieve(QueryBundle("How long is the notice period?"))
    assert [n.node.node_id for n in got][:2] in (["n1", "n2"], ["n2", "n1"])  # both hold "notice period"
    assert all(n.score > 0 for n in got) and "n3" not in {n.node.node_id for n in got}
    assert [n.score for n in got] == sorted((n.score for n in got), reverse=True)
    assert retriever.retrieve(QueryBundle("zebra")) == []  # no shared term: nothing, not chunks in index order
    again = TfidfRetriever(_nodes(), similarity_top_k=3).retrieve(QueryBundle("How long is the notice period?"))
    assert [(n.node.node_id, n.score) for n in again] == [(n.node.node_id, n.score) for n in got]


def test_a_tfidf_sweep_answers_like_any_kind_and_ask_gives_its_record(make_spec, run_cli, read_run, shared_cache):
    """TF-IDF beside BM25: one configuration per splitter (no embedding multiplies it), its part built once, its
    records measured; the configuration opened again (``ask``'s pipeline) gives a question the sources it had."""
    from ragsweep.results.configuration import open_pipeline

    spec = make_spec("tfidf", splitters=[SENTENCE256], retrievers=[{"kind": "tfidf"}, {"kind": "bm25"}], top_k=[3])
    out = run_cli("run", spec.path, "--cache", shared_cache, "--limit", BASE_LIMIT)
    assert out.returncode == 0, describe(out)
    run = read_run(spec.run_dir, out)
    rec = run.records
    assert sorted(rec["config_id"].unique()) == ["sentence256-bm25-k3", "sentence256-tfidf-k3"]
    tfidf = rec[rec["config_id"] == "sentence256-tfidf-k3"]
    assert len(tfidf) == BASE_LIMIT and tfidf["error"].isna().all()
    assert tfidf["hit"].notna().any() and tfidf["hit"].mean() > 0  # it finds gold evidence
    assert "indexing_tfidf" in run.invocation["timings_s"] and "indexing_bm25" in run.invocation["timings_s"]
    row = tfidf.dropna(subset=["hit"]).iloc[0]
    with open_pipeline(spec.run_dir, "sentence256-tfidf-k3", shared_cache) as pipeline:
        asked = pipeline.ask(row["question"])
    assert [(s["doc_id"], s["start"], s["end"]) for s in asked["sources"]] == [
        (s["doc_id"], s["start"], s["end"]) for s in row["sources"]
    ]


def test_the_kind_is_named_by_its_module_and_its_spec_class_alone():
    """No plan, executor, stage or factory names it: they read the kind's declaration (``searches``,
    ``part_builder``) and ``config.retrievers.MEMORY_PARTS``, which derives from ``RetrieverSpec``."""
    import re
    from pathlib import Path

    import ragsweep
    from ragsweep.config.retrievers import MEMORY_PARTS

    src = Path(ragsweep.__file__).parent
    named = re.compile(r'"tfidf"|Tfidf(Spec|Retriever)|retrievers\.tfidf')
    where = {p.relative_to(src).as_posix() for p in src.rglob("*.py") if named.search(p.read_text(encoding="utf-8"))}
    assert where == {"config/retrievers.py", "retrievers/tfidf.py"}
    assert MEMORY_PARTS == {
        "bm25": "ragsweep.retrievers.factory:bm25_retriever",
        "tfidf": "ragsweep.retrievers.tfidf:build_part",
    }


BUILT: list[int] = []


def counting_part(chunks, k_max: int):
    """``retrievers.tfidf.build_part``, counted (the work-counting test below points ``MEMORY_PARTS`` here)."""
    from ragsweep.retrievers.tfidf import build_part

    BUILT.append(len(chunks))
    return build_part(chunks, k_max)


def test_a_part_built_in_memory_is_built_once_per_splitter(monkeypatch, make_spec, run_cli, read_run, shared_cache):
    """Three TF-IDF configurations (top_k 3, 5 and a reranker's candidates) of one splitter search one part: it is
    built once, at the largest depth, not once per configuration."""
    from ragsweep.config import retrievers

    monkeypatch.setitem(retrievers.MEMORY_PARTS, "tfidf", "test_tfidf:counting_part")
    BUILT.clear()
    spec = make_spec(
        "tfidf-once",
        splitters=[SENTENCE256],
        retrievers=[{"kind": "tfidf"}],
        top_k=[3, 5],
        rerankers=[{"kind": "none"}, {"kind": "late_interaction", "candidates": 8}],
    )
    out = run_cli("run", spec.path, "--cache", shared_cache, "--limit", 4)
    assert out.returncode == 0, describe(out)
    assert len(read_run(spec.run_dir, out).records["config_id"].unique()) == 4
    assert len(BUILT) == 1 and BUILT[0] > 0
