"""Query transforms: RM3 pseudo-relevance feedback for BM25 (the pure relevance model, the retriever on
a real bm25s index, the grid) and a sweep that records the expanded query."""

from __future__ import annotations

import math

import pytest
from llama_index.core.schema import QueryBundle

from ragsweep.config import RM3Spec, parse_spec
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.grid import expand
from ragsweep.retrievers.factory import IndexRetrievers, bm25_retriever
from ragsweep.retrievers.memo import MemoRetriever, SharedResults
from ragsweep.retrievers.rm3 import RM3Retriever, relevance_model
from ragsweep.splitters.build import Chunk

# --- the relevance model (pure) ----------------------------------------------------------------------------------


def test_relevance_model_interpolates_query_and_feedback_and_sums_to_one():
    w = relevance_model(
        ["deposit"], [["deposit", "escrow"], ["escrow", "interest"]], [3.0, 1.0], fb_terms=10, original_weight=0.5
    )
    assert math.isclose(sum(w.values()), 1.0)
    # RM1: deposit 0.5*0.75 = .375, escrow 0.5*0.75 + 0.5*0.25 = .5, interest .125 (already sum to 1)
    assert w["escrow"] == pytest.approx(0.5 * 0.5)
    assert w["deposit"] == pytest.approx(0.5 + 0.5 * 0.375)
    assert w["interest"] == pytest.approx(0.5 * 0.125)


def test_relevance_model_keeps_fb_terms_with_ties_broken_by_term():
    w = relevance_model(["q"], [["b", "a", "c"]], [1.0], fb_terms=2, original_weight=0.0)
    assert set(w) == {"a", "b"}  # three equal weights: the first two by term
    assert w["a"] == pytest.approx(0.5)


def test_relevance_model_without_feedback_is_the_query():
    assert relevance_model(["a", "b", "a"], [], [], fb_terms=10, original_weight=0.5) == pytest.approx(
        {"a": 0.5 * 2 / 3, "b": 0.5 / 3}
    )
    assert relevance_model(["a"], [["x"]], [0.0], fb_terms=10, original_weight=0.3) == {"a": pytest.approx(0.3)}


# --- the retriever on a real bm25s index -------------------------------------------------------------------------

DOCS = [
    "The tenant pays a security deposit before moving in.",
    "A security deposit is held in an escrow account and refunded with interest.",
    "Escrow account interest accrues monthly and is paid annually.",
    "Parking permits are issued by the city clerk.",
]


def _chunks():
    return [Chunk(node_id=f"c{i}", doc_id=f"d{i}", start=0, end=len(text), text=text) for i, text in enumerate(DOCS)]


def _rm3(fb_docs=2, fb_terms=10, weight=0.5, max_df=1.0):
    """RM3 over the four-chunk corpus; max_df 1.0 because in four chunks every term is in 25 % of them."""
    bm25 = bm25_retriever(_chunks(), 4)
    shared = SharedResults(bm25, 4)
    params = RM3Spec(kind="rm3", fb_docs=fb_docs, fb_terms=fb_terms, original_weight=weight, max_df=max_df)
    return RM3Retriever(bm25, shared, 4, params), shared


def test_rm3_feedback_terms_follow_anserini_filters():
    rm3, _ = _rm3(max_df=0.3)  # 4 chunks: a term in 2 of them (50 %) is too common to feed back
    assert rm3._feedback_term("escrow") is False  # in chunks 1 and 2
    assert rm3._feedback_term("tenant") is True  # in chunk 0 only
    assert rm3._feedback_term("x") is False  # one character
    assert rm3._feedback_term("unseen") is False  # not an index term
    w = relevance_model(
        ["q"], [["aa", "bb", "bb", "cc"]], [1.0], fb_terms=10, original_weight=0.0, allowed=lambda t: t != "bb"
    )
    assert w == {"aa": 0.5, "cc": 0.5}
    # each feedback document is pruned to its fb_terms most frequent terms before it is normalised
    w = relevance_model([], [["a", "a", "b", "c"]], [1.0], fb_terms=1, original_weight=0.5)
    assert w == {"a": 1.0}


def test_rm3_finds_a_document_without_the_question_words():
    rm3, plain = _rm3()
    q = QueryBundle("security deposit")
    before = [n.node.node_id for n in plain.get(q) if n.score > 0]
    after = [n.node.node_id for n in rm3.retrieve(q) if n.score > 0]
    assert "c2" not in before  # no query term in it
    assert "c2" in after  # "escrow", "interest" came from the feedback
    assert after[:2] == before[:2]  # the original query keeps half the weight
    assert "c3" not in after  # nothing shared with the feedback
    assert len(rm3.retrieve(q)) == 4  # k results, as plain BM25 gives
    terms = rm3.expansions["security deposit"]
    assert math.isclose(sum(terms.values()), 1.0) and "escrow" in terms


