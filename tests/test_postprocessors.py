"""Postprocessors (``postprocessors:``): similarity cutoff, long-context reorder, sentence windows and
auto-merging on hand-made nodes, the new splitters' exact offsets, the metrics on merged and short
contexts, the spec checks and grid, and a sweep on the demo dataset."""

from __future__ import annotations

import dataclasses
import math

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from ragsweep.config import parse_spec
from ragsweep.datasets.demo import load_demo_corpus
from ragsweep.datasets.types import Dataset
from ragsweep.errors import RagsweepError
from ragsweep.metrics import all_retrieval_metrics, span_precision_at_k, span_recall_at_k
from ragsweep.pipelines.grid import expand
from ragsweep.postprocessors.auto_merging import merge
from ragsweep.postprocessors.registry import postprocess
from ragsweep.postprocessors.sentence_window import windows
from ragsweep.splitters.build import make_parser, split_corpus
from ragsweep.splitters.hierarchical import TreeNode, build_tree, leaves

DEMO = {"name": "pp", "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}}}


def _spec(bare: bool = False, **kw):
    """A demo spec; ``postprocessors`` get {kind: none} first unless ``bare``."""
    if "postprocessors" in kw and not bare and kw["postprocessors"][0]["kind"] != "none":
        kw["postprocessors"] = [{"kind": "none"}, *kw["postprocessors"]]
    return parse_spec(
        {
            **DEMO,
            "splitters": [{"kind": "sentence", "chunk_size": 256}],
            "retrievers": [{"kind": "bm25"}, {"kind": "vector"}],
            "top_k": [3, 5],
            **kw,
        }
    )


def _config(spec, config_id: str):
    return next(c for c in expand(spec) if c.config_id == config_id)


def _nws(node_id: str, doc_id: str, start: int, end: int, score: float | None, text: str = "x") -> NodeWithScore:
    return NodeWithScore(
        node=TextNode(id_=node_id, text=text, metadata={"doc_id": doc_id}, start_char_idx=start, end_char_idx=end),
        score=score,
    )


# --- similarity cutoff, reorder (hand-made nodes) ------------------------------------------------------------------


def test_absolute_cutoff_compares_the_cosine_of_chroma_scores_and_may_leave_nothing():
    spec = _spec(postprocessors=[{"kind": "similarity_cutoff", "cutoff": 0.5}])
    config = _config(spec, "sentence256-minilm-vector-cut0.5-k3")
    # Chroma's score is exp(cos - 1): cosines 0.9, 0.5, 0.2 and a node without a score
    nodes = [
        _nws(f"n{i}", "d", 0, 1, None if c is None else math.exp(c - 1)) for i, c in enumerate((0.9, 0.5, 0.2, None))
    ]
    shaped, ms = postprocess(config, nodes, None)
    assert [n.node.node_id for n in shaped.ranked] == ["n0", "n1"] and shaped.context == shaped.ranked
    assert shaped.record["n_retrieved"] == 4 and shaped.record["postprocess"]["dropped"] == 2 and ms >= 0
    assert [n.score for n in shaped.ranked] == [nodes[0].score, nodes[1].score]  # the record keeps its scores
    low = [_nws("a", "d", 0, 1, math.exp(0.1 - 1))]
    assert postprocess(config, low, None)[0].ranked == []  # an empty context is a legitimate outcome


def test_relative_cutoff_keeps_a_share_of_the_top_score_on_any_scale():
    spec = _spec(postprocessors=[{"kind": "similarity_cutoff", "cutoff": 0.5, "mode": "relative"}])
    config = _config(spec, "sentence256-bm25-rcut0.5-k5")
    nodes = [_nws(f"n{i}", "d", 0, 1, s) for i, s in enumerate((8.0, 4.0, 3.9, 1.0))]
    shaped, _ = postprocess(config, nodes, None)
    assert [n.node.node_id for n in shaped.ranked] == ["n0", "n1"]
    assert shaped.record["postprocess"]["threshold"] == 4.0
    negative = [_nws("a", "d", 0, 1, -1.0), _nws("b", "d", 0, 1, -2.0)]  # e.g. cross-encoder logits
    kept, _ = postprocess(config, negative, None)
    assert len(kept.ranked) == 2 and kept.record["postprocess"]["skipped"]
    with pytest.raises(RagsweepError, match="relative cutoff"):
        _spec(postprocessors=[{"kind": "similarity_cutoff", "cutoff": 2, "mode": "relative"}])


def test_reorder_changes_only_the_context_order_and_keeps_the_metrics():
    spec = _spec(postprocessors=[{"kind": "long_context_reorder"}])
    config = _config(spec, "sentence256-bm25-reorder-k5")
    nodes = [_nws(f"n{i}", "d", 10 * i, 10 * i + 5, 1.0) for i in range(5)]  # equal scores: rank decides
    shaped, _ = postprocess(config, nodes, None)
    assert shaped.record["context_order"] == [1, 3, 5, 4, 2]  # best first, second best last (odd count)
    assert [n.node.node_id for n in shaped.context] == ["n0", "n2", "n4", "n3", "n1"]
    assert shaped.ranked == nodes
    gold = [("d", 42, 44)]
    ranked = [(n.node.metadata["doc_id"], n.node.start_char_idx, n.node.end_char_idx) for n in shaped.ranked]
    assert all_retrieval_metrics(ranked, gold, 5)["mrr"] == pytest.approx(0.2)


# --- metrics on what the generator sees --------------------------------------------------------------------------


def test_metrics_on_overlapping_merged_and_short_contexts():
    gold = [("d", 100, 200)]
    overlapping = [("d", 50, 150), ("d", 100, 250)]  # a window that overlaps another: counted once
    assert span_precision_at_k(overlapping, gold, 5) == pytest.approx(100 / 200)
    assert span_recall_at_k(overlapping, gold, 5) == pytest.approx(1.0)
    short = all_retrieval_metrics([("d", 0, 10), ("d", 150, 160)], gold, 5)  # 2 sources at k = 5
    assert (
        short["hit"] == 1.0 and short["mrr"] == pytest.approx(0.5) and short["ndcg"] == pytest.approx(1 / math.log2(3))
    )
    empty = all_retrieval_metrics([], gold, 5)
    assert empty["hit"] == 0.0 and empty["span_precision"] == 0.0 and empty["mrr"] == 0.0


# --- sentence windows ----------------------------------------------------------------------------------------------


def test_windows_merge_when_they_share_a_sentence_and_keep_rank_order():
    # sentences 10 and 12 with size 1 share sentence 11; 20 stays apart; 15 (14-16) only touches 9-13
    assert windows([20, 10, 12, 15], 30, 1) == [(19, 21, [0]), (9, 13, [1, 2]), (14, 16, [3])]
    assert windows([20, 10, 12, 14], 30, 1) == [(19, 21, [0]), (9, 15, [1, 2, 3])]
    assert windows([0, 29], 30, 3) == [(0, 3, [0]), (26, 29, [1])]  # clipped at the document's ends
    assert windows([5, 4], 30, 0) == [(5, 5, [0]), (4, 4, [1])]


def _demo_dataset() -> Dataset:
    return Dataset(name="demo", documents=load_demo_corpus(), questions=[])


def test_new_splitters_cut_exact_offsets():
    docs = load_demo_corpus()
    spec = _spec(
        splitters=[
            {"kind": "sentence_window", "window_size": 1},
            {"kind": "hierarchical", "chunk_sizes": [256, 64], "chunk_overlap": 10},
        ]
    )
    for splitter in spec.splitters:
        chunks = split_corpus(docs, make_parser(splitter), splitter.label())
        text = {d.doc_id: d.text for d in docs}
        assert chunks and all(text[c.doc_id][c.start : c.end] == c.text for c in chunks)
        assert len({c.node_id for c in chunks}) == len(chunks)
    for d in docs:
        tree = build_tree(d.text, (256, 64), 10)
        for i, n in enumerate(tree):
            assert 0 <= n.start < n.end <= len(d.text)
            if n.parent is not None:
                p = tree[n.parent]
                assert p.start <= n.start and n.end <= p.end and i in p.children
        assert all(not tree[i].children for i in leaves(tree))


def test_sentence_window_postprocessor_hands_over_exact_merged_windows():
    dataset = _demo_dataset()
    spec = _spec(
        splitters=[{"kind": "sentence_window", "window_size": 1}], postprocessors=[{"kind": "sentence_window"}]
    )
    config = _config(spec, "sentwindow1-bm25-window-k5")
    chunks = split_corpus(dataset.documents, make_parser(config.splitter), config.chunk_key)
    doc = max(dataset.documents, key=lambda d: len(d.text))
    sents = [c for c in chunks if c.doc_id == doc.doc_id]
    assert len(sents) > 8
    picked = [sents[5], sents[6], sents[2], sents[0]]  # 5 and 6 share sentences; 2 and 0 share sentence 1
    nodes = [NodeWithScore(node=c.to_node(), score=float(10 - i)) for i, c in enumerate(picked)]
    shaped, _ = postprocess(config, nodes, dataset)
    got = [(n.node.start_char_idx, n.node.end_char_idx) for n in shaped.ranked]
    assert got == [(sents[4].start, sents[7].end), (sents[0].start, sents[3].end)]
    for n in shaped.ranked:
        assert n.node.text == doc.text[n.node.start_char_idx : n.node.end_char_idx]
    first = shaped.ranked[0]
    assert first.node.node_id == sents[5].node_id and first.score == 10.0
    assert first.node.metadata["ragsweep_source"]["merged_from"] == [sents[5].node_id, sents[6].node_id]
    assert shaped.ranked[1].node.metadata["ragsweep_source"]["merged_from"] == [sents[2].node_id, sents[0].node_id]


# --- auto-merging ---------------------------------------------------------------------------------------------------


def test_merge_replaces_children_above_the_ratio_recursively():
    # root 0 -> parents 1, 2; parent 1 -> leaves 3, 4, 5; parent 2 -> leaves 6, 7
    tree = (
        TreeNode(0, 100, None, (1, 2)),
        TreeNode(0, 60, 0, (3, 4, 5)),
        TreeNode(60, 100, 0, (6, 7)),
        TreeNode(0, 20, 1, ()),
        TreeNode(20, 40, 1, ()),
        TreeNode(40, 60, 1, ()),
        TreeNode(60, 80, 2, ()),
        TreeNode(80, 100, 2, ()),
    )
    # leaves 4 and 3 (2 of 3 > 0.5) merge into 1; leaf 6 alone (1 of 2) does not
    got = merge([(6, [0], 3.0), (4, [1], 2.0), (3, [2], 1.0)], tree, 0.5)
    assert got == [(6, [0], 3.0), (1, [1, 2], 1.5)]
    # both parents complete -> both merge, then the root (2 of 2)
    assert merge([(3, [0], 1.0), (4, [1], 1.0), (6, [2], 1.0), (7, [3], 1.0)], tree, 0.5) == [(0, [0, 1, 2, 3], 1.0)]
    assert merge([(3, [0], 1.0), (4, [1], 1.0)], tree, 0.7) == [(3, [0], 1.0), (4, [1], 1.0)]


def test_auto_merging_postprocessor_hands_over_the_parents_exact_range():
    dataset = _demo_dataset()
    spec = _spec(
        splitters=[{"kind": "hierarchical", "chunk_sizes": [256, 64], "chunk_overlap": 10}],
        postprocessors=[{"kind": "auto_merging"}],
    )
    config = _config(spec, "hier256_64-bm25-merge-k5")
    chunks = split_corpus(dataset.documents, make_parser(config.splitter), config.chunk_key)
    doc = max(dataset.documents, key=lambda d: len(d.text))
    tree = build_tree(doc.text, (256, 64), 10)
    leaf_at = leaves(tree)
    parent = next(p for p in range(len(tree)) if len(tree[p].children) >= 3)
    kids = [
        c
        for c in chunks
        if c.doc_id == doc.doc_id and leaf_at[int(c.node_id.rsplit(":", 1)[1])] in tree[parent].children
    ]
    other = next(c for c in chunks if c.doc_id != doc.doc_id)
    picked = [other] + kids  # all of the parent's children, after an unrelated leaf
    nodes = [NodeWithScore(node=c.to_node(), score=float(len(picked) - i)) for i, c in enumerate(picked)]
    shaped, _ = postprocess(config, nodes, dataset)
    assert len(shaped.ranked) == 2 and shaped.ranked[0].node.node_id == other.node_id
    merged = shaped.ranked[1].node
    assert (merged.start_char_idx, merged.end_char_idx) == (tree[parent].start, tree[parent].end)
    assert merged.text == doc.text[merged.start_char_idx : merged.end_char_idx]
    assert merged.metadata["ragsweep_source"]["merged_from"] == [c.node_id for c in kids]
    assert shaped.ranked[1].score == pytest.approx(sum(n.score for n in nodes[1:]) / len(kids))


# --- spec checks and the grid -------------------------------------------------------------------------------------


def test_spec_checks_name_the_postprocessor():
    with pytest.raises(RagsweepError, match=r"postprocessors\[window\]: applies to no configuration.*sentence_window"):
        _spec(postprocessors=[{"kind": "none"}, {"kind": "sentence_window"}])
    with pytest.raises(RagsweepError, match=r"postprocessors\[reorder\]\.apply_to names 'bm42'"):
        _spec(postprocessors=[{"kind": "none"}, {"kind": "long_context_reorder", "apply_to": ["bm42"]}])
    with pytest.raises(RagsweepError, match=r"postprocessors\[cut0.3\]: applies to no configuration"):
        _spec(
            retrievers=[{"kind": "bm25"}],
            postprocessors=[{"kind": "none"}, {"kind": "similarity_cutoff", "cutoff": 0.3}],
        )
    with pytest.raises(RagsweepError, match=r"no postprocessor applies to it; add \{kind: none\}"):
        _spec(bare=True, postprocessors=[{"kind": "long_context_reorder", "apply_to": ["bm25"]}])
    # the typo, before the missing field it leaves
    with pytest.raises(
        RagsweepError, match=r"postprocessors\[1\]\.cutof: unknown key `cutof`; did you mean `cutoff`\?"
    ):
        _spec(postprocessors=[{"kind": "similarity_cutoff", "cutof": 0.3}])


def test_configurations_without_a_postprocessor_keep_their_ids_and_hashes():
    plain = {c.config_id: c.config_hash for c in expand(_spec())}
    spec = _spec(
        postprocessors=[
            {"kind": "none"},
            {"kind": "similarity_cutoff", "cutoff": 0.5},
            {"kind": "long_context_reorder", "apply_to": ["bm25"]},
        ]
    )
    configs = expand(spec)
    assert {c.config_id: c.config_hash for c in configs if c.postprocessor is None} == plain
    for c in configs:
        if c.postprocessor is None:
            assert "postprocessor" not in c.identity() and c.labels()["postprocessor"] is None
            continue
        base = dataclasses.replace(c, postprocessor=None)
        assert c.identity() == {**base.identity(), "postprocessor": c.postprocessor.identity()}
    post = {c.config_id: c.labels() for c in configs if c.postprocessor is not None}
    assert set(post) == {
        "sentence256-minilm-vector-cut0.5-k3",
        "sentence256-minilm-vector-cut0.5-k5",
        "sentence256-bm25-reorder-k3",
        "sentence256-bm25-reorder-k5",
    }
    assert post["sentence256-minilm-vector-cut0.5-k3"]["retriever"] == "vector+cut0.5"
    assert post["sentence256-bm25-reorder-k5"]["postprocessor"] == "reorder"


# --- a sweep ------------------------------------------------------------------------------------------------------

LIMIT = 6


@pytest.fixture(scope="module")
def pp_run(shared_cache, tmp_path_factory):
    """BM25 only (no new texts to embed, demo questions only: the shared cache serves), both new splitters,
    every postprocessor; the absolute cutoff is extended to BM25 scores with ``apply_to``."""
    from ragsweep.driver import SweepRequest, run_sweep
    from ragsweep.results.run import load_run

    spec = parse_spec(
        {
            **DEMO,
            "splitters": [
                {"kind": "sentence_window", "window_size": 2},
                {"kind": "hierarchical", "chunk_sizes": [512, 128]},
            ],
            "retrievers": [{"kind": "bm25"}],
            "top_k": [4],
            "postprocessors": [
                {"kind": "none"},
                {"kind": "similarity_cutoff", "cutoff": 4.0, "apply_to": ["bm25"]},
                {"kind": "similarity_cutoff", "cutoff": 0.6, "mode": "relative"},
                {"kind": "long_context_reorder"},
                {"kind": "sentence_window"},
                {"kind": "auto_merging"},
            ],
        }
    )
    run_dir = tmp_path_factory.mktemp("pp") / "run"
    out = run_sweep(SweepRequest(spec, run_dir=run_dir, cache_dir=shared_cache, limit=LIMIT, progress=False))
    return load_run(out), {d.doc_id: d.text for d in load_demo_corpus()}


def _merged(source: dict) -> list:
    """A source's ``merged_from`` (a numpy array after parquet), as a list; [] when absent."""
    m = source.get("merged_from")
    return [] if m is None else list(m)


def test_sweep_with_postprocessors(pp_run):
    run, texts = pp_run
    recs = run.records
    assert run.status == "complete" and recs["error"].isna().all()
    ids = set(recs["config_id"])
    expected = {
        f"{s}-bm25{p}-k4" for s in ("sentwindow2", "hier512_128") for p in ("", "-cut4", "-rcut0.6", "-reorder")
    }
    expected |= {"sentwindow2-bm25-window-k4", "hier512_128-bm25-merge-k4"}
    assert ids == expected and len(recs) == len(expected) * LIMIT
    rows = {(r["config_id"], r["qid"]): r for r in recs.to_dict("records")}
    evidence = {
        q["qid"]: [(e["doc_id"], e["start"], e["end"]) for e in q["evidence"]] for q in run.questions.to_dict("records")
    }
    merged_seen = 0
    for (cid, qid), row in rows.items():
        sources = list(row["sources"])
        for s in sources:  # every source's range is exact
            assert 0 <= s["start"] < s["end"] <= len(texts[s["doc_id"]])
        retrieved = [(s["doc_id"], s["start"], s["end"]) for s in sources]
        metrics = all_retrieval_metrics(retrieved, evidence[qid], 4)
        for m, v in metrics.items():  # the metrics are those of the sources the generator read
            assert (math.isnan(v) and math.isnan(row[m])) or v == pytest.approx(row[m]), (cid, qid, m)
        base = rows[(cid.replace(f"-{row['postprocessor']}", ""), qid)] if row["postprocessor"] else None
        if base is None:
            assert len(sources) == 4 and math.isnan(row["postprocess_ms"]) and row["context_order"] is None
            continue
        assert 0 <= row["postprocess_ms"] <= row["retrieval_ms"] and row["n_retrieved"] == 4
        base_ids = [s["node_id"] for s in base["sources"]]
        if row["postprocessor"] == "reorder":
            # LongContextReorder with 4 nodes: the best at the end, the second best first
            assert [s["node_id"] for s in sources] == base_ids and list(row["context_order"]) == [2, 4, 3, 1]
            assert all(row[m] == base[m] or math.isnan(base[m]) for m in ("mrr", "ndcg", "span_recall"))
        elif "cut" in row["postprocessor"]:
            assert [s["node_id"] for s in sources] == base_ids[: len(sources)]  # a cut keeps a prefix
        else:  # window / merge: fewer or larger sources, each standing for the chunks it replaced
            members = [m for s in sources for m in (_merged(s) or [s["node_id"]])]
            assert sorted(members) == sorted(base_ids)
            merged_seen += sum(1 for s in sources if _merged(s))
            if row["postprocessor"] == "window":
                assert all(_merged(s) for s in sources)
                assert row["span_recall"] >= base["span_recall"] - 1e-12
    assert merged_seen > 0
    cuts = recs[recs["postprocessor"].isin(["cut4", "rcut0.6"])]
    assert (cuts["sources"].map(len) < 4).any()  # some cutoff dropped something
    assert "postprocess_ms" in run.summary.columns
