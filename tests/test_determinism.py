"""A vector or a BERTScore is a function of its own text (pair) only: not of its batch, the batch size,
what the cache already held, or the order things arrive in. Real models (the bundled MiniLM) on real
kernels, since the point is what the kernels do: bitwise equality, not a tolerance."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np
import pytest

from ragsweep.config import BERTScoreSpec, HFEmbeddingSpec


def _passages() -> list[str]:
    """Demo paragraphs of many lengths (short to beyond 256 tokens), several of equal token count."""
    from ragsweep.datasets.demo import load_demo_corpus

    docs = load_demo_corpus()
    paras = [p.strip() for d in docs for p in d.text.split("\n\n") if len(p.strip()) > 20]
    return paras[:60] + [d.text for d in docs[:4]] + ["NDA", "Rent.", "Rent is due."]


def _cached(spec: HFEmbeddingSpec, root, batch_size: int):
    from ragsweep.embeddings.cache import MemoryEmbeddingCache
    from ragsweep.embeddings.factory import cached_model

    return cached_model(spec.model_copy(update={"batch_size": batch_size}), MemoryEmbeddingCache(), cache_root=root)


# the ONNX backends' batch checks are slow (9 s each); by default torch's runs here and the ONNX thread check below
@pytest.mark.parametrize(
    "backend",
    ["torch", pytest.param("onnx", marks=pytest.mark.slow), pytest.param("onnx-int8", marks=pytest.mark.slow)],
)
def test_a_vector_does_not_depend_on_its_batch(backend, tmp_path_factory):
    """All texts at once (batch 32), the same texts in another order in pieces after a partial cache
    (batch 5), and each text alone: bitwise the same vectors."""
    root = tmp_path_factory.mktemp(f"onnx-{backend}")
    spec = HFEmbeddingSpec(backend=backend)
    texts = _passages()
    whole = np.array(_cached(spec, root, 32).get_text_embedding_batch(texts))

    other = _cached(spec, root, 5)
    shuffled = texts[:]
    random.Random(3).shuffle(shuffled)
    other.get_text_embedding_batch(shuffled[: len(texts) // 3])  # a cache holding a third of them
    pieces = np.array(other.get_text_embedding_batch(texts))
    assert other.computed == len(set(texts))
    assert np.array_equal(whole, pieces)

    alone = _cached(spec, root, 32)
    singles = np.array([alone.get_text_embedding_batch([t])[0] for t in texts[::7]])
    assert np.array_equal(whole[::7], singles)


def test_equal_key_batches_depend_on_keys_only():
    from ragsweep.embeddings.batching import equal_key_batches

    keys = [5, 3, 5, 7, 3, 5]
    assert equal_key_batches(keys, 2) == [[3], [0, 2], [5], [1, 4]]  # longest first, cut at 2
    assert sorted(i for b in equal_key_batches(keys, 1) for i in b) == list(range(6))
    assert all(len({keys[i] for i in b}) == 1 for b in equal_key_batches(keys, 10))
    # a token budget cuts long texts' batches further (one text at least), short ones not
    assert equal_key_batches([300, 300, 300, 4, 4], 64, max_tokens=700) == [[0, 1], [2], [3, 4]]
    assert equal_key_batches([900, 900], 64, max_tokens=700) == [[0], [1]]


@pytest.fixture(scope="module")
def pairs():
    from ragsweep.datasets.demo import load_demo_corpus, load_demo_questions
    from ragsweep.pipelines.extractive import sentences

    docs = load_demo_corpus()
    questions, _ = load_demo_questions(docs)
    sents = [s for d in docs for s in sentences(d.text)]
    refs = [q.reference_answer for q in questions if q.reference_answer]
    rng = random.Random(0)
    return [(" ".join(rng.sample(sents, 2)), rng.choice(refs)) for _ in range(96)]


@pytest.fixture(scope="module")
def whole(pairs, tmp_path_factory) -> list:
    """The BERTScores of all ``pairs`` in batches of 64, computed once for the tests that compare with them."""
    runner = _runner(tmp_path_factory.mktemp("whole") / "a.sqlite", 64)
    try:
        return runner.score(pairs)
    finally:
        runner.close()


def _runner(path, batch_size: int):
    from ragsweep.evaluation.bertscore import BERTScoreRunner

    return BERTScoreRunner(BERTScoreSpec(batch_size=batch_size), path)


def test_a_bertscore_does_not_depend_on_the_pairs_scored_with_it(pairs, whole, tmp_path):
    """All pairs (batch 64) against every 5th pair first, then the rest in reverse order (batch 3)."""
    b = _runner(tmp_path / "b.sqlite", 3)
    some = b.score(pairs[::5])
    rest = b.score(pairs[::-1])[::-1]
    assert b.computed == len(set(pairs))
    assert rest == whole and some == whole[::5]
    b.close()


def test_bertscore_agrees_with_bert_score(pairs, whole):
    """The reference implementation on the same pairs: equal to float32 precision (measured max 2e-7)."""
    from bert_score import BERTScorer

    from ragsweep.evaluation.bertscore import scorer_settings

    ours = np.array(whole)
    s = scorer_settings(BERTScoreSpec())
    p, r, f = BERTScorer(model_type=s.backbone, num_layers=s.num_layers, batch_size=64, device="cpu").score(
        [c for c, _ in pairs], [x for _, x in pairs]
    )
    ref = np.stack([p.numpy(), r.numpy(), f.numpy()], axis=1)
    assert np.abs(ours - ref).max() < 1e-6


THREAD_QUESTIONS = ["Who signs?", "What is due?", "Term?", "NDA", "Which court decides disputes under the agreement?"]


def thread_outputs(exports: Path, scores: Path, pairs) -> dict:
    """What the thread test compares: short questions (few tokens, where CPU kernels switch code paths) and
    passages embedded on torch and on ONNX int8 (as hex of the float32 bytes), and the BERTScores of ``pairs``."""
    out: dict = {}
    for backend in ("torch", "onnx-int8"):
        m = _cached(HFEmbeddingSpec(backend=backend), exports, 8)
        v = np.array(
            [m.get_query_embedding(q) for q in THREAD_QUESTIONS] + m.get_text_embedding_batch(_passages()[:20])
        )
        out[backend] = v.astype(np.float32).tobytes().hex()
    out["bertscore"] = _runner(scores, 16).score([tuple(p) for p in pairs])
    return json.loads(json.dumps(out))


def test_vectors_and_bertscores_do_not_depend_on_threads(pairs, tmp_path, monkeypatch, onnx_exports):
    """A Ray task embeds and scores with one thread (OMP_NUM_THREADS=1), a local run with every core: the same
    vectors on torch and on ONNX int8, and the same BERTScores. One thread in a child process (its own
    start, so its thread pools are made with one thread), two in this one."""
    import subprocess
    import sys
    import textwrap

    import torch

    script = textwrap.dedent(f"""
        import json, sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_determinism import thread_outputs
        print(json.dumps(thread_outputs(Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.stdin.read()))))
    """)
    short = [("Yes.", "No."), ("Rent.", "Rent is due monthly."), ("Term?", "Five years.")]
    data = pairs[:40] + short
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", script, str(onnx_exports), str(tmp_path / "1.sqlite")],
        env=env,
        input=json.dumps(data),
        capture_output=True,
        text=True,
        check=True,
    )
    one = json.loads(proc.stdout)
    before = torch.get_num_threads()
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # the ONNX sessions made here get two threads
    torch.set_num_threads(2)
    try:
        two = thread_outputs(onnx_exports, tmp_path / "2.sqlite", data)
    finally:
        torch.set_num_threads(before)
    for key in ("torch", "onnx-int8", "bertscore"):
        assert one[key] and one[key] == two[key], key


def test_onnx_bertscore_agrees_with_torch_and_never_imports_torch(pairs, whole, tmp_path, onnx_exports):
    """The ONNX Runtime backends score (and embed) in a process that never imports PyTorch (given MiniLM's
    exports: a sweep making them in a child process is test_onnx_embeddings'): fp32 agrees with torch to float32
    precision, int8 within 0.05."""
    import shutil
    import subprocess
    import sys
    import textwrap

    shutil.copytree(onnx_exports / "onnx", tmp_path / "onnx")
    torch_scores = np.array(whole[:60])
    script = textwrap.dedent(f"""
        import json, sys
        from pathlib import Path
        from ragsweep.config import BERTScoreSpec, HFEmbeddingSpec
        from ragsweep.embeddings.factory import load_model
        from ragsweep.evaluation.bertscore import BERTScoreRunner
        pairs = [tuple(p) for p in json.loads(sys.stdin.read())]
        root = Path({str(tmp_path)!r})
        out = {{b: BERTScoreRunner(BERTScoreSpec(backend=b), root / f"{{b}}.sqlite").score(pairs)
               for b in ("onnx", "onnx-int8")}}
        load_model(HFEmbeddingSpec(backend="onnx-int8"), root).get_text_embedding_batch(["a clause", "rent"])
        out["torch_imported"] = "torch" in sys.modules
        print(json.dumps(out))
    """)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", script], input=json.dumps(pairs[:60]), env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["torch_imported"] is False
    assert np.abs(np.array(out["onnx"]) - torch_scores).max() < 1e-6
    assert 0 < np.abs(np.array(out["onnx-int8"]) - torch_scores).max() < 0.05
    assert len(list((tmp_path / "onnx").iterdir())) == 1  # one export: BERTScore at layer 6 is the embedding model


_MKL_PROBE = """
import sys, warnings
order = sys.argv[1]
if order == "torch-first":
    import torch
    torch.randn(64, 64) @ torch.randn(64, 64)  # MKL has run before ragsweep is imported
import ragsweep
from ragsweep import mkl_mode
import torch
torch.randn(64, 64) @ torch.randn(64, 64)  # MKL starts here at the latest, in the mode the environment asks
if mkl_mode._torch_mkl() is None:
    print("NO-MKL"); sys.exit()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    strict = mkl_mode.ensure_strict()
g = torch.Generator().manual_seed(0)
x, w = torch.randn(768, 1536, generator=g), torch.randn(384, 1536, generator=g)
whole = torch.nn.functional.linear(x, w)
from ragsweep.embeddings.batching import MIN_TOKENS  # batches never have fewer rows: below, kernels differ by CPU
same = all(torch.equal(torch.nn.functional.linear(x[:m], w), whole[:m]) for m in (MIN_TOKENS, 64, 128, 256))
print(strict, same, [str(c.message) for c in caught])
"""


@pytest.mark.parametrize("order", ["ragsweep-first", "torch-first", "user-mode"])
def test_pytorch_mkl_runs_in_strict_reproducible_mode_or_says_it_does_not(order):
    """ragsweep imported first: MKL starts in strict CNR mode (from the environment ragsweep sets), a row's
    product independent of its batch's rows (from MIN_TOKENS rows up, the fewest a batch has: on AMD EPYC one or
    two rows take another kernel even in strict mode).
    MKL already used before ragsweep, or another mode in MKL_CBWR (kept: the user chose it): one warning
    naming the fix (MKL cannot switch once it ran)."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "MKL_CBWR"}
    if order == "user-mode":
        env["MKL_CBWR"] = "COMPATIBLE"
    out = subprocess.run(
        [sys.executable, "-c", _MKL_PROBE, order], capture_output=True, text=True, env=env, check=True
    ).stdout.strip()
    if out == "NO-MKL":
        pytest.skip("this PyTorch build has no MKL")
    strict, same, caught = out.split(" ", 2)
    if order == "ragsweep-first":
        assert (strict, same, caught) == ("True", "True", "[]")
    else:
        assert strict == "False" and "set MKL_CBWR=AUTO,STRICT before starting Python" in caught
        assert order != "user-mode" or "MKL_CBWR='COMPATIBLE' asks for another mode" in caught
