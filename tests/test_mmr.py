"""The MMR postprocessor (``postprocessors/mmr.py``): added as the spec class and its module alone (issue 29)."""

from __future__ import annotations

import math

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from ragsweep.config import parse_spec
from ragsweep.metrics import all_retrieval_metrics
from ragsweep.pipelines.grid import expand
from ragsweep.postprocessors.mmr import cosine, mmr_order, relevances, term_vector
from ragsweep.postprocessors.registry import postprocess

DEMO = {"name": "mmr", "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}}}
LIMIT = 6


def _nws(node_id: str, text: str, score: float | None) -> NodeWithScore:
    return NodeWithScore(
        node=TextNode(id_=node_id, text=text, metadata={"doc_id": "d"}, start_char_idx=0, end_char_idx=len(text)),
        score=score,
    )


def test_relevance_is_the_normalised_score_or_the_rank():
    assert relevances([9.0, 6.0, 3.0]) == [1.0, 0.5, 0.0]
    assert relevances([2.0, None, 1.0]) == [1.0, 1 - 1 / 3, 1 - 2 / 3]
    assert relevances([0.5, 0.5]) == [1.0, 0.5] and relevances([]) == []


def test_cosine_of_term_vectors():
    assert cosine(term_vector("Notice: 60 days"), term_vector("60 DAYS notice")) == pytest.approx(1.0)
    assert cosine(term_vector("leave"), term_vector("deposit")) == 0.0
    assert cosine(term_vector(""), term_vector("a")) == 0.0


def test_a_near_duplicate_moves_below_a_novel_node_and_lambda_one_keeps_the_ranking():
    texts = [
        "notice of sixty days before parental leave",
        "sixty days notice before parental leave starts",
        "the deposit is returned within fourteen days",
    ]
    vectors, rel = [term_vector(t) for t in texts], [1.0, 0.9, 0.6]
    assert mmr_order(rel, vectors, 0.5) == [0, 2, 1]
    assert mmr_order(rel, vectors, 1.0) == [0, 1, 2]
    assert mmr_order([1.0, 1.0], [term_vector("a"), term_vector("b")], 0.5) == [0, 1]  # ties: the better rank


def test_postprocess_reorders_ranking_and_context_alike():
    spec = parse_spec(
        {
            **DEMO,
            "splitters": [{"kind": "sentence", "chunk_size": 256}],
            "retrievers": [{"kind": "bm25"}],
            "top_k": [3],
            "postprocessors": [{"kind": "none"}, {"kind": "mmr", "relevance": 0.5}],
        }
    )
    config = next(c for c in expand(spec) if c.config_id.endswith("-mmr0.5-k3"))
    nodes = [_nws("a", "notice of sixty days", 3.0), _nws("b", "sixty days notice", 2.0), _nws("c", "deposit", 1.0)]
    shaped, ms = postprocess(config, nodes, None)
    assert [n.node.node_id for n in shaped.ranked] == ["a", "c", "b"] == [n.node.node_id for n in shaped.context]
    assert ms >= 0 and shaped.record["n_retrieved"] == 3


def test_spec_rejects_a_relevance_outside_0_1_and_labels_the_default_mmr():
    from ragsweep.config.postprocessors import MMRSpec
    from ragsweep.errors import RagsweepError

    assert MMRSpec(kind="mmr").label() == "mmr" and MMRSpec(kind="mmr", relevance=0.5).label() == "mmr0.5"

    with pytest.raises(RagsweepError, match="relevance"):
        parse_spec(
            {
                **DEMO,
                "splitters": [{"kind": "token", "chunk_size": 200}],
                "retrievers": [{"kind": "bm25"}],
                "postprocessors": [{"kind": "none"}, {"kind": "mmr", "relevance": 1.5}],
            }
        )


def test_sweep_with_mmr(shared_cache, tmp_path):
    """BM25 at top_k 5: each MMR row holds the base row's nodes in another order, scored on that order."""
    from ragsweep.driver import SweepRequest, run_sweep
    from ragsweep.results.run import load_run

    spec = parse_spec(
        {
            **DEMO,
            "splitters": [{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
            "retrievers": [{"kind": "bm25"}],
            "top_k": [5],
            "postprocessors": [{"kind": "none"}, {"kind": "mmr", "relevance": 0.3}, {"kind": "mmr", "relevance": 1.0}],
        }
    )
    run = load_run(
        run_sweep(SweepRequest(spec, run_dir=tmp_path / "run", cache_dir=shared_cache, limit=LIMIT, progress=False))
    )
    recs = run.records
    assert run.status == "complete" and recs["error"].isna().all()
    assert set(recs["config_id"]) == {"sentence256-bm25-k5", "sentence256-bm25-mmr0.3-k5", "sentence256-bm25-mmr1-k5"}
    rows = {(r["config_id"], r["qid"]): r for r in recs.to_dict("records")}
    evidence = {
        q["qid"]: [(e["doc_id"], e["start"], e["end"]) for e in q["evidence"]] for q in run.questions.to_dict("records")
    }
    moved = 0
    for qid in evidence:
        base = [s["node_id"] for s in rows[("sentence256-bm25-k5", qid)]["sources"]]
        assert [s["node_id"] for s in rows[("sentence256-bm25-mmr1-k5", qid)]["sources"]] == base
        row = rows[("sentence256-bm25-mmr0.3-k5", qid)]
        mmr = [s["node_id"] for s in row["sources"]]
        assert sorted(mmr) == sorted(base) and mmr[0] == base[0] and row["n_retrieved"] == 5
        moved += mmr != base
        retrieved = [(s["doc_id"], s["start"], s["end"]) for s in row["sources"]]
        for m, v in all_retrieval_metrics(retrieved, evidence[qid], 5).items():
            assert (math.isnan(v) and math.isnan(row[m])) or v == pytest.approx(row[m]), (qid, m)
    assert moved  # on these questions MMR does reorder some rankings
