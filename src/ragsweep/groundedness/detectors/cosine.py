"""Embedding cosine: the answer's highest cosine similarity with any sentence of the contexts.

The cheapest semantic detector of the groundedness comparison this follows (Thomson Reuters' legal-QA
study: cosine similarity, QuIP, HHEM, NLI, Lynx, GPT-4o, claim-level checks): paraphrase-tolerant, but
a fluent answer on the right topic scores high whether or not the contexts state it. The model is the
default embedding (MiniLM, bundled); per-item time includes embedding the answer and the sentences.
"""

from __future__ import annotations

import time

import numpy as np

from ragsweep.groundedness.detectors.base import Detector, Scored


def context_sentences(contexts) -> list[str]:
    from ragsweep.datasets.sentences import sentences

    out = [s.text for i, c in enumerate(contexts) for s in sentences(str(i), c) if len(s.text.split()) >= 3]
    return out or [c for c in contexts if c.strip()]


def max_cosine(answer_vec: np.ndarray, sentence_vecs: np.ndarray) -> float:
    a = answer_vec / (np.linalg.norm(answer_vec) or 1.0)
    s = sentence_vecs / np.maximum(np.linalg.norm(sentence_vecs, axis=1, keepdims=True), 1e-12)
    return float((s @ a).max())


class Cosine(Detector):
    name = "cosine"

    def __init__(self, embed=None) -> None:
        """``embed``: a LlamaIndex embedding; default: the bundled MiniLM, loaded without the vector cache so
        the time per item is the model's."""
        self._embed = embed

    def _model(self):
        if self._embed is None:
            from ragsweep.config import HFEmbeddingSpec
            from ragsweep.embeddings.factory import load_model

            self._embed = load_model(HFEmbeddingSpec())
        return self._embed

    def score_all(self, items) -> list[Scored]:
        model = self._model()
        model.get_text_embedding_batch(["warm up"])  # the first call pays one-off set-up, not an item
        out = []
        for it in items:
            t0 = time.perf_counter()
            sents = context_sentences(it.contexts)
            vecs = np.asarray(model.get_text_embedding_batch([it.answer, *sents]), dtype=float)
            s = max_cosine(vecs[0], vecs[1:])
            out.append(Scored(s, (time.perf_counter() - t0) * 1000, 0.0))
        return out
