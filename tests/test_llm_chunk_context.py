"""Contextual chunks an LLM writes (``splitters[].context: llm``, Anthropic's Contextual Retrieval): the
document windows and reply cleaning (pure), the spec (labels, hashes, errors, which LLM), the stage on a real
``SweepLLM`` against ``tests/fake_openai.py`` over HTTP (a BM25 search only the context can answer), and a
demo sweep: one call per distinct prompt, the dry run predicting them, the contexts cached with the chunks,
sources raw, a failed call failing only its splitter and a re-run sending only that call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import describe
from fake_openai import FakeOpenAI, classify, default_reply

from ragsweep.config import LLMChunkContextSpec, parse_spec
from ragsweep.datasets.types import Document
from ragsweep.errors import RagsweepError
from ragsweep.pipelines.grid import expand
from ragsweep.splitters.build import Chunk
from ragsweep.splitters.situate import (
    DEFAULT_PROMPT,
    ELISION,
    TokenMap,
    clean_reply,
    fill,
    prefix,
    render_window,
    window_bounds,
)

DEMO = {"name": "llmctx", "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}}}
PLAIN = {"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}
KEY = "sk-context-test-5d2c"


def document_window(text: str, tokens: TokenMap, start: int, end: int, document_tokens: int, head: int) -> str:
    return render_window(text, window_bounds(tokens, start, end, document_tokens, head))


# --- windows and replies (pure) -----------------------------------------------------------------------------------


def _long_text() -> str:
    return "HEAD OF THE AGREEMENT between Alpha and Beta.\n" + " ".join(f"clause{i} says item{i}." for i in range(600))


def test_a_document_that_fits_is_shown_whole():
    text = "A short lease. The rent is due monthly."
    tokens = TokenMap.of(text)
    assert document_window(text, tokens, 15, 39, 64, 10) == text
    assert [text[tokens.char(i) : tokens.char(i + 1)] for i in range(3)] == ["A", " short", " lease"]
    assert tokens.char(len(tokens)) == len(text) and tokens.token_at(3) == 1


def test_a_long_document_shows_its_head_and_the_fixed_block_holding_the_chunk():
    text = _long_text()
    tokens = TokenMap.of(text)
    n, budget, head = len(tokens), 300, 40
    assert n > 3 * budget

    def window(needle: str) -> str:
        start = text.index(needle)
        return document_window(text, tokens, start, start + len(needle), budget, head)

    first, middle, last = window("clause5 says"), window("clause300 says"), window("clause599 says")
    head_text = text[: tokens.char(head)]
    assert all(w.startswith(head_text) for w in (first, middle, last))
    assert "Alpha and Beta" in middle and "clause300 says item300." in middle and ELISION in middle
    assert middle.endswith(ELISION.rstrip("\n")) and not last.endswith("[...]")  # the last block runs to the end
    assert last.endswith("clause599 says item599.")
    for w in (first, middle, last):  # about the budget: head + one block of budget - head tokens
        assert len(TokenMap.of(w)) <= budget + 8
    # the last block is full although the document ends inside a block
    assert len(TokenMap.of(last)) >= budget - 8
    # chunks whose middles fall in the same block see the same window (a shared prompt prefix)
    assert window("clause301 says") == middle and window("clause5 says") != middle
    # no head: the block alone
    start = text.index("clause300 says")
    bare = document_window(text, tokens, start, start + 10, budget, 0)
    assert bare.startswith("[...]\n") and "Alpha" not in bare and "clause300" in bare


def test_a_document_of_few_characters_but_many_tokens_is_windowed():
    """A CJK character or an emoji is often two or more cl100k tokens: the shortcut past tokenizing counts bytes."""
    from ragsweep.pipelines.stages.chunk_context import keys
    from ragsweep.splitters.situate import may_exceed

    text = "契約の期間は五年とする。" * 40 + "🙂" * 60
    assert len(text) < 600 < len(TokenMap.of(text)) and may_exceed(text, 600) and not may_exceed("a" * 600, 600)
    chunk = Chunk("c:jp:0", "jp", 0, 12, text[:12])
    [(doc_id, bounds, _)], windowed = keys(
        [chunk], [Document(doc_id="jp", text=text)], LLMChunkContextSpec(kind="llm", document_tokens=600)
    )
    assert (
        windowed == 1 and bounds and len(TokenMap.of(document_window(text, TokenMap.of(text), 0, 12, 600, 150))) <= 608
    )


def test_replies_prompts_and_prefixes():
    assert (
        clean_reply("  <think>the chunk is about\nrent</think>\n Rent  terms of the\nlease. ")
        == "Rent terms of the lease."
    )
    assert clean_reply("<think>never closed") == "" and clean_reply("") == ""
    # other braces (legal text, JSON, user templates) are left alone
    assert fill("{document}|{chunk}|{other}", "d {chunk}", "c {x}") == "d {chunk}|c {x}|{other}"
    p = fill(DEFAULT_PROMPT, "The whole lease.", "The rent is due.")
    assert p.startswith("<document>\nThe whole lease.\n</document>") and classify(p) == "situate"
    assert default_reply("situate", p) == (
        "This chunk is from the document that begins: The whole lease.; it covers little."
    )
    assert prefix("Rent terms.", "Lease") == "Lease\nRent terms." and prefix("", None) is None
    assert prefix("", "Lease") == "Lease"


# --- spec ------------------------------------------------------------------------------------------------------


def _spec(*splitters, **over):
    data = {
        **DEMO,
        "splitters": list(splitters),
        "retrievers": [{"kind": "bm25"}],
        "top_k": [3],
        "llm": {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None},
        **over,
    }
    return parse_spec(data, "spec.yaml")


def test_labels_hashes_and_identity():
    plain = {c.config_id: c.config_hash for c in expand(_spec(PLAIN))}
    both = {
        c.config_id: c
        for c in expand(_spec(PLAIN, {**PLAIN, "context": "llm"}, {**PLAIN, "context": {"kind": "llm", "title": True}}))
    }
    assert {i: both[i].config_hash for i in plain} == plain
    llm = both["sentence256-cllm-bm25-k3"]
    assert isinstance(llm.splitter.context, LLMChunkContextSpec) and "sentence256-ctitle-llm-bm25-k3" in both
    ident = llm.chunk_identity()
    assert ident["context_llm"]["llm"]["model"] == "m" and ident["context_llm"]["llm"]["max_tokens"] == 100
    assert "llm" not in ident["splitter"]["context"] and "prompt_file" not in ident["splitter"]["context"]

    def chash(**over) -> str:
        [c] = expand(_spec({**PLAIN, "context": "llm"}, **over))
        return c.config_hash

    base = chash()
    # the endpoint's URL and key variable decide no reply; the model does, and so does a context's own LLM
    assert chash(llm={"model": "m", "base_url": "http://10.0.0.1:8000/v1", "api_key_env": "K"}) == base
    assert chash(llm={"model": "other", "api_key_env": None}) != base
    [own] = expand(_spec({**PLAIN, "context": {"kind": "llm", "llm": {"model": "cheap", "api_key_env": None}}}))
    assert own.chunk_identity()["context_llm"]["llm"]["model"] == "cheap"


def test_prompt_file_is_resolved_hashed_and_checked(tmp_path):
    from ragsweep.config import load_spec

    (tmp_path / "p.txt").write_text("Doc: {document}\nChunk: {chunk}\nSay where it is.", encoding="utf-8")
    (tmp_path / "bad.txt").write_text("Chunk: {chunk}", encoding="utf-8")

    def write(prompt: str) -> Path:
        path = tmp_path / f"spec-{prompt}.yaml"
        path.write_text(
            json.dumps(
                {
                    **DEMO,
                    "splitters": [{**PLAIN, "context": {"kind": "llm", "prompt_file": prompt}}],
                    "retrievers": [{"kind": "bm25"}],
                    "llm": {"model": "m", "api_key_env": None},
                }
            )
        )
        return path

    spec = load_spec(write("p.txt"))
    assert spec.splitters[0].context.prompt_file == tmp_path / "p.txt"
    [with_file] = expand(spec)
    [default] = expand(_spec({**PLAIN, "context": "llm"}, top_k=[5]))
    assert (
        with_file.chunk_identity()["context_llm"]["prompt_sha256"]
        != default.chunk_identity()["context_llm"]["prompt_sha256"]
    )
    with pytest.raises(RagsweepError, match=r"splitters\[0\]\.context\.prompt_file: .*bad.txt needs the placeholders"):
        load_spec(write("bad.txt"))
    with pytest.raises(RagsweepError, match=r"splitters\[0\]\.context\.prompt_file: .*none.txt does not exist"):
        load_spec(write("none.txt"))


def test_spec_errors_name_the_field():
    def error(*splitters, **over) -> str:
        with pytest.raises(RagsweepError) as info:
            _spec(*splitters, **over)
        msg = str(info.value)
        assert "\n" not in msg, msg
        return msg

    assert "splitters[0].context: kind llm asks an LLM for each chunk's context; add an 'llm' section" in error(
        {**PLAIN, "context": "llm"}, llm=None
    )
    assert "splitters[0].context: unknown context 'lmm'; expected none, title, title_headings or llm" in error(
        {**PLAIN, "context": "lmm"}
    )
    assert "splitters[0].context.head_tokens" not in error({**PLAIN, "context": {"kind": "llm", "head_tokens": 9000}})
    assert "splitters[0].context: head_tokens must be smaller" in error(
        {**PLAIN, "context": {"kind": "llm", "head_tokens": 9000}}
    )
    assert "splitters[0].context.documents: unknown key" in error({**PLAIN, "context": {"kind": "llm", "documents": 3}})
    # a context with its own LLM needs no llm section
    own = _spec({**PLAIN, "context": {"kind": "llm", "llm": {"model": "c", "api_key_env": None}}}, llm=None)
    from ragsweep.llm.clients import llms_in_use

    assert [(r, x.model) for r, x in llms_in_use(own)] == [("splitters[0].context.llm", "c")]
    assert [r for r, _ in llms_in_use(_spec({**PLAIN, "context": "llm"}))] == ["llm"]


# --- the stage, over HTTP ----------------------------------------------------------------------------------------


def test_bm25_finds_a_chunk_only_through_its_llm_context(tmp_path):
    """The chunk never names the hangar; the document's first line does, and the context carries it."""
    from ragsweep.cache_dir import CacheDir
    from ragsweep.datasets.types import Dataset
    from ragsweep.llm.clients import LLMClients
    from ragsweep.pipelines.context import StageContext
    from ragsweep.pipelines.stages.chunk_context import llm_contexts
    from ragsweep.retrievers.factory import bm25_retriever

    texts = {
        "lease": "Zeppelin Hangar Lease\n\n"
        + "Filler sentence about nothing much. " * 40
        + "The rent is due monthly in advance.",
        "permit": "Parking Permit Rules\n\nPermits are issued for one calendar year.",
    }
    docs = [Document(doc_id=k, text=v) for k, v in texts.items()]
    start = texts["lease"].index("The rent")
    chunks = [
        Chunk("c:lease:1", "lease", start, len(texts["lease"]), texts["lease"][start:]),
        Chunk("c:permit:0", "permit", 0, len(texts["permit"]), texts["permit"]),
    ]
    with FakeOpenAI() as fake:
        spec = _spec(
            {**PLAIN, "context": {"kind": "llm", "document_tokens": 200, "head_tokens": 20}},
            llm={"model": "m", "base_url": fake.base_url, "api_key_env": None},
        )
        [config] = expand(spec)
        clients = LLMClients(spec, tmp_path / "llm.sqlite", run_id="t")
        try:
            ctx = StageContext(
                spec=spec, dataset=Dataset("d", docs, []), cache=CacheDir(tmp_path), models=None, llm_for=clients.get
            )
            out = llm_contexts(ctx, config, chunks)
        finally:
            clients.close()
        assert fake.stats()["by_kind"] == {"situate": 2}
    from ragsweep.pipelines.stages.chunk_context import keys, prompt_of

    ks, windowed = keys(chunks, docs, config.splitter.context)
    lease_prompt = prompt_of(ks[0], {d.doc_id: d.text for d in docs}, DEFAULT_PROMPT)
    assert windowed == 1 and lease_prompt.endswith(
        DEFAULT_PROMPT[DEFAULT_PROMPT.index("</document>") :].replace("{chunk}", chunks[0].text)
    )
    assert [(c.node_id, c.start, c.end, c.text) for c in out] == [(c.node_id, c.start, c.end, c.text) for c in chunks]
    assert out[0].context.startswith("This chunk is from the document that begins: Zeppelin Hangar Lease")
    assert "Zeppelin Hangar Lease" in lease_prompt and ELISION in lease_prompt  # the head, then the block
    assert ctx.stats.chunk_contexts["sentence256-cllm"]["windowed"] == 1
    hits = bm25_retriever(out, 2).retrieve("zeppelin hangar")
    assert hits[0].node.node_id == "c:lease:1" and hits[0].score > 0
    assert all(n.score <= 0 for n in bm25_retriever(chunks, 2).retrieve("zeppelin hangar"))


