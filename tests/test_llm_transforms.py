"""LLM query transforms (``query_transforms:`` hyde, multi_query, decompose): the strict reply parsers, the
spec's checks and grid, reciprocal rank fusion of per-query results on a real bm25s index, HyDE on a real
MiniLM vector index, and a sweep against ``tests/fake_openai.py`` over HTTP (the real ``openai`` client)
that counts each request the server billed. Sweeps use their own cache: they embed rewrites and passages.
"""

from __future__ import annotations

import copy
import math

import pytest
from conftest import BASE_SPEC, MINILM, SENTENCE256, describe, load_run
from fake_openai import FakeOpenAI, classify, default_reply
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from ragsweep.config import DecomposeSpec, HyDESpec, MultiQuerySpec, parse_spec
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.grid import expand
from ragsweep.retrievers.factory import IndexRetrievers, bm25_retriever
from ragsweep.retrievers.memo import SharedResults
from ragsweep.retrievers.transforms.decompose import parse_subquestions
from ragsweep.retrievers.transforms.fanout import reciprocal_rank_fusion
from ragsweep.retrievers.transforms.multi_query import parse_queries
from ragsweep.retrievers.transforms.registry import prompt
from ragsweep.splitters.build import Chunk

KEY = "sk-transform-test-9e1b"
DOCS = [
    "The tenant pays a security deposit before moving in.",
    "A security deposit is held in an escrow account and refunded with interest.",
    "Escrow account interest accrues monthly and is paid annually.",
    "Parking permits are issued by the city clerk.",
    "The landlord repairs the heating within seven days of notice.",
]


# --------------------------------------------------------------------------- strict parsers
def test_multi_query_parser_keeps_lines_and_drops_numbering_preambles_repeats_and_the_question():
    reply = (
        'Here are 3 queries:\n\n1. escrow interest rules\n2) "deposit refund"\n- escrow interest rules\n'
        "* Who pays the deposit?\n```\nlast one"
    )
    assert parse_queries(reply, "who pays the deposit?", 3) == ["escrow interest rules", "deposit refund", "last one"]
    assert parse_queries(reply, "q", 1) == ["escrow interest rules"]
    assert parse_queries("\n  \n", "q", 2) == []


def test_decompose_parser_is_strict():
    assert parse_subquestions("1. What is a deposit?\n\n2) Who holds it?\n", 3) == (
        ["What is a deposit?", "Who holds it?"],
        None,
    )
    assert parse_subquestions("1. a?\n2. b?\n3. c?\n4. d?", 2) == (["a?", "b?"], None)  # at most the limit
    assert parse_subquestions("1. a?\n2. a?", 3) == (["a?"], None)
    for bad, why in (
        ("Sure! 1. a?", "not a numbered"),
        ("1. a?\nand then b", "not a numbered"),
        ("1. a?\n3. b?", "numbered 3 where 2"),
        ("", "no sub-question"),
        ("2. a?", "numbered 2"),
    ):
        subs, reason = parse_subquestions(bad, 3)
        assert subs is None and why in reason, (bad, reason)


def test_fake_server_kinds_for_the_transform_prompts():
    q = "How much notice must a tenant give?"
    hyde = prompt(HyDESpec(kind="hyde"), q)
    dec = prompt(DecomposeSpec(kind="decompose"), q)
    mq = prompt(MultiQuerySpec(kind="multi_query", num_queries=4), q)
    assert (classify(hyde), classify(dec), classify(mq)) == ("hyde", "decompose", "query_gen")
    assert "tenant" in default_reply("hyde", hyde) and default_reply("hyde", hyde) != q
    subs, why = parse_subquestions(default_reply("decompose", dec), 3)
    assert why is None and len(subs) == 2
    assert len(parse_queries(default_reply("query_gen", mq), q, 3)) == 3


# --------------------------------------------------------------------------- spec and grid
def _spec(**over):
    base = {
        "splitters": [{"kind": "sentence"}],
        "retrievers": [{"kind": "bm25"}, {"kind": "vector"}, {"kind": "fusion"}],
        "top_k": [3, 5],
        "llm": {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None},
    }
    base.update(over)
    return parse_spec(base, "spec.yaml")


