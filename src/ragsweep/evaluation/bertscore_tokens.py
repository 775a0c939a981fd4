"""BERTScore's two steps, contextual token embeddings and greedy matching, one sentence and one pair at a time.

BERTScore (Zhang et al. 2020, ICLR) embeds both sentences with a truncated encoder, matches every
token to its most similar token on the other side (cosine) and averages: precision over the
candidate's tokens, recall over the reference's, F1 their harmonic mean. The reference
implementation (bert-score) pads each batch of sentences to its longest and matches pairs in
padded batches, so a pair's float32 score moves in the 7th digit with the pairs that share its
batch. Here a sentence is batched only with sentences of the same token count (no padding), in
batches never so small that CPU kernels round differently (``embeddings.batching``), and each pair
is matched alone (float32 similarities, as bert-score's, averaged in float64), so a score is a
function of its pair only, whatever else is scored with it, on whichever worker, cold or resumed.

Tokenisation (``sent_encode``), layer truncation (``get_model``) and the weights (every token 1,
the CLS and SEP tokens 0, as bert-score without idf) are bert-score's own. The encoder runs on
PyTorch (bert-score's runtime) or, exported once, on ONNX Runtime (fp32, or int8 weights): faster on a
CPU, agreement with PyTorch measured in BENCHMARKS.md ("BERTScore backends").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from ragsweep.embeddings.batching import equal_key_batches, filled, in_parallel
from ragsweep.embeddings.bert_graph import model_config


@functools.cache
def _blas_controller():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _one_blas_thread():
    """numpy's BLAS limited to one thread for a while. A multi-threaded float32 product (OpenBLAS
    sgemm) takes other edge kernels for each thread's share of the matrix, so a similarity moved in
    its last bit with ``OMP_NUM_THREADS`` (one on a Ray worker, every core locally); one thread
    costs little at these sizes (measured: 0.13 against 0.10 ms for 60 x 300 tokens on two threads)."""
    return _blas_controller().limit(limits=1, user_api="blas")


def greedy_match(
    cand: np.ndarray, ref: np.ndarray, cand_weight: np.ndarray, ref_weight: np.ndarray
) -> tuple[float, float, float]:
    """(P, R, F1) of one pair from unit-norm token embeddings (rows) and token weights.

    Each candidate token's best cosine with any reference token (special tokens included, as in
    bert-score), weighted by ``cand_weight``, gives P; symmetrically R. A best cosine is never below
    0: bert-score's padded matching gives padding positions similarity 0, so for every sentence
    shorter than the longest of its batch (nearly all) a token's best is at least 0; here that
    holds for every sentence, so scores equal bert-score's wherever it padded (to 2e-7, measured)
    and never depend on a batch. A side without a weighted token (an empty sentence) scores 0,
    bert-score's convention."""
    with _one_blas_thread():  # this pair's shapes alone fix the kernel: no batch or thread count can change it
        return _matched(cand, ref, cand_weight, ref_weight)


def _matched(
    cand: np.ndarray, ref: np.ndarray, cand_weight: np.ndarray, ref_weight: np.ndarray
) -> tuple[float, float, float]:
    """``greedy_match`` with numpy's BLAS already on one thread (``score_pairs`` limits it once for all pairs)."""
    if not cand_weight.any() or not ref_weight.any():
        return 0.0, 0.0, 0.0
    sim = np.maximum(cand @ ref.T, 0.0)
    p = float(sim.max(axis=1).astype(np.float64) @ cand_weight / cand_weight.sum())
    r = float(sim.max(axis=0).astype(np.float64) @ ref_weight / ref_weight.sum())
    f = 2 * p * r / (p + r) if p + r != 0 else 0.0
    return p, r, f


