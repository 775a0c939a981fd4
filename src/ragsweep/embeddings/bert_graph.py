"""A BERT encoder written straight into an ONNX graph from its safetensors weights, without PyTorch.

Tracing a transformer with PyTorch's exporter means importing PyTorch (about 700 MB resident on its CUDA build)
and took 8 s of a 34 s cold privacy_qa sweep (BENCHMARKS "Stage 1 at the floor"). A BERT-family encoder
(``model_type: bert`` with absolute positions and GELU, as the bundled all-MiniLM-L6-v2) is a fixed graph: the
word, position and token-type embeddings summed and normalised, then per layer self-attention (Vaswani et al.
2017) and a GELU feed-forward block, each with a residual connection and layer normalisation (Devlin et al.
2019, "BERT"). Written here with ONNX's standard operators (opset 17) in the layout the traced export had (token
ids, attention mask and token types in, ``last_hidden_state`` out, batch and sequence dynamic), so the same
quantizer and runtime read it; its vectors are PyTorch's to float32 rounding (tested). Any other model is traced
as before (``onnx_export.export_fp32``).

The int8 graph is written the same way, straight from the weights: what ONNX Runtime's dynamic quantizer makes of
the fp32 graph (``onnx_export.quantize_int8``: each Linear's input quantized per batch by DynamicQuantizeLinear,
shared by the Linears that read it, times int8 weights by MatMulInteger, scaled back; the embedding tables as
uint8 and dequantized after their Gather), with its weights (``int8_weights``). Quantizing took 2.5 s of a cold
run and needed the fp32 file written first; this takes a fraction of a second, and its vectors equal the
quantizer's file's bit for bit (tested), so the int8 cache keys stay valid.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

OPSET = 17
WEIGHTS = "model.safetensors"


def model_config(model_dir: Path | str) -> dict:
    """A model directory's ``config.json``; {} where it has none (a hub id, say) or it cannot be read."""
    try:
        return json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def supported(model_dir: Path | str) -> bool:
    """Whether ``model_dir`` holds an encoder this module writes: a BERT with absolute positions, exact GELU and
    safetensors weights."""
    cfg = model_config(model_dir)
    return (
        cfg.get("model_type") == "bert"
        and cfg.get("position_embedding_type", "absolute") == "absolute"
        and cfg.get("hidden_act") == "gelu"
        and (Path(model_dir) / WEIGHTS).is_file()
    )


def export_bert(
    model_dir: Path | str, target: Path | str, num_layers: int | None = None, precision: str = "fp32"
) -> None:
    """Write ``model_dir``'s encoder (its first ``num_layers`` layers; default all) to ``target`` as ONNX, with
    float32 weights or (``precision="int8"``) dynamically quantized ones."""
    import onnx
    from safetensors.numpy import load_file

    model_dir = Path(model_dir)
    cfg = model_config(model_dir)
    weights = load_file(str(model_dir / WEIGHTS))
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
    graph = _Graph(weights, prefix, float(cfg.get("layer_norm_eps", 1e-12)), int8=precision == "int8")
    hidden, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
    layers = int(num_layers or cfg["num_hidden_layers"])
    x = graph.embeddings()
    mask = graph.attention_bias()
    for i in range(layers):
        x = graph.layer(x, mask, f"encoder.layer.{i}.", hidden, heads)
    model = graph.model(x)
    if graph.int8:  # the tensors' shapes, as the quantizer's file carries them: ONNX Runtime fuses each residual
        # Add and LayerNormalization into SkipLayerNormalization only where it knows both inputs' ranks
        model = onnx.shape_inference.infer_shapes(model)
    onnx.checker.check_model(model)
    onnx.save(model, str(target))


