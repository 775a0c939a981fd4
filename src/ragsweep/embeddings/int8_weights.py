"""Int8 weights as ONNX Runtime's dynamic quantizer computes them, for all channels at once.

The quantizer (``onnxruntime.quantization.quantize_dynamic``, per channel, 7-bit weights) loops over a matrix's
output channels in Python: 1.3 s of MiniLM's 2.5 s quantization, itself most of a cold run's export. These are the
same formulas (``quant_utils.compute_scale_zp`` and ``quantize_nparray`` as onnxruntime 1.32 has them) on whole
arrays, so the file ``bert_graph`` writes holds the quantizer's very bytes (tested against the installed one) and the
int8 cache keys stay valid. Older quantizers subtracted a range's ends in float32 before widening, which can move
an embedding table's scale by its last bit; a cache keeps the file it has, whichever wrote it. Scheme: Jacob et
al. 2018, "Quantization and Training of Neural Networks for Efficient Integer-Arithmetic-Only Inference" (CVPR):
r = scale x (q - zero_point).
"""

from __future__ import annotations

import numpy as np

# reduce_range: int8 weights in [-64, 64] (7 bits, so no int16 pair sum saturates on an AVX2 CPU: onnx_export)
WEIGHT_RANGE = (-64, 64)
# the quantizer's activation type (uint8, full range) for a Gather's table
TABLE_RANGE = (0, 255)
_TINY = np.finfo(np.float32).tiny


def per_channel_symmetric(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A [in, out] MatMul weight as int8 with one symmetric scale per output channel (column): (q, scale,
    zero_point), zero points 0. A column of zeros gets scale 1, as the quantizer gives it."""
    w = np.asarray(weight, dtype=np.float32)
    absmax = np.maximum(np.abs(np.minimum(w.min(axis=0), 0)), np.maximum(w.max(axis=0), 0))
    low, high = WEIGHT_RANGE
    scale = (absmax.astype(np.float64) * 2) / float(high - low)  # float64 as the quantizer's (rmax - rmin) / dq
    scale32 = np.where(scale < _TINY, 1.0, scale).astype(np.float32)
    q = np.clip((w / scale32).round(), -128, 127).astype(np.int8)  # clipped to int8 as quantize_nparray does
    return q, scale32, np.zeros(w.shape[1], dtype=np.int8)


def per_tensor_asymmetric(table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An embedding table as uint8 with one scale and zero point (0-d arrays): (q, scale, zero_point)."""
    t = np.asarray(table, dtype=np.float32)
    rmin, rmax = np.minimum(t.min(), np.float32(0)), np.maximum(t.max(), np.float32(0))
    low, high = TABLE_RANGE
    scale = (np.float64(rmax) - np.float64(rmin)) / float(high - low)
    if scale < _TINY:
        scale32, zero = np.array(1.0, dtype=np.float32), np.array(0, dtype=np.uint8)
    else:
        zero = np.array(np.round(low - rmin / scale), dtype=np.uint8)
        scale32 = np.array(scale, dtype=np.float32)
    q = np.clip((t / scale32).round() + zero, low, high).astype(np.uint8)
    return q, scale32, zero