def export_backbone(backbone: str, num_layers: int | str, target: Path | str) -> None:
    """Export bert-score's truncated encoder (``get_model``: the first ``num_layers`` layers) to ONNX."""
    from bert_score.utils import get_model
    from transformers import AutoTokenizer

    from ragsweep.embeddings.onnx_export import export_module

    model = get_model(backbone, int(num_layers))
    if hasattr(model, "set_attn_implementation"):
        try:
            model.set_attn_implementation("eager")  # the attention mask traced into the graph
        except (ValueError, TypeError):
            pass
    export_module(
        model,
        AutoTokenizer.from_pretrained(backbone),
        Path(target),
        "scoring.bertscore.backend",
        Path(backbone).name or backbone,
    )


def _wordpiece_dir(backbone: str) -> bool:
    """A local BERT-family model with a ``tokenizer.json``: its ids need no ``transformers`` (bert-score's
    ``sent_encode`` treats GPT-2 and RoBERTa tokenizers specially, so those keep bert-score's tokenizer)."""
    return (Path(backbone) / "tokenizer.json").is_file() and model_config(backbone).get("model_type") in (
        "bert",
        "distilbert",
        "electra",
    )


def _depth(backbone: str) -> int | None:
    value = model_config(backbone).get("num_hidden_layers")
    return int(value) if isinstance(value, int) else None


def backbone_export(
    backbone: str, num_layers: int, backend: str, export_root: Path | None, model_id: str | None = None
) -> Path:
    """The ONNX file of ``backbone`` truncated at ``num_layers`` for ``backend`` (onnx, onnx-int8),
    exported first by a child process if no process has yet."""
    from ragsweep.embeddings.onnx_export import PRECISIONS, ensure_export, int8_writer

    # every layer kept: the same graph as the embedding backend's export of this model, shared with it
    full = num_layers == _depth(backbone)
    identity = (model_id or backbone) if full else f"bertscore|{model_id or backbone}|L{num_layers}"
    return ensure_export(
        identity,
        PRECISIONS[backend],
        export_root or Path("."),
        lambda target: _export(backbone, num_layers, target),
        int8_writer(Path(backbone), num_layers),
    )


def _export(backbone: str, num_layers: int, target: Path) -> None:
    """A BERT-family backbone written without PyTorch (``bert_graph``), any other traced in a child process."""
    from ragsweep.embeddings import bert_graph
    from ragsweep.embeddings.onnx_export import export_in_child

    if bert_graph.supported(backbone):
        bert_graph.export_bert(backbone, target, num_layers)
    else:
        export_in_child("ragsweep.evaluation.bertscore_tokens", "export_backbone", backbone, num_layers, target)


@dataclass(frozen=True)
class EncoderModel:
    """Which encoder a ``TokenEncoder`` loads: bert-score's ``backbone`` truncated at ``num_layers``, run on
    ``backend`` (torch, onnx, onnx-int8); ``model_id`` names it for the exports it shares (default: the backbone).
    One bundle, so the scorer's settings reach the encoder whole rather than as loose arguments."""

    backbone: str
    num_layers: int
    backend: str = "torch"
    model_id: str | None = None


