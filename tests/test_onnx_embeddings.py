"""The ONNX Runtime backend: vectors against PyTorch's, export once and atomically, keys, errors, a sweep.

Real model throughout (the bundled MiniLM): the point is that the exported graph, the tokenizer
settings and the pooling reproduce sentence-transformers, which only the real model can show.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import procwait
import pytest

from ragsweep.config import BERTScoreSpec, HFEmbeddingSpec, load_spec
from ragsweep.errors import RagsweepError

ROOT = Path(__file__).resolve().parents[1]
PREFIXES = {"query_prefix": "query: ", "text_prefix": "passage: "}


def _texts() -> tuple[list[str], list[str]]:
    """About 50 passages (short, long beyond 256 tokens, odd whitespace, non-ASCII) and 20 questions."""
    from ragsweep.datasets.demo import load_demo_corpus, load_demo_questions

    docs = load_demo_corpus()
    questions, _ = load_demo_questions(docs)
    passages = [d.text for d in docs[:10]]  # whole documents: most are truncated at max_seq_length
    passages += [p.strip() for d in docs[10:] for p in d.text.split("\n\n") if len(p.strip()) > 40][:30]
    passages += [
        "NDA",
        "  leading and trailing whitespace  ",
        "Tabs\tand\nnew lines",
        "§ 4.2 (a)(iii)",
        "Café, naïve façade — «quoted» ‘text’",
        "数据保护条例第五条",
        "emoji 🙂 in a clause",
        "12,345.67 USD on 2024-01-31",
        "THE PARTIES AGREE AS FOLLOWS:",
        "a " * 400,
    ]
    return passages, [q.question for q in questions[:20]]


@pytest.fixture(scope="module")
def onnx_root(onnx_exports) -> Path:
    return onnx_exports


@pytest.fixture(scope="module")
def vectors(onnx_root):
    """Passage and question vectors of every backend, without and with prefixes: {(backend, prefixed): (P, Q)}.

    sentence-transformers prepends a prompt to the text, so PyTorch's prefixed vectors are those of
    the prefixed strings (one PyTorch load instead of two); the ONNX models get the prefixes in their spec.
    """
    from ragsweep.embeddings.factory import load_model

    passages, questions = _texts()
    out = {}
    torch_model = load_model(HFEmbeddingSpec(), onnx_root)
    for prefixed in (False, True):
        p, q = (PREFIXES["text_prefix"], PREFIXES["query_prefix"]) if prefixed else ("", "")
        out["torch", prefixed] = (
            np.array(torch_model.get_text_embedding_batch([p + t for t in passages])),
            np.array([torch_model.get_query_embedding(q + t) for t in questions]),
        )
        for backend in ("onnx", "onnx-int8"):
            model = load_model(HFEmbeddingSpec(backend=backend, **(PREFIXES if prefixed else {})), onnx_root)
            out[backend, prefixed] = (
                np.array(model.get_text_embedding_batch(passages)),
                np.array([model.get_query_embedding(t) for t in questions]),
            )
    return out


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


@pytest.mark.parametrize("prefixed", [False, True])
def test_onnx_fp32_reproduces_the_torch_vectors_and_neighbours(vectors, prefixed):
    (tp, tq), (op, oq) = vectors["torch", prefixed], vectors["onnx", prefixed]
    assert _cosines(tp, op).min() >= 0.9999
    assert _cosines(tq, oq).min() >= 0.9999
    assert np.allclose(np.linalg.norm(op, axis=1), 1.0, atol=1e-5)  # normalised like HuggingFaceEmbedding
    assert ((tq @ tp.T).argmax(axis=1) == (oq @ op.T).argmax(axis=1)).all()
    # the prefixes reach the model: prefixed vectors are not the plain ones
    assert _cosines(vectors["onnx", not prefixed][0], op).min() < 0.999


def test_onnx_int8_stays_close_to_torch(vectors):
    """Measured on these texts with 8-bit weights (AVX-512 VNNI CPU): min cosine 0.985 (0.989 without prefixes),
    mean 0.993, the same top-1 passage for all 20 questions; on an AVX2-only CPU 8-bit weights saturate (0.977),
    7-bit ones (the export's) pass. Per-tensor weight scales instead of per-channel ones (min 0.92 on LegalBench
    snippets) fail these bounds."""
    for prefixed in (False, True):
        (tp, tq), (ip, iq) = vectors["torch", prefixed], vectors["onnx-int8", prefixed]
        cos = np.concatenate([_cosines(tp, ip), _cosines(tq, iq)])
        assert cos.min() >= 0.98, cos.min()
        assert cos.mean() >= 0.99, cos.mean()
        agree = ((tq @ tp.T).argmax(axis=1) == (iq @ ip.T).argmax(axis=1)).mean()
        assert agree >= 0.9, agree


def test_export_happens_once_and_is_reused(vectors, onnx_root, monkeypatch):
    from ragsweep.embeddings import onnx_export
    from ragsweep.embeddings.factory import MINILM_ID, load_model

    files = [onnx_export.export_path(onnx_root, MINILM_ID, p) for p in ("fp32", "int8")]
    before = [(f.stat().st_ino, f.stat().st_mtime_ns) for f in files]

    def refuse(*args, **kwargs):
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_export, "export_fp32", refuse)
    monkeypatch.setattr(onnx_export, "quantize_int8", refuse)
    for backend in ("onnx", "onnx-int8"):
        assert load_model(HFEmbeddingSpec(backend=backend), onnx_root).get_text_embedding("reused")
    assert [(f.stat().st_ino, f.stat().st_mtime_ns) for f in files] == before
    assert sorted(p.name for p in files[0].parent.parent.iterdir()) == [".fp32.lock", ".int8.lock", "fp32", "int8-v2"]


_CONCURRENT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from ragsweep.embeddings import onnx_export
    from ragsweep.embeddings.factory import MINILM_ID, bundled_minilm_dir

    root, me, other = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    real = onnx_export.export_fp32
    def counted(*args):
        print("EXPORTED", flush=True)
        real(*args)
    onnx_export.export_fp32 = counted
    import torch, transformers  # the slow imports first, so both processes reach the export together
    (root / f"ready-{me}").touch()
    while not (root / f"ready-{other}").exists():
        time.sleep(0.01)
    print(onnx_export.ensure_export(MINILM_ID, "fp32", root,
                                    lambda t: onnx_export.export_fp32(bundled_minilm_dir(), t, "field")))
""")