def test_grid_hyde_meets_vector_parts_and_plain_hashes_stay():
    plain = {c.config_id: c.config_hash for c in expand(_spec())}
    spec = _spec(
        query_transforms=[
            {"kind": "none"},
            {"kind": "hyde"},
            {"kind": "multi_query", "num_queries": 4},
            {"kind": "decompose"},
        ]
    )
    configs = {c.config_id: c for c in expand(spec)}
    assert {i: configs[i].config_hash for i in plain} == plain
    ids = set(configs)
    assert "sentence512-bm25-hyde-k3" not in ids  # BM25 keeps the question: hyde does not apply
    assert {
        "sentence512-minilm-vector-hyde-k3",
        "sentence512-minilm-fusion-hyde-k5",
        "sentence512-bm25-multiquery-n4-k3",
        "sentence512-bm25-decompose-k5",
    } <= ids
    assert len(configs) == len(plain) * 4 - 2  # hyde: not on bm25 at either top_k
    c = configs["sentence512-minilm-vector-hyde-k3"]
    assert c.identity()["query_transform"] == {"kind": "hyde", "include_original": True}
    assert c.rewrite_llm is not None and c.labels()["retriever"] == "vector+hyde"
    assert c.identity()["rewrite_llm"]["model"] == "m"


def test_spec_errors_are_one_line_naming_the_field():
    def error(**over) -> str:
        with pytest.raises(RagsweepError) as info:
            _spec(**over)
        msg = str(info.value)
        assert "\n" not in msg and msg.startswith("spec.yaml: "), msg
        return msg

    assert "query_transforms[hyde]: kind hyde asks an LLM; add an 'llm' section" in error(
        llm=None, query_transforms=[{"kind": "none"}, {"kind": "hyde"}]
    )
    assert "query_transforms[hyde]: no retriever it can expand (hyde searches the vector part" in error(
        retrievers=[{"kind": "bm25"}], query_transforms=[{"kind": "none"}, {"kind": "hyde"}]
    )
    assert "query_transforms[1].num_queries" in error(
        query_transforms=[{"kind": "none"}, {"kind": "multi_query", "num_queries": 1}]
    )
    assert "query_transforms[1].max_subquestion" in error(
        query_transforms=[{"kind": "none"}, {"kind": "decompose", "max_subquestion": 2}]
    )


def test_llms_in_use_counts_a_transforms_llm():
    from ragsweep.llm.clients import llms_in_use

    assert llms_in_use(_spec()) == []
    assert [r for r, _ in llms_in_use(_spec(query_transforms=[{"kind": "none"}, {"kind": "decompose"}]))] == ["llm"]


# --------------------------------------------------------------------------- fusion on real indexes
def _chunks():
    return [Chunk(node_id=f"c{i}", doc_id=f"d{i}", start=0, end=len(t), text=t) for i, t in enumerate(DOCS)]


def _node(i: str, score: float = 1.0) -> NodeWithScore:
    return NodeWithScore(node=TextNode(text=i, id_=i), score=score)


def test_reciprocal_rank_fusion_by_node_id_with_first_seen_ties():
    fused = reciprocal_rank_fusion([[_node("a"), _node("b")], [_node("b"), _node("c")], [_node("c"), _node("a")]], 3)
    # a: 1/60 + 1/61, b: 1/61 + 1/60, c: 1/61 + 1/60 -> a tie broken by first sight
    assert [n.node.node_id for n in fused] == ["a", "b", "c"]
    assert fused[0].score == pytest.approx(1 / 60 + 1 / 61)
    assert [n.node.node_id for n in reciprocal_rank_fusion([[_node("x")], [_node("y"), _node("x")]], 1)] == ["x"]


class _ScriptedLLM:
    """What a fan-out transform calls: ``complete(prompt).text`` (multi-query) or ``chat(messages)`` (a reply
    asked in a form, read as text: an LLM of no endpoint of ragsweep's), counted."""

    def __init__(self, reply: str) -> None:
        self.reply, self.calls = reply, 0

    def complete(self, text: str):
        self.calls += 1
        return type("Reply", (), {"text": self.reply})()

    def chat(self, messages):
        from llama_index.core.base.llms.types import ChatMessage, ChatResponse

        self.calls += 1
        return ChatResponse(message=ChatMessage(role="assistant", content=self.reply))