class _Graph:
    """The nodes and initializers of one encoder graph, named as its weights are."""

    def __init__(self, weights: dict, prefix: str, eps: float, int8: bool = False) -> None:
        from onnx import TensorProto, helper

        self.helper, self.TensorProto = helper, TensorProto
        self.weights, self.prefix, self.eps, self.int8 = weights, prefix, eps, int8
        self.nodes: list = []
        self.inits: dict = {}
        self.n = 0
        self.slots = 0  # weights and constants so far, a quantized weight counting as one: constants are named
        # by it, so the int8 graph's constants keep the fp32 graph's names (as the quantizer keeps them)
        self.dynamic: dict[str, list[str]] = {}  # a tensor's DynamicQuantizeLinear outputs: one per tensor

    def w(self, name: str, transpose: bool = False) -> str:
        """An initializer from the weight ``name`` (a Linear's transposed: MatMul takes x @ W^T)."""
        import numpy as np
        from onnx import numpy_helper

        if name not in self.inits:
            array = self.weights[self.prefix + name]
            array = np.ascontiguousarray(array.T) if transpose else array
            self.inits[name] = numpy_helper.from_array(array.astype(np.float32), name)
            self.slots += 1
        return name

    def const(self, values, dtype: str = "float32") -> str:
        import numpy as np
        from onnx import numpy_helper

        name = f"const_{self.slots}"
        self.inits[name] = numpy_helper.from_array(np.array(values, dtype=dtype), name)
        self.slots += 1
        return name

    def quantized(self, name: str, transpose: bool = False) -> list[str]:
        """The initializers (q, scale, zero point) of the weight ``name`` quantized, named as the quantizer
        names them: a Linear's per output channel (int8), an embedding table's per tensor (uint8)."""
        import numpy as np
        from onnx import numpy_helper

        from ragsweep.embeddings import int8_weights

        names = [name + suffix for suffix in ("_quantized", "_scale", "_zero_point")]
        if names[0] not in self.inits:
            array = self.weights[self.prefix + name]
            if transpose:
                parts = int8_weights.per_channel_symmetric(np.ascontiguousarray(array.T))
            else:
                parts = int8_weights.per_tensor_asymmetric(array)
            for n, part in zip(names, parts):
                self.inits[n] = numpy_helper.from_array(part, n)
            self.slots += 1
        return names

    def op(self, kind: str, inputs: list[str], outputs: int = 1, **attrs) -> str:
        self.n += 1
        out = f"{kind.lower()}_{self.n}"
        names = [out] if outputs == 1 else [f"{out}_{i}" for i in range(outputs)]
        self.nodes.append(self.helper.make_node(kind, inputs, names, **attrs))
        return out

    def linear(self, x: str, name: str) -> str:
        if not self.int8:
            product = self.op("MatMul", [x, self.w(name + ".weight", transpose=True)])
        else:  # x quantized per batch (once per tensor), int8 product, scaled by both scales
            if x not in self.dynamic:
                out = self.op("DynamicQuantizeLinear", [x], outputs=3)
                self.dynamic[x] = [f"{out}_{i}" for i in range(3)]
            xq, xscale, xzero = self.dynamic[x]
            wq, wscale, wzero = self.quantized(name + ".weight", transpose=True)
            scale = self.op("Mul", [xscale, wscale])
            integer = self.op("MatMulInteger", [xq, wq, xzero, wzero])
            product = self.op("Mul", [self.op("Cast", [integer], to=self.TensorProto.FLOAT), scale])
        return self.op("Add", [product, self.w(name + ".bias")])

    def table(self, name: str, ids: str) -> str:
        """The rows ``ids`` of the embedding table ``name``."""
        if not self.int8:
            return self.op("Gather", [self.w(name), ids])
        q, scale, zero = self.quantized(name)
        return self.op("DequantizeLinear", [self.op("Gather", [q, ids]), scale, zero])

    def norm(self, x: str, name: str) -> str:
        return self.op(
            "LayerNormalization", [x, self.w(name + ".weight"), self.w(name + ".bias")], axis=-1, epsilon=self.eps
        )

    def embeddings(self) -> str:
        seq = self.op("Gather", [self.op("Shape", ["input_ids"]), self.const(1, "int64")], axis=0)
        positions = self.op("Range", [self.const(0, "int64"), seq, self.const(1, "int64")])
        total = self.op(
            "Add",
            [
                self.op(
                    "Add",
                    [
                        self.table("embeddings.word_embeddings.weight", "input_ids"),
                        self.table("embeddings.position_embeddings.weight", positions),
                    ],
                ),
                self.table("embeddings.token_type_embeddings.weight", "token_type_ids"),
            ],
        )
        return self.norm(total, "embeddings.LayerNorm")

    def attention_bias(self) -> str:
        """(1 - mask) x the float32 minimum, shaped [batch, 1, 1, sequence]: masked keys get no attention."""
        import numpy as np

        mask = self.op("Cast", ["attention_mask"], to=self.TensorProto.FLOAT)
        off = self.op("Sub", [self.const(1.0), mask])
        bias = self.op("Mul", [off, self.const(float(np.finfo(np.float32).min))])
        return self.op("Unsqueeze", [bias, self.const([1, 2], "int64")])

    def layer(self, x: str, bias: str, name: str, hidden: int, heads: int) -> str:
        size = hidden // heads
        split = self.const([0, 0, heads, size], "int64")

        def heads_of(t: str, perm: list[int]) -> str:
            return self.op("Transpose", [self.op("Reshape", [t, split])], perm=perm)

        q = heads_of(self.linear(x, name + "attention.self.query"), [0, 2, 1, 3])
        k = heads_of(self.linear(x, name + "attention.self.key"), [0, 2, 3, 1])
        v = heads_of(self.linear(x, name + "attention.self.value"), [0, 2, 1, 3])
        scores = self.op("Mul", [self.op("MatMul", [q, k]), self.const(1.0 / math.sqrt(size))])
        probs = self.op("Softmax", [self.op("Add", [scores, bias])], axis=-1)
        context = self.op("Transpose", [self.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        merged = self.op("Reshape", [context, self.const([0, 0, hidden], "int64")])
        attended = self.norm(
            self.op("Add", [self.linear(merged, name + "attention.output.dense"), x]),
            name + "attention.output.LayerNorm",
        )
        inner = self.linear(attended, name + "intermediate.dense")
        # exact GELU: x * (1 + erf(x / sqrt 2)) / 2
        erf = self.op("Erf", [self.op("Mul", [inner, self.const(1.0 / math.sqrt(2.0))])])
        gelu = self.op("Mul", [self.op("Mul", [inner, self.op("Add", [erf, self.const(1.0)])]), self.const(0.5)])
        return self.norm(
            self.op("Add", [self.linear(gelu, name + "output.dense"), attended]), name + "output.LayerNorm"
        )

    def model(self, out: str):
        h = self.helper
        self.nodes.append(h.make_node("Identity", [out], ["last_hidden_state"]))
        dims = ["batch", "sequence"]
        inputs = [
            h.make_tensor_value_info(n, self.TensorProto.INT64, dims)
            for n in ("input_ids", "attention_mask", "token_type_ids")
        ]
        output = h.make_tensor_value_info("last_hidden_state", self.TensorProto.FLOAT, [*dims, None])
        graph = h.make_graph(self.nodes, "bert", inputs, [output], list(self.inits.values()))
        return h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], producer_name="ragsweep")
