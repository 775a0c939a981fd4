"""The int8 graph written straight from MiniLM's weights is the quantizer's: the same weights byte for byte, the same
vectors bit for bit, so int8 caches made by either stay valid. And the default path writes no fp32 file for it.

Real model and the real quantizer (onnxruntime's ``quantize_dynamic``), whose output is the reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest


def _quantizer_reference(data: np.ndarray, qtype, symmetric: bool, reduce_range: bool):
    from onnxruntime.quantization.quant_utils import quantize_data

    zero, scale, q = quantize_data(data.ravel(), qtype, symmetric, reduce_range=reduce_range)
    return q.reshape(data.shape), np.asarray(scale), np.asarray(zero)


def test_int8_weights_are_the_quantizers_for_every_channel_including_degenerate_ones():
    """Per channel (a [in, out] MatMul weight: symmetric int8, 7 bits) and per tensor (an embedding table: uint8),
    against onnxruntime's own ``quantize_data`` channel by channel; columns of zeros, one sign only, a single
    large value and a constant table included."""
    from onnx import TensorProto

    from ragsweep.embeddings.int8_weights import per_channel_symmetric, per_tensor_asymmetric

    rng = np.random.default_rng(7)
    w = rng.normal(0, 0.05, size=(96, 40)).astype(np.float32)
    w[:, 0] = 0.0
    w[:, 1] = np.abs(w[:, 1])
    w[:, 2] = -np.abs(w[:, 2])
    w[5, 3] = 3.0
    w[:, 4] = 1e-40  # a subnormal column: scale below float32's tiny, set to 1 as the quantizer does
    q, scale, zero = per_channel_symmetric(w)
    for c in range(w.shape[1]):
        rq, rscale, rzero = _quantizer_reference(w[:, c], TensorProto.INT8, True, True)
        assert q[:, c].tobytes() == rq.tobytes() and q.dtype == rq.dtype, c
        assert scale[c].tobytes() == rscale.astype(np.float32).tobytes() and scale.dtype == rscale.dtype, c
        assert zero[c] == rzero and zero.dtype == rzero.dtype, c
    for table in (rng.normal(0, 0.1, size=(50, 16)).astype(np.float32), np.full((3, 4), 0.25, np.float32)):
        got = per_tensor_asymmetric(table)
        want = _quantizer_reference(table, TensorProto.UINT8, False, False)
        for a, b in zip(got, want):
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("layers", [None, 2])
def test_the_int8_graph_written_directly_computes_the_quantizers_vectors_bit_for_bit(tmp_path, layers):
    """All six layers (the embedding model) and two (a truncated BERTScore backbone): the directly written int8
    file against ``quantize_int8`` of the fp32 file, on padded batches of demo passages."""
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    from ragsweep.embeddings import bert_graph, onnx_export
    from ragsweep.embeddings.factory import bundled_minilm_dir
    from ragsweep.embeddings.fast_tokenizer import FastTokenizer

    model_dir = bundled_minilm_dir()
    bert_graph.export_bert(model_dir, tmp_path / "fp32.onnx", layers)
    onnx_export.quantize_int8(tmp_path / "fp32.onnx", tmp_path / "quantized.onnx")
    onnx_export.int8_writer(model_dir, layers)(tmp_path / "direct.onnx")

    def weights(path: Path) -> dict:
        return {
            i.name: (a.dtype, a.shape, a.tobytes())
            for i in onnx.load(str(path)).graph.initializer
            for a in [numpy_helper.to_array(i)]
        }

    direct, quantized = weights(tmp_path / "direct.onnx"), weights(tmp_path / "quantized.onnx")
    assert sum(name.endswith("_quantized") for name in direct) == 3 + 6 * (layers or 6)
    assert direct == quantized

    from ragsweep.datasets.demo import load_demo_corpus

    texts = [p for d in load_demo_corpus()[:6] for p in d.text.split("\n\n") if p.strip()][:24]
    encoded = FastTokenizer(model_dir).encode(texts, 256)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    sessions = [
        ort.InferenceSession(str(tmp_path / f"{n}.onnx"), options, providers=["CPUExecutionProvider"])
        for n in ("direct", "quantized")
    ]
    for start in range(0, len(encoded), 8):
        batch = encoded[start : start + 8]
        width = max(len(ids) for ids, _ in batch)
        ids = np.array([i + [0] * (width - len(i)) for i, _ in batch], dtype=np.int64)
        mask = np.array([m + [0] * (width - len(m)) for _, m in batch], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        a, b = (s.run(None, feed)[0] for s in sessions)
        assert a.shape == b.shape and np.array_equal(a, b)


def test_the_default_int8_backend_writes_its_graph_without_an_fp32_file_or_the_quantizer(tmp_path, monkeypatch):
    """The default path's embedding model: one int8 file, written once (a second load reuses it)."""
    from ragsweep.config import HFEmbeddingSpec
    from ragsweep.embeddings import onnx_export
    from ragsweep.embeddings.factory import MINILM_ID, load_model

    def refuse(*args, **kwargs):
        raise AssertionError("the fp32 export or the quantizer was used")

    for name in ("quantize_int8", "export_fp32_fast", "export_in_child"):
        monkeypatch.setattr(onnx_export, name, refuse)
    said: list[str] = []
    with onnx_export.announced(said.append):
        vector = load_model(HFEmbeddingSpec(backend="onnx-int8"), tmp_path).get_text_embedding("rent is due")
        load_model(HFEmbeddingSpec(backend="onnx-int8"), tmp_path).get_text_embedding("reused")
    assert len(vector) == 384
    home = onnx_export.export_path(tmp_path, MINILM_ID, "int8").parent.parent
    assert sorted(p.name for p in home.iterdir()) == [".int8.lock", "int8-v2"]
    assert len(said) == 2 and "writing int8" in said[0] and "int8 model ready" in said[1]