def test_multi_query_fuses_each_querys_bm25_results_and_writes_once():
    from ragsweep.retrievers.transforms.base import TransformMemo

    spec = _spec(retrievers=[{"kind": "bm25"}], query_transforms=[{"kind": "multi_query"}])
    transform, bm25_spec = spec.query_transforms[0], spec.retrievers[0]
    llm, memo = _ScriptedLLM("1. escrow account interest\n2. heating repairs"), TransformMemo()
    shared = SharedResults(bm25_retriever(_chunks(), 5), 5)
    index = IndexRetrievers({"bm25": shared}, None, llm=llm, transform_memo=memo)
    question = "security deposit"
    top3 = index.make(bm25_spec, 3, transform=transform).retrieve(QueryBundle(question))
    lists = [
        [n for n in shared.get(QueryBundle(q))[:3]] for q in (question, "escrow account interest", "heating repairs")
    ]
    expected = reciprocal_rank_fusion(lists, 3)
    assert [(n.node.node_id, n.score) for n in top3] == [(n.node.node_id, n.score) for n in expected]
    assert "c4" in {n.node.node_id for n in top3}  # only the rewrite "heating repairs" finds the heating clause
    # another top_k and another index with the same memo: the LLM wrote once
    index.make(bm25_spec, 5, transform=transform).retrieve(QueryBundle(question))
    other = IndexRetrievers(
        {"bm25": SharedResults(bm25_retriever(_chunks(), 5), 5)}, None, llm=llm, transform_memo=memo
    )
    other.make(bm25_spec, 2, transform=transform).retrieve(QueryBundle(question))
    assert llm.calls == 1
    record = index.transform_record(transform, question)
    assert record["transformed_queries"] == [question, "escrow account interest", "heating repairs"]
    assert "transform_note" not in record and "transform_llm" not in record  # no traced call: not the engine


def test_unusable_decomposition_falls_back_to_the_question():
    spec = _spec(retrievers=[{"kind": "bm25"}], query_transforms=[{"kind": "decompose"}])
    shared = SharedResults(bm25_retriever(_chunks(), 5), 5)
    index = IndexRetrievers({"bm25": shared}, None, llm=_ScriptedLLM("I cannot split this question."))
    nodes = index.make(spec.retrievers[0], 3, transform=spec.query_transforms[0]).retrieve(QueryBundle("escrow"))
    assert [n.node.node_id for n in nodes] == [n.node.node_id for n in shared.get(QueryBundle("escrow"))[:3]]
    record = index.transform_record(spec.query_transforms[0], "escrow")
    assert record["transformed_queries"] == ["escrow"] and "decomposition unusable" in record["transform_note"]


