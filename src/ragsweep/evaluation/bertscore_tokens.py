"""BERTScore's two steps, contextual token embeddings and greedy matching, one sentence and one pair at a time.

BERTScore (Zhang et al. 2020, ICLR) embeds both sentences with a truncated encoder, matches every
token to its most similar token on the other side (cosine) and averages: precision over the
candidate's tokens, recall over the reference's, F1 their harmonic mean. The reference
implementation (bert-score) pads each batch of sentences to its longest and matches pairs in
padded batches, so a pair's float32 score moves in the 7th digit with the pairs that share its
batch. Here a sentence is batched only with sentences of the same token count (no padding), in
batches never so small that CPU kernels round differently (``embeddings.batching``), and each pair is matched alone in float64, so a score is a function of
its pair only, whatever else is scored with it, on whichever worker, cold or resumed.

Tokenisation (``sent_encode``), layer truncation (``get_model``) and the weights (every token 1,
the CLS and SEP tokens 0, as bert-score without idf) are bert-score's own.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from ragsweep.embeddings.batching import equal_key_batches, filled


def greedy_match(cand: np.ndarray, ref: np.ndarray, cand_weight: np.ndarray, ref_weight: np.ndarray
                 ) -> tuple[float, float, float]:
    """(P, R, F1) of one pair from unit-norm token embeddings (rows) and token weights.

    Each candidate token's best cosine with any reference token (special tokens included, as in
    bert-score), weighted by ``cand_weight``, gives P; symmetrically R. A best cosine is never below
    0: bert-score's padded matching gives padding positions similarity 0, so for every sentence
    shorter than the longest of its batch (nearly all) a token's best is at least 0; here that
    holds for every sentence, so scores equal bert-score's wherever it padded (to 2e-7, measured)
    and never depend on a batch. A side without a weighted token (an empty sentence) scores 0,
    bert-score's convention."""
    if not cand_weight.any() or not ref_weight.any():
        return 0.0, 0.0, 0.0
    sim = np.maximum(cand @ ref.T, 0.0)
    p = float(sim.max(axis=1) @ cand_weight / cand_weight.sum())
    r = float(sim.max(axis=0) @ ref_weight / ref_weight.sum())
    f = 2 * p * r / (p + r) if p + r != 0 else 0.0
    return p, r, f


class TokenEncoder:
    """bert-score's tokenizer and truncated encoder, run without padding.

    ``encode`` yields (sentence, unit-norm float64 token embeddings, token weights) in batches of
    equal token counts; it holds only one batch's embeddings at a time."""

    def __init__(self, backbone: str, num_layers: int, device: str, batch_size: int) -> None:
        from bert_score.utils import get_model, get_tokenizer

        self.tokenizer = get_tokenizer(backbone, use_fast=False)
        self.model = get_model(backbone, num_layers).to(device)
        self.device = device
        self.batch_size = batch_size
        self._special = {self.tokenizer.cls_token_id, self.tokenizer.sep_token_id}

    def token_ids(self, sentence: str) -> list[int]:
        from bert_score.utils import sent_encode

        return sent_encode(self.tokenizer, sentence)

    def encode(self, sentences: list[str]) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
        import torch

        ids = [self.token_ids(s) for s in sentences]
        for idx in equal_key_batches([len(i) for i in ids], self.batch_size):
            rows = filled([ids[i] for i in idx], len(ids[idx[0]]))
            x = torch.tensor(rows, dtype=torch.long, device=self.device)
            with torch.no_grad():
                hidden = self.model(x, attention_mask=torch.ones_like(x))[0]
            emb = hidden.cpu().numpy().astype(np.float64)
            emb /= np.linalg.norm(emb, axis=-1, keepdims=True)
            for row, i in enumerate(idx):
                weight = np.array([0.0 if t in self._special else 1.0 for t in ids[i]])
                yield sentences[i], emb[row], weight


def score_pairs(encoder: TokenEncoder, pairs: list[tuple[str, str]]) -> Iterator[tuple[int, tuple[float, float, float]]]:
    """Raw (P, R, F1) of each pair, yielded as (index into ``pairs``, scores) as candidates are encoded.

    References are encoded first and kept; candidates stream through in batches, each matched
    against its references and dropped, so memory holds the references and one batch."""
    refs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for sentence, emb, weight in encoder.encode(list(dict.fromkeys(r for _, r in pairs))):
        refs[sentence] = (emb, weight)
    by_cand: dict[str, list[int]] = {}
    for i, (c, _) in enumerate(pairs):
        by_cand.setdefault(c, []).append(i)
    for sentence, emb, weight in encoder.encode(list(by_cand)):
        for i in by_cand[sentence]:
            ref_emb, ref_weight = refs[pairs[i][1]]
            yield i, greedy_match(emb, ref_emb, weight, ref_weight)
