"""Late interaction on a bi-encoder's token embeddings: MaxSim (Khattab & Zaharia 2020, "ColBERT:
Efficient and Effective Passage Search via Contextualized Late Interaction over BERT", SIGIR).

score(q, d) = mean over the question's tokens of the best cosine with any of the text's tokens.
Offline with the bundled all-MiniLM-L6-v2, which was trained for mean pooling, not for MaxSim: it
is a zero-shot use of its token vectors, a cheap second opinion on the first-stage order whose
effect on a corpus BENCHMARKS.md measures rather than assumes.

Why the details:
- special tokens ([CLS], [SEP]) and punctuation-only tokens take no part (ColBERT drops
  punctuation on the document side; MiniLM has no query/document markers to give them meaning);
- a text longer than the encoder's window is read in consecutive windows of ``max_tokens``, so the
  end of a long chunk counts as much as its start;
- windows are encoded only with windows of the same token count (no padding) and every vector is
  therefore a function of its own text (``embeddings.batching``): a score does not depend on which
  other candidates came with it, on cache state or on the batch size.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from ragsweep.rerankers.base import PointwiseReranker

BATCH_ROWS = 16  # windows per forward pass
TOKEN_BUDGET = 400_000  # token vectors kept per process (about 600 MB for a 384-dim model)


def build(spec, llm=None) -> "LateInteractionReranker":
    return LateInteractionReranker(spec.model, spec.max_tokens, spec.device)


class LateInteractionReranker(PointwiseReranker):
    def __init__(self, model: str, max_tokens: int = 256, device: str | None = None) -> None:
        super().__init__()
        from transformers import AutoModel, AutoTokenizer

        from ragsweep.embeddings.device import resolve_device
        from ragsweep.embeddings.factory import resolve_hf_model

        path = resolve_hf_model(model)
        self.device = resolve_device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path).to(self.device).eval()
        self.window = max_tokens - 2  # [CLS] and [SEP] around each window
        self._vectors: OrderedDict[str, Any] = OrderedDict()  # text -> (n, dim) unit token vectors
        self._held = 0

    def _score_texts(self, query: str, texts: list[str]) -> list[float]:
        q = self._token_vectors([query])[query]
        docs = self._token_vectors(texts)
        out = []
        for t in texts:
            d = docs[t]
            out.append(float((q @ d.T).max(dim=1).values.mean()) if len(q) and len(d) else 0.0)
        return out

    def _token_vectors(self, texts: list[str]) -> dict:
        """Unit token vectors of each text (kept up to ``TOKEN_BUDGET`` vectors, least recently used out)."""
        import torch

        from ragsweep.embeddings.batching import MIN_TOKENS, equal_key_batches

        out = {t: self._vectors[t] for t in texts if t in self._vectors}
        for t in out:
            self._vectors.move_to_end(t)
        todo = [t for t in dict.fromkeys(texts) if t not in out]
        windows, owner, keep = [], [], []
        for t in todo:
            ids = self.tokenizer(t, add_special_tokens=False, truncation=False, verbose=False)["input_ids"]
            for start in range(0, max(len(ids), 1), self.window):
                piece = ids[start : start + self.window]
                windows.append([self.tokenizer.cls_token_id, *piece, self.tokenizer.sep_token_id])
                owner.append(t)
                keep.append([_is_word(tok) for tok in self.tokenizer.convert_ids_to_tokens(piece)])
        parts: dict[str, list] = {t: [] for t in todo}
        vectors: list = [None] * len(windows)
        with torch.inference_mode():
            for batch in equal_key_batches([len(w) for w in windows], BATCH_ROWS, max_tokens=None):
                rows = [windows[i] for i in batch]
                # copies of the first window up to MIN_TOKENS rows x tokens: the CPU kernels then give
                # every row the value it has in any batch (embeddings.batching.filled)
                rows += [rows[0]] * max(0, -(-MIN_TOKENS // len(rows[0])) - len(rows))
                ids = torch.tensor(rows, device=self.device)
                hidden = self.model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state
                for row, i in enumerate(batch):
                    vectors[i] = hidden[row, 1:-1].float().cpu()
        for i, t in enumerate(owner):
            mask = torch.tensor(keep[i], dtype=torch.bool)
            parts[t].append(vectors[i][mask] if len(keep[i]) else vectors[i][:0])
        for t in todo:
            v = torch.nn.functional.normalize(torch.cat(parts[t]), dim=-1)
            out[t] = v
            self._remember(t, v)
        return out

    def _remember(self, text: str, vectors) -> None:
        self._vectors[text] = vectors
        self._held += len(vectors)
        while self._held > TOKEN_BUDGET and len(self._vectors) > 1:
            _, old = self._vectors.popitem(last=False)
            self._held -= len(old)


def _is_word(token: str) -> bool:
    """A word piece with a letter or digit in it (punctuation-only pieces take no part in MaxSim)."""
    return any(ch.isalnum() for ch in token)