@pytest.fixture(scope="module")
def minilm_vector():
    """A real vector index (LlamaIndex's in-memory store) over DOCS with the bundled MiniLM, cache-first."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.retrievers import VectorIndexRetriever

    from ragsweep.config import HFEmbeddingSpec
    from ragsweep.embeddings.cache import MemoryEmbeddingCache
    from ragsweep.embeddings.factory import cached_model

    model = cached_model(HFEmbeddingSpec(), MemoryEmbeddingCache())
    index = VectorStoreIndex([c.to_node() for c in _chunks()], embed_model=model)
    return VectorIndexRetriever(index, similarity_top_k=5, embed_model=model), model


def test_hyde_searches_the_mean_of_passage_and_question_embeddings(minilm_vector):
    import numpy as np
    from llama_index.llms.openai_like import OpenAILike

    vector, model = minilm_vector
    spec = _spec(retrievers=[{"kind": "vector"}, {"kind": "fusion"}], query_transforms=[{"kind": "hyde"}])
    hyde = spec.query_transforms[0]
    question = "Who pays for repairs to the heating?"
    with FakeOpenAI() as fake:
        llm = OpenAILike(model="hyde", api_base=fake.base_url, api_key="x", is_chat_model=True, max_retries=0)
        index = IndexRetrievers(
            {"bm25": SharedResults(bm25_retriever(_chunks(), 5), 5)}, SharedResults(vector, 5), llm=llm
        )
        got = index.make(spec.retrievers[0], 3, transform=hyde).retrieve(QueryBundle(question))
        fused = index.make(spec.retrievers[1], 3, transform=hyde).retrieve(QueryBundle(question))
        assert fake.stats()["by_kind"] == {"hyde": 1}  # vector and fusion's vector part share one passage
    texts = index.transform_record(hyde, question)["transformed_queries"]
    assert texts[1] == question and texts[0] == default_reply("hyde", prompt(hyde, question))
    mean = np.mean([model.get_query_embedding(t) for t in texts], axis=0).tolist()
    want = vector.retrieve(QueryBundle(question, embedding=mean))[:3]
    assert [(n.node.node_id, n.score) for n in got] == [(n.node.node_id, n.score) for n in want]
    plain = vector.retrieve(QueryBundle(question))
    assert [n.score for n in got] != [n.score for n in plain[:3]]  # the passage moved the query vector
    ranks = index.source_ranks(spec.retrievers[1], 3, question, transform=hyde)
    assert {n.node.node_id for n in fused} <= set(ranks) and any("bm25" in r for r in ranks.values())


# --------------------------------------------------------------------------- a sweep over HTTP
LIMIT = 6
TRANSFORMS = [{"kind": "none"}, {"kind": "hyde"}, {"kind": "multi_query"}, {"kind": "decompose"}]


def _sweep_data(name: str, fake: FakeOpenAI, out_dir) -> dict:
    data = copy.deepcopy(BASE_SPEC)
    data.update(
        {
            "name": name,
            "splitters": [SENTENCE256],
            "embeddings": [MINILM],
            "retrievers": [{"kind": "bm25"}, {"kind": "vector"}],
            "top_k": [3, 5],
            "query_transforms": TRANSFORMS,
            "rerankers": [{"kind": "none"}, {"kind": "llm", "candidates": 5, "apply_to": ["bm25"]}],
            "llm": {
                "model": f"{name}-model",
                "base_url": fake.base_url,
                "api_key_env": "TQ_FAKE_KEY",
                "concurrency": 4,
            },
            "prices": {f"{name}-model": {"input": 1.0, "output": 2.0}},
            "scoring": {"bootstrap_samples": 200, "bertscore": {"baseline": "none"}},
            "output_dir": str(out_dir),
        }
    )
    return data


def test_sweep_with_llm_transforms_over_http(tmp_path, run_cli, monkeypatch, seeded_cache):
    import yaml

    from ragsweep.datasets.load import load_dataset
    from ragsweep.driver import SweepRequest, run_sweep

    monkeypatch.setenv("TQ_FAKE_KEY", KEY)
    cache = seeded_cache
    first_question = None
    with FakeOpenAI(api_key=KEY) as fake:
        data = _sweep_data("tq", fake, tmp_path / "runs")
        spec = parse_spec(data)
        questions = load_dataset(spec.dataset).questions[:LIMIT]
        first_question = questions[0].question
        # one question's decomposition is not a list: it degrades to the question alone
        fake.set_rules([{"kind": "decompose", "match": f"Question: {first_question}\n", "action": "malformed"}])
        path = tmp_path / "tq.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        dry = run_cli("run", path, "--dry-run", "--cache", cache, "--limit", LIMIT, env={"TQ_FAKE_KEY": KEY})
        assert dry.returncode == 0, describe(dry)
        assert fake.stats()["calls"] == 0 and not fake.calls(include_events=True)
        rows = {}
        for line in dry.stdout.splitlines():
            cells = [c.strip() for c in line.strip().strip("│┃").split("│")]
            if len(cells) == 6:
                rows[cells[0]] = cells

        out = run_sweep(
            SweepRequest(spec, run_dir=tmp_path / "runs" / "tq", cache_dir=cache, limit=LIMIT, progress=False)
        )
        run = load_run(out)
        stats = fake.stats()
        billed = fake.calls()
        # each question's transform once, whatever the retrievers (2), top_k (2) and rerankers; hyde never on bm25;
        # the unusable decomposition asked again once; one probe of how the server takes a schema
        assert {k: v for k, v in stats["by_kind"].items() if k != "rerank"} == {
            "hyde": LIMIT,
            "query_gen": LIMIT,
            "decompose": LIMIT + 1,
            "probe": 1,
        }, stats
        # the dry run predicted the transform calls exactly; rerank calls at most (equal prompts are cached)
        assert int(rows["query_transform"][2]) == 3 * LIMIT, rows
        assert int(rows["rerank"][2]) == 3 * LIMIT >= stats["by_kind"]["rerank"] > 0  # bm25 x 3 transforms

        # a re-run of the same directory makes no call; another directory on the same cache neither
        run_sweep(SweepRequest(spec, run_dir=tmp_path / "runs" / "tq", cache_dir=cache, limit=LIMIT, progress=False))
        again = load_run(
            run_sweep(SweepRequest(spec, run_dir=tmp_path / "again", cache_dir=cache, limit=LIMIT, progress=False))
        )
        assert fake.stats()["calls"] == stats["calls"], "a re-run called the server"

    recs = run.records
    assert recs["error"].isna().all(), recs["error"].dropna().tolist()
    ids = set(recs["config_id"])
    assert not any("bm25-hyde" in i for i in ids) and "sentence256-minilm-vector-hyde-k3" in ids
    assert len(ids) == 2 * (4 + 3 * 2)  # top_k x (vector: 4 transforms; bm25: 3 transforms x 2 rerankers)
    by_kind = {"hyde": [], "multiquery": [], "decompose": []}
    for row in recs.to_dict("records"):
        label = row["query_transform"]
        if label is None:
            assert row["transformed_queries"] is None and (
                row["retrieval_llm_calls"] is None
                or math.isnan(row["retrieval_llm_calls"])
                or "llmrerank" in row["config_id"]
            )
            continue
        queries = list(row["transformed_queries"])
        assert queries, row["config_id"]
        by_kind[label].append((row["qid"], row["question"], queries, row["retrieval_ms"]))
        if label == "hyde":
            assert len(queries) == 2 and queries[1] == row["question"] and queries[0] != row["question"]
        elif label == "multiquery":
            assert queries[0] == row["question"] and len(queries) == 3
        elif row["question"] == first_question:
            assert queries == [row["question"]] and "decomposition unusable" in row["transform_note"]
        else:
            assert len(queries) == 3 and queries[0] == row["question"] and row["transform_note"] is None
        assert row["retrieval_ms"] > 0
    # what the records account is what the server billed: each (transform, question) once, the same in every
    # configuration that used it
    kinds = {"hyde": "hyde", "multiquery": "query_gen", "decompose": "decompose"}
    for label, kind in kinds.items():
        tokens: dict[str, set] = {}
        for row in recs[recs["query_transform"] == label].to_dict("records"):
            reasked = label == "decompose" and row["question"] == first_question  # its repair re-ask
            if "llmrerank" in row["config_id"]:  # its retrieval tokens add the reranking's
                assert row["retrieval_llm_calls"] == 2 + reasked
                continue
            assert row["retrieval_llm_calls"] == 1 + reasked
            tokens.setdefault(row["qid"], set()).add(row["retrieval_tokens"])
        assert all(len(v) == 1 for v in tokens.values()) and len(tokens) == LIMIT, (label, tokens)
        served = sum(c["prompt_tokens"] + c["completion_tokens"] for c in billed if c["kind"] == kind)
        assert sum(next(iter(v)) for v in tokens.values()) == served, label
    # the second directory, from the LLM cache, found the same queries and sources
    key = ["config_id", "qid"]
    a = recs.set_index(key).sort_index()
    b = again.records.set_index(key).sort_index()
    assert [list(x) if x is not None else None for x in a["transformed_queries"]] == [
        list(x) if x is not None else None for x in b["transformed_queries"]
    ]
    assert [[s["node_id"] for s in x] for x in a["sources"]] == [[s["node_id"] for s in x] for x in b["sources"]]