def test_demo_sweep_with_llm_contexts(tmp_path, run_cli):
    """The calls, the dry run, the cache, raw sources, a failed call and its retry. Own caches throughout."""
    import yaml

    from ragsweep.driver import SweepRequest, run_sweep
    from ragsweep.results.run import load_run
    from ragsweep.splitters.chunk_store import load_chunks

    cache = tmp_path / "cache"
    with FakeOpenAI(api_key=KEY) as fake:
        data = {
            **DEMO,
            "splitters": [{**PLAIN, "context": {"kind": "llm", "document_tokens": 400}}],
            "retrievers": [{"kind": "bm25"}],
            "top_k": [3],
            "llm": {"model": "ctx-model", "base_url": fake.base_url, "api_key_env": "CTX_KEY"},
            "prices": {"ctx-model": {"input": 1.0, "output": 2.0}},
            "scoring": {"bootstrap_samples": 100, "bertscore": {"baseline_pairs": 50}},
        }
        path = tmp_path / "ctx.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        dry = run_cli("run", path, "--dry-run", "--cache", cache, "--limit", 3, env={"CTX_KEY": KEY})
        assert dry.returncode == 0, describe(dry)
        [row] = [line for line in dry.stdout.splitlines() if "chunk_context" in line]
        predicted = int([c.strip() for c in row.strip().strip("│┃").split("│")][2])
        assert fake.stats()["calls"] == 0

        # one chunk's call is refused: that splitter's configurations fail, the run keeps the other calls
        fake.set_rules([{"kind": "situate", "match": "§ 3", "action": "status", "status": 400, "times": 1}])
        import os

        os.environ["CTX_KEY"] = KEY
        try:
            spec = parse_spec(data)
            first = run_sweep(SweepRequest(spec, run_dir=tmp_path / "run", cache_dir=cache, limit=3, progress=False))
            failed = load_run(first).records
            assert (
                failed["error"]
                .str.match(
                    r"chunking failed: .*1 of \d+ chunk-context calls failed "
                    r".*run again"
                )
                .all()
            ), failed["error"].tolist()
            calls = fake.stats()["by_kind"]["situate"]
            # the re-run sends only what failed, then answers
            out = run_sweep(SweepRequest(spec, run_dir=tmp_path / "run", cache_dir=cache, limit=3, progress=False))
            assert fake.stats()["by_kind"]["situate"] == calls + 1
            # another run directory on the same cache: the contexts come with the cached chunks, no call
            run_sweep(SweepRequest(spec, run_dir=tmp_path / "again", cache_dir=cache, limit=3, progress=False))
            assert fake.stats()["by_kind"]["situate"] == calls + 1
        finally:
            os.environ.pop("CTX_KEY", None)
    [stored] = [load_chunks(f) for f in (cache / "chunks").glob("*.json")]
    assert predicted == len(stored) == calls  # one call per chunk (every demo chunk's prompt differs)
    assert all(c.context.startswith("This chunk is from the document that begins: ") for c in stored)
    run = load_run(out)
    recs = run.records
    assert run.status == "complete" and recs["error"].isna().all() and len(recs) == 3
    spans = {c.node_id: (c.doc_id, c.start, c.end, c.text) for c in stored}
    from ragsweep.datasets.demo import load_demo_corpus

    texts = {d.doc_id: d.text for d in load_demo_corpus()}
    for row in recs.to_dict("records"):
        for s in row["sources"]:
            doc_id, start, end, text = spans[s["node_id"]]
            assert (s["doc_id"], s["start"], s["end"]) == (doc_id, start, end) and texts[doc_id][start:end] == text
        assert "This chunk is from" not in row["answer"]
    manifest = run.meta
    usage = manifest["usage"]["by_stage"]["chunk_context"]
    assert usage["calls"] == len(stored) and usage["cost_usd"] > 0  # what the run directory paid for, both times
    info = manifest["invocations"][-1]["chunk_contexts"]["sentence256-cllm"]
    assert info["chunks"] == len(stored) and info["llm_calls"] == len(stored) and info["llm_cached"] == len(stored) - 1
    assert KEY not in json.dumps(manifest)
    shown = run_cli("show", out)
    assert shown.returncode == 0, describe(shown)
    assert (
        f"chunk contexts sentence256-cllm: {len(stored)} chunks, {len(stored)} prompts" in shown.stdout
        and f"({len(stored) - 1} cached)" in shown.stdout
    ), shown.stdout


def test_duplicated_documents_share_their_prompts():
    from ragsweep.pipelines.stages.chunk_context import keys

    text = "The Supplier shall keep the Confidential Information secret. " * 3
    docs = [Document(doc_id="a.txt", text=text), Document(doc_id="copy/a.txt", text=text)]
    chunks = [Chunk(f"c:{d.doc_id}:0", d.doc_id, 0, 40, text[:40]) for d in docs]
    ks, _ = keys(chunks, docs, LLMChunkContextSpec(kind="llm"))
    assert ks[0] == ks[1] and ks[0][0] == "a.txt"