def test_rm3_is_deterministic_and_memoised_by_the_factory():
    rm3, _ = _rm3()
    q = QueryBundle("deposit interest")
    first = [(n.node.node_id, n.score) for n in rm3.retrieve(q)]
    assert first == [(n.node.node_id, n.score) for n in rm3.retrieve(q)]
    spec = parse_spec(
        {
            "splitters": [{"kind": "sentence"}],
            "retrievers": [{"kind": "bm25"}],
            "query_transforms": [{"kind": "rm3", "fb_docs": 2}],
        }
    )
    transform = spec.query_transforms[0]
    bm25 = SharedResults(bm25_retriever(_chunks(), 4), 4)
    index = IndexRetrievers({"bm25": bm25}, None)
    a = index.make(spec.retrievers[0], 3, transform=transform)
    b = index.make(spec.retrievers[0], 2, transform=transform)
    assert isinstance(a, MemoRetriever)
    top3 = [n.node.node_id for n in a.retrieve(q)]
    assert [n.node.node_id for n in b.retrieve(q)] == top3[:2]  # one expansion serves every top_k
    assert len(index._expanded) == 1
    assert index.transform_record(transform, "deposit interest")["expanded_query"]


# --- spec and grid ----------------------------------------------------------------------------------------------


def _spec(**over):
    base = {
        "splitters": [{"kind": "sentence"}],
        "retrievers": [{"kind": "bm25"}, {"kind": "vector"}, {"kind": "fusion"}],
        "top_k": [3, 5],
    }
    base.update(over)
    return parse_spec(base)


def test_rm3_expands_only_retrievers_with_bm25_and_keeps_other_hashes():
    plain = {c.config_id: c.config_hash for c in expand(_spec())}
    spec = _spec(query_transforms=[{"kind": "none"}, {"kind": "rm3"}])
    configs = {c.config_id: c for c in expand(spec)}
    assert {i: configs[i].config_hash for i in plain} == plain
    new = sorted(set(configs) - set(plain))
    assert new == [
        "sentence512-bm25-rm3-k3",
        "sentence512-bm25-rm3-k5",
        "sentence512-minilm-fusion-rm3-k3",
        "sentence512-minilm-fusion-rm3-k5",
    ]
    c = configs["sentence512-bm25-rm3-k5"]
    assert c.identity()["query_transform"] == {
        "kind": "rm3",
        "fb_docs": 10,
        "fb_terms": 10,
        "original_weight": 0.5,
        "max_df": 0.1,
    }
    assert c.labels()["retriever"] == "bm25+rm3" and c.labels()["query_transform"] == "rm3"
    assert spec.retrieval_depth == 10  # feedback documents are read from the shared BM25 results


def test_rm3_spec_errors_name_the_field():
    with pytest.raises((RagsweepError, ValueError), match=r"query_transforms\[rm3\].*no retriever"):
        _spec(retrievers=[{"kind": "vector"}], query_transforms=[{"kind": "none"}, {"kind": "rm3"}])
    with pytest.raises((RagsweepError, ValueError), match=r"query_transforms\[rm3\]\.apply_to names 'bm42'"):
        _spec(query_transforms=[{"kind": "rm3", "apply_to": ["bm42"]}])
    labels = {
        c.config_id for c in expand(_spec(query_transforms=[{"kind": "none"}, {"kind": "rm3", "apply_to": ["fusion"]}]))
    }
    assert {i for i in labels if "rm3" in i} == {"sentence512-minilm-fusion-rm3-k3", "sentence512-minilm-fusion-rm3-k5"}
    # without none, bm25 and vector would meet no transform and silently leave the sweep
    with pytest.raises((RagsweepError, ValueError), match=r"retrievers\[bm25\]: no query transform applies"):
        _spec(query_transforms=[{"kind": "rm3", "apply_to": ["fusion"]}])
    with pytest.raises(RagsweepError, match="share the id 'sentence512-bm25-rm3-k3'"):
        expand(
            _spec(
                retrievers=[{"kind": "bm25"}, {"kind": "bm25", "name": "bm25-rm3"}],
                query_transforms=[{"kind": "none"}, {"kind": "rm3"}],
            )
        )
    assert (
        _spec(
            query_transforms=[{"kind": "none"}, {"kind": "rm3", "fb_docs": 5, "fb_terms": 20, "original_weight": 0.7}]
        )
        .query_transforms[1]
        .label()
        == "rm3-d5-t20-w0.7"
    )


# --- a sweep ----------------------------------------------------------------------------------------------------


def test_sweep_records_the_expanded_query(make_spec, shared_cache, run_cli, read_run):
    spec = make_spec(
        "rm3",
        splitters=[{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
        retrievers=[{"kind": "bm25"}],
        top_k=[3],
        query_transforms=[{"kind": "none"}, {"kind": "rm3"}],
    )
    proc = run_cli("run", str(spec.path), "--limit", "6", "--cache", str(shared_cache), "--no-progress")
    run = read_run(spec.run_dir, proc)
    recs = run.records
    assert set(recs["config_id"]) == {"sentence256-bm25-k3", "sentence256-bm25-rm3-k3"}
    assert recs["error"].isna().all()
    rm3 = recs[recs["config_id"] == "sentence256-bm25-rm3-k3"]
    assert set(rm3["retriever"]) == {"bm25+rm3"}
    terms = rm3["expanded_query"].iloc[0].split()
    assert all("^" in t for t in terms) and len(terms) > 2
    assert math.isclose(sum(float(t.split("^")[1]) for t in terms), 1.0, abs_tol=1e-3)
    assert recs[recs["config_id"] == "sentence256-bm25-k3"]["expanded_query"].isna().all()