def test_concurrent_loads_export_once_into_one_valid_file(tmp_path):
    import onnxruntime as ort

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CONCURRENT, str(tmp_path), me, other],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for me, other in (("a", "b"), ("b", "a"))
    ]
    outs = [p.communicate(timeout=procwait.scaled(600)) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-2000:] for _, err in outs]
    stdout = "".join(out for out, _ in outs)
    assert stdout.count("EXPORTED") == 1
    paths = {line for line in stdout.splitlines() if line.endswith("model.onnx")}
    assert len(paths) == 1
    path = Path(paths.pop())
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["input_ids", "attention_mask", "token_type_ids"]
    assert not [p for p in path.parent.parent.iterdir() if p.name.startswith(".fp32-")]  # no temporary left


def test_model_keys_and_labels_differ_by_backend_and_torch_is_unchanged():
    from ragsweep.embeddings.factory import model_key

    torch_key = "st|sentence-transformers/all-MiniLM-L6-v2|q=|t=|unpadded"  # the key caches were written under
    assert model_key(HFEmbeddingSpec()) == torch_key
    assert model_key(HFEmbeddingSpec(backend="torch", device="cpu", batch_size=8)) == torch_key
    assert model_key(HFEmbeddingSpec(backend="onnx")) == torch_key + "|backend=onnx|export=v2"
    assert model_key(HFEmbeddingSpec(backend="onnx-int8")) == torch_key + "|backend=onnx-int8|export=v2|int8=v2"
    assert [HFEmbeddingSpec(backend=b).label() for b in ("torch", "onnx", "onnx-int8")] == [
        "minilm",
        "minilm-onnx",
        "minilm-onnx-int8",
    ]
    assert HFEmbeddingSpec(backend="onnx", name="fast").label() == "fast"