class TokenEncoder:
    """bert-score's tokenizer and truncated encoder, run without padding, on PyTorch or ONNX Runtime.

    ``encode`` yields (sentence, unit-norm float32 token embeddings, token weights) in batches of
    equal token counts, at most ``batching.MAX_TOKENS`` tokens each (a 512-token reference batch of
    64 would hold 0.8 GB of attention scores); it holds only one batch's embeddings at a time.
    ``onnx``/``onnx-int8`` run the same truncated encoder, exported once into ``export_root`` by a child
    process (``embeddings.onnx_export``); int8's dynamic quantization scales activations per batch,
    so it encodes one sentence per call."""

    def __init__(self, model: EncoderModel, device: str, batch_size: int, export_root: Path | None = None) -> None:
        backbone, num_layers, backend = model.backbone, model.num_layers, model.backend
        self.device = device
        self.batch_size = batch_size
        self.backend = backend
        self.calls = 1
        self._fast = None
        if backend != "torch" and _wordpiece_dir(backbone):  # ids from tokenizer.json: PyTorch never imported
            from ragsweep.embeddings.fast_tokenizer import FastTokenizer

            self._fast = FastTokenizer(Path(backbone))
            self._special = {self._fast.cls_id, self._fast.sep_id}
        else:
            from bert_score.utils import get_tokenizer

            self.tokenizer = get_tokenizer(backbone, use_fast=False)
            self._special = {self.tokenizer.cls_token_id, self.tokenizer.sep_token_id}
        if backend == "torch":
            from bert_score.utils import get_model

            from ragsweep import mkl_mode

            mkl_mode.ensure_strict()
            self.model = get_model(backbone, num_layers).to(device)
            return
        import onnxruntime as ort

        from ragsweep.embeddings.device import available_cores, onnx_providers

        path = backbone_export(backbone, num_layers, backend, export_root, model.model_id)
        providers = onnx_providers(device)
        cpu_only = all((p if isinstance(p, str) else p[0]) == "CPUExecutionProvider" for p in providers)
        self.calls = available_cores() if cpu_only else 1  # on a CPU: one-thread calls, as many as cores
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1 if self.calls > 1 else available_cores()
        self.session = ort.InferenceSession(str(path), options, providers=providers)
        self._inputs = [i.name for i in self.session.get_inputs()]

    def token_ids(self, sentence: str) -> list[int]:
        """bert-score's ``sent_encode``: the stripped sentence, special tokens added, truncated at the
        tokenizer's limit."""
        if self._fast is not None:
            return self._fast.encode([sentence.strip()], self._fast.model_max_length)[0][0]
        from bert_score.utils import sent_encode

        return sent_encode(self.tokenizer, sentence)

    def _hidden(self, rows: list[list[int]]) -> np.ndarray:
        """Last hidden states of equal-length token rows (no padding: the mask is all ones)."""
        if self.backend == "torch":
            import torch

            x = torch.tensor(rows, dtype=torch.long, device=self.device)
            with torch.no_grad():
                return self.model(x, attention_mask=torch.ones_like(x))[0].cpu().numpy()
        ids = np.asarray(rows, dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        return self.session.run(None, {name: feed[name] for name in self._inputs})[0]

    def encode(self, sentences: list[str]) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
        ids = [self.token_ids(s) for s in sentences]
        per_text = self.backend == "onnx-int8"
        keys: list[object] = [("solo", i) for i in range(len(ids))] if per_text else [len(i) for i in ids]
        batches = equal_key_batches(keys, self.batch_size)

        def hidden(idx):
            rows = [ids[i] for i in idx]
            emb = self._hidden(rows if per_text else filled(rows, len(rows[0]))).astype(np.float32)
            return emb / np.linalg.norm(emb, axis=-1, keepdims=True)

        for idx, emb in in_parallel(hidden, batches, self.calls):
            yield from self._rows(sentences, ids, idx, emb)

    def _rows(self, sentences, ids, idx, emb):
        for row, i in enumerate(idx):
            weight = np.array([0.0 if t in self._special else 1.0 for t in ids[i]])
            yield sentences[i], emb[row], weight


def score_pairs(
    encoder: TokenEncoder, pairs: list[tuple[str, str]]
) -> Iterator[tuple[int, tuple[float, float, float]]]:
    """Raw (P, R, F1) of each pair, yielded as (index into ``pairs``, scores) as candidates are encoded.

    References are encoded first and kept; candidates stream through in batches, each matched
    against its references and dropped, so memory holds the references and one batch."""
    refs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for sentence, emb, weight in encoder.encode(list(dict.fromkeys(r for _, r in pairs))):
        refs[sentence] = (emb, weight)
    by_cand: dict[str, list[int]] = {}
    for i, (c, _) in enumerate(pairs):
        by_cand.setdefault(c, []).append(i)
    # numpy's BLAS on one thread for the whole loop, not per pair (the limit's set-up cost 7 % of scoring); the
    # encoder's own threads (ONNX Runtime, PyTorch) are not numpy's
    with _one_blas_thread():
        for sentence, emb, weight in encoder.encode(list(by_cand)):
            for i in by_cand[sentence]:
                ref_emb, ref_weight = refs[pairs[i][1]]
                yield i, _matched(emb, ref_emb, weight, ref_weight)
