"""Nothing computed twice while answering: the per-answer work is counted, not timed.

QuIP's n-gram sets are built once per distinct chunk text (shared by every configuration and top_k that retrieved
it), the flags once per distinct (answer, context), and an extractive answer (a quote by construction) is not
scored at all. Before this was guarded, QuIP was half of the answering stage (BENCHMARKS "Stage 1 at the floor").
"""

from __future__ import annotations

import copy
import random

from conftest import BASE_SPEC, SENTENCE256
from fake_openai import FakeOpenAI

from ragsweep.config import parse_spec
from ragsweep.groundedness.detectors import quip
from ragsweep.groundedness.text_norm import NORMALISED
from ragsweep.pipelines import degenerate

KEY = "sk-answer-work-5c2d"
LIMIT = 6


def _sweep(tmp_path, shared_cache, **overrides):
    from ragsweep.driver import SweepRequest, run_sweep
    from ragsweep.results.run import load_run

    data = copy.deepcopy(BASE_SPEC)
    data.update(
        {"splitters": [SENTENCE256], "retrievers": [{"kind": "bm25"}], "top_k": [2, 3, 5], "output_dir": str(tmp_path)}
    )
    data.update(overrides)
    spec = parse_spec(data)
    req = SweepRequest(spec, run_dir=tmp_path / "run", cache_dir=shared_cache, limit=LIMIT, progress=False)
    return load_run(run_sweep(req))


def test_quip_of_chunks_equals_quip_of_the_joined_context():
    """The union of per-chunk n-gram sets (and the grams beside each break) is QuIP over the joined contexts."""
    rng = random.Random(3)
    words = "the controller shall notify data officer within hours of breach, a; b. c x ab".split()

    def text(k: int) -> str:
        return " ".join(rng.choice(words) for _ in range(k))

    for _ in range(2000):
        ctxs = [text(rng.randint(0, 25)) for _ in range(rng.randint(0, 4))]
        joined = " ".join(ctxs)
        start = rng.randint(0, len(joined))
        answer = joined[start : start + rng.randint(0, 90)] + " " + text(rng.randint(0, 3))
        for n in (21, 5):
            a = quip.normalised(answer)
            ctx = " \n ".join(quip.normalised(c) for c in ctxs)
            grams = {a[i : i + n] for i in range(len(a) - n + 1)}
            have = {ctx[i : i + n] for i in range(len(ctx) - n + 1)}
            want = None if not a else float(a in ctx) if len(a) < n else len(grams & have) / len(grams)
            assert quip.quip_score(answer, ctxs, n) == want


def test_an_extractive_sweep_builds_no_ngram_set(tmp_path, shared_cache):
    """Extractive answers quote their context by construction: QuIP is not applicable (n/a), nothing is built."""
    built, flagged = quip.GRAMS_BUILT[quip.N], degenerate.FLAGS_COMPUTED["answers"]
    run = _sweep(tmp_path, shared_cache)
    recs = run.records
    assert run.status == "complete" and len(recs) == 3 * LIMIT and recs["error"].isna().all()
    assert recs["quip"].isna().all()
    assert quip.GRAMS_BUILT[quip.N] == built and degenerate.FLAGS_COMPUTED["answers"] == flagged


def test_an_llm_sweep_builds_each_chunks_ngrams_once(tmp_path, shared_cache, monkeypatch):
    """k = 2, 3, 5 over one BM25 index: 18 answers read 60 chunk slots, but each distinct chunk text's n-gram set
    is built at most once, each text normalised once, and each distinct (answer, context) flagged once."""
    from ragsweep.datasets.load import load_dataset

    monkeypatch.setenv("AW_FAKE_KEY", KEY)
    with FakeOpenAI(api_key=KEY) as fake:
        llm = {"model": "aw-model", "base_url": fake.base_url, "api_key_env": "AW_FAKE_KEY", "concurrency": 2}
        before = (quip.GRAMS_BUILT[quip.N], degenerate.FLAGS_COMPUTED["answers"], NORMALISED["texts"])
        run = _sweep(tmp_path, shared_cache, generator={"kind": "llm"}, llm=llm)
    built = quip.GRAMS_BUILT[quip.N] - before[0]
    flagged = degenerate.FLAGS_COMPUTED["answers"] - before[1]
    normalised = NORMALISED["texts"] - before[2]
    recs = run.records
    assert run.status == "complete" and len(recs) == 3 * LIMIT and recs["error"].isna().all()
    docs = {d.doc_id: d.text for d in load_dataset(parse_spec(copy.deepcopy(BASE_SPEC)).dataset).documents}
    contexts = [tuple(docs[s["doc_id"]][s["start"] : s["end"]] for s in r["sources"]) for r in recs.to_dict("records")]
    slots = sum(len(c) for c in contexts)
    distinct = {t for c in contexts for t in c}
    assert slots == (2 + 3 + 5) * LIMIT and len(distinct) < slots
    assert 0 < built <= len(distinct), (built, len(distinct), slots)
    pairs = {(a, c, q) for a, c, q in zip(recs["answer"], contexts, recs["qid"])}
    assert flagged == len(pairs) and recs["quip"].notna().all()
    assert quip.chunk_grams.cache_info().currsize == 0  # the memos' memory went back once answering was done
    # each chunk text, answer and question normalised once (and the template's lines), not once per check
    lines = sum(len(t.splitlines()) for t in degenerate.default_templates())
    assert normalised <= len(distinct) + len(set(recs["answer"])) + LIMIT + lines, normalised