SPEC = "splitters: [{kind: token}]\nretrievers: [{kind: vector}]\nembeddings:\n"


def _write(tmp_path: Path, embeddings: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC + embeddings, encoding="utf-8")
    return path


def _error(tmp_path: Path, embeddings: str) -> str:
    path = _write(tmp_path, embeddings)
    with pytest.raises(RagsweepError) as info:
        load_spec(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{path}: ")
    return msg[len(f"{path}: ") :]


def test_spec_backends_and_their_errors(tmp_path):
    spec = load_spec(
        _write(
            tmp_path,
            "  - {model: minilm}\n  - {model: minilm, backend: onnx}\n  - {model: minilm, backend: onnx-int8}\n",
        )
    )
    assert [e.label() for e in spec.embeddings] == ["minilm", "minilm-onnx", "minilm-onnx-int8"]
    assert spec.embeddings[1].model_dump()["backend"] == "onnx"  # what the manifest records

    msg = _error(tmp_path, "  - {model: minilm, backend: onnx8}\n")
    assert msg.startswith("embeddings[0].backend: unknown backend 'onnx8'; use torch") and "onnx-int8" in msg
    msg = _error(
        tmp_path, "  - {model: minilm, backend: onnx, name: m}\n  - {model: minilm, backend: onnx-int8, name: m}\n"
    )
    assert "embeddings: two entries share the label 'm'" in msg
    msg = _error(tmp_path, "  - {kind: openai, model: text-embedding-3-small, backend: onnx}\n")
    assert (
        msg.startswith("embeddings[0].backend: unknown key `backend`; allowed keys here:")
        and "backend" not in msg.split("allowed keys here:")[1]
    )


def test_models_the_onnx_backend_cannot_run_are_refused_in_one_line(tmp_path):
    from ragsweep.embeddings.factory import load_model

    dense = tmp_path / "dense-model"
    dense.mkdir()
    (dense / "config.json").write_text("{}")
    (dense / "modules.json").write_text(
        '[{"path": "", "type": "sentence_transformers.models.Transformer"}, '
        '{"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}, '
        '{"path": "2_Dense", "type": "sentence_transformers.models.Dense"}]'
    )
    with pytest.raises(RagsweepError, match=r"^embeddings\[densemodel-onnx\]\.backend: .*Dense.*use backend: torch$"):
        load_model(HFEmbeddingSpec(model=str(dense), backend="onnx"), tmp_path / "cache")
    weighted = tmp_path / "weighted"
    (weighted / "1_Pooling").mkdir(parents=True)
    (weighted / "config.json").write_text("{}")
    (weighted / "modules.json").write_text(
        '[{"path": "", "type": "sentence_transformers.models.Transformer"}, '
        '{"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]'
    )
    (weighted / "1_Pooling" / "config.json").write_text('{"pooling_mode": "weightedmean"}')
    with pytest.raises(RagsweepError, match=r"pools by \['weightedmean'\]; use backend: torch$"):
        load_model(HFEmbeddingSpec(model=str(weighted), backend="onnx-int8"), tmp_path / "cache")
    not_a_transformer = tmp_path / "plain"
    not_a_transformer.mkdir()
    (not_a_transformer / "config.json").write_text('{"model_type": "no-such-architecture"}')
    with pytest.raises(RagsweepError, match=r"^embeddings\[plain-onnx\]\.backend: cannot load the transformer"):
        load_model(HFEmbeddingSpec(model=str(not_a_transformer), backend="onnx"), tmp_path / "cache")


def test_pooling_follows_the_model_configuration():
    from ragsweep.embeddings.st_layout import l2_normalize, pool

    hidden = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    mask = np.array([[1, 1, 0], [0, 1, 1]])  # the second row left-padded
    assert pool(hidden, mask, ("mean",)).tolist() == [[1.0, 2.0], [9.0, 10.0]]
    assert pool(hidden, mask, ("cls",)).tolist() == [[0.0, 1.0], [8.0, 9.0]]
    assert pool(hidden, mask, ("max",)).tolist() == [[2.0, 3.0], [10.0, 11.0]]
    assert pool(hidden, mask, ("cls", "mean")).shape == (2, 4)
    assert np.allclose(np.linalg.norm(l2_normalize(pool(hidden, mask, ("mean",))), axis=1), 1.0)


def test_device_is_the_gpu_when_torch_sees_one(monkeypatch):
    import torch

    from ragsweep.embeddings.device import onnx_providers, resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device(None) == "cuda"
    assert resolve_device("cpu") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert resolve_device(None) == "cpu"
    assert resolve_device("cuda:1") == "cuda:1"
    assert onnx_providers("cpu") == ["CPUExecutionProvider"]
    # this onnxruntime has no CUDA provider: a CUDA device falls back to the CPU instead of failing
    assert onnx_providers("cuda")[-1] == "CPUExecutionProvider"


def test_bertscore_device_comes_from_its_spec(tmp_path):
    from ragsweep.evaluation.bertscore import BERTScoreRunner

    assert BERTScoreRunner(BERTScoreSpec(device="cuda:1"), tmp_path / "b.sqlite").device == "cuda:1"
    assert BERTScoreRunner(BERTScoreSpec(device="cuda:1"), tmp_path / "b.sqlite", device="cpu").device == "cpu"
    assert BERTScoreRunner(BERTScoreSpec(), tmp_path / "b.sqlite").device is None  # resolved when loaded


@pytest.mark.slow  # 13 s; by default a sweep exports and uses ONNX models (below) and ONNX vectors match torch's
def test_sweep_with_the_onnx_backend_retrieves_like_torch(tmp_path):
    """One sweep, the same model on both backends: the retrieval metrics of the two vector configurations."""
    import pandas as pd

    from ragsweep.config import parse_spec
    from ragsweep.driver import SweepRequest, run_sweep

    spec = parse_spec(
        {
            "name": "onnx",
            "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
            "splitters": [{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
            "embeddings": [{"model": "minilm"}, {"model": "minilm", "backend": "onnx"}],
            "retrievers": [{"kind": "vector"}],
            "top_k": [5],
            "scoring": {"bootstrap_samples": 100, "bertscore": {"baseline": "none"}},
        }
    )
    run = run_sweep(SweepRequest(spec, run_dir=tmp_path / "run", cache_dir=tmp_path / "cache", limit=5, progress=False))
    records = pd.read_parquet(run / "records.parquet").set_index(["config_id", "qid"]).sort_index()
    torch_rows = records.loc["sentence256-minilm-vector-k5"]
    onnx_rows = records.loc["sentence256-minilm-onnx-vector-k5"]
    assert len(torch_rows) == len(onnx_rows) == 5 and records["error"].isna().all()
    for metric in ("hit", "mrr", "ndcg", "span_recall", "span_precision"):
        assert np.allclose(torch_rows[metric], onnx_rows[metric], atol=1e-9, equal_nan=True), metric
    assert list((tmp_path / "cache" / "onnx").glob("*/fp32/model.onnx"))  # the export lives in the sweep's cache
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    # the first left unset: the suite's default (torch, conftest), recorded as such
    assert [e["backend"] for e in manifest["spec"]["embeddings"]] == ["auto:torch", "onnx"]
    assert {c["config_id"]: c["embedding"]["backend"] for c in manifest["configurations"]} == {
        "sentence256-minilm-vector-k5": "auto:torch",
        "sentence256-minilm-onnx-vector-k5": "onnx",
    }
    assert manifest["versions"]["onnxruntime"] != "not installed"


def test_the_fast_tokenizer_is_safe_from_many_threads_at_once():
    """ONNX embedding calls tokenize in their own threads, with and without truncation: each call gets
    its own length's ids (a tokenizer reconfigured while another thread encodes fails or mixes them)."""
    from concurrent.futures import ThreadPoolExecutor

    from ragsweep.embeddings.factory import bundled_minilm_dir
    from ragsweep.embeddings.fast_tokenizer import FastTokenizer

    tok = FastTokenizer(bundled_minilm_dir())
    texts = [f"clause {i} " + "the tenant shall pay rent " * 60 for i in range(8)]
    expected = {n: tok.encode(texts, n) for n in (None, 16, 128)}

    def call(i: int):
        n = (None, 16, 128)[i % 3]
        return n, tok.encode(texts, n)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(call, range(240)))
    assert all(got == expected[n] for n, got in results)
    assert {len(ids) for ids, _ in expected[16]} == {16} and len(expected[None][0][0]) > 300


def test_a_sweep_exports_its_onnx_models_first_and_a_bad_one_fails_only_its_configurations(
    tmp_path, monkeypatch, onnx_exports
):
    """Exports are made before the run writes anything (while the process is small: stages.export); a model
    that cannot be exported fails its own configurations with the reason, and the others are answered. MiniLM's
    export is written without PyTorch (``bert_graph``); the model that cannot be exported goes to a real child (the
    traced export), once."""
    import pandas as pd

    from ragsweep.config import parse_spec
    from ragsweep.driver import SweepRequest, run_sweep
    from ragsweep.embeddings import onnx_export
    from ragsweep.embeddings.factory import MINILM_ID

    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "config.json").write_text('{"model_type": "no-such-architecture"}')
    run_dir, cache = tmp_path / "run", tmp_path / "cache"
    seen = []
    real = onnx_export.export_in_child

    def watched(module, function, *args):
        seen.append((function, str(args[0]), (run_dir / "manifest.json").exists()))
        if str(args[0]) != str(plain):
            return shutil.copyfile(onnx_export.export_path(onnx_exports, MINILM_ID, "fp32"), args[1])
        return real(module, function, *args)

    monkeypatch.setattr(onnx_export, "export_in_child", watched)
    from ragsweep.embeddings import bert_graph

    written = bert_graph.export_bert

    def watched_graph(model_dir, target, num_layers=None, precision="fp32"):  # MiniLM, a BERT: no PyTorch
        seen.append((f"bert_graph {precision}", str(model_dir), (run_dir / "manifest.json").exists()))
        return written(model_dir, target, num_layers, precision)

    monkeypatch.setattr(bert_graph, "export_bert", watched_graph)
    spec = parse_spec(
        {
            "name": "onnx-first",
            "dataset": {"corpus": {"format": "demo"}, "questions": {"format": "demo"}},
            "splitters": [{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
            "embeddings": [{"model": "minilm", "backend": "onnx-int8"}, {"model": str(plain), "backend": "onnx"}],
            "retrievers": [{"kind": "vector"}],
            "top_k": [3],
            "scoring": {"bootstrap_samples": 100, "bertscore": {"baseline": "none", "backend": "onnx"}},
        }
    )
    run_sweep(SweepRequest(spec, run_dir=run_dir, cache_dir=cache, limit=3, progress=False))
    from ragsweep.embeddings.factory import bundled_minilm_dir

    # each model's export tried once, before the manifest was written: the bad one's failure is remembered by the
    # run, not paid again when its configurations load it
    minilm = str(bundled_minilm_dir())
    assert sorted(seen) == [
        ("bert_graph fp32", minilm, False),  # BERTScore's
        ("bert_graph int8", minilm, False),  # the embedding's, written without the fp32 file and the quantizer
        ("export_fp32", str(plain), False),
    ]
    for precision in ("fp32", "int8"):  # MiniLM: the embedding's int8 and BERTScore's fp32 (all 6 layers: shared)
        assert onnx_export.export_path(cache, MINILM_ID, precision).is_file()
    records = pd.read_parquet(run_dir / "records.parquet").set_index("config_id")
    good, bad = records.loc["sentence256-minilm-onnx-int8-vector-k3"], records.loc["sentence256-plain-onnx-vector-k3"]
    assert good["error"].isna().all() and good["bertscore_f1"].notna().all()
    assert bad["error"].str.contains("cannot load the transformer").all()
