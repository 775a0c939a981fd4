"""BERTScore (Zhang et al. 2020, "BERTScore: Evaluating Text Generation with BERT", ICLR).

One scorer per sweep, loaded only when a pair is missing from the persistent pair cache, and each
distinct (candidate, reference) pair scored once across all configurations and runs.

Rescaling follows bert-score: ``(raw - b) / (1 - b)`` with ``b`` the mean score of unrelated
sentence pairs at the same layer. bert-score publishes ``b`` for some backbones (Common Crawl
sentences); for others, such as the bundled all-MiniLM-L6-v2, ``b`` is computed the same way from
random sentence pairs of the corpus being swept and cached.

The default backbone is the bundled all-MiniLM-L6-v2 at layer 6, its last layer: bert-score has
no tuned layer for it, and the last layer is the one sentence-transformers trained for semantic
similarity.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
from dataclasses import dataclass
from pathlib import Path

from ragsweep.config import BERTScoreSpec
from ragsweep.errors import RagsweepError

MINILM_LAYER = 6
MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True)
class Baseline:
    p: float
    r: float
    f: float
    source: str  # "bert-score published", "corpus (N pairs)" or "none"


def _h(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


def rescale(value: float, base: float) -> float:
    """bert-score's baseline rescaling: 0 is as similar as unrelated text, 1 is identical."""
    return (value - base) / (1.0 - base)


@dataclass(frozen=True)
class ScorerSettings:
    """What determines a BERTScore value: backbone, layer, and how the baseline is made."""

    backbone: str  # what bert-score loads (a path or hub id)
    model_id: str  # a stable name for caches and the manifest
    num_layers: int
    baseline: str

    @property
    def pair_key(self) -> str:
        """``unpadded``: each pair scored alone (``bertscore_tokens``); scores cached before, which
        moved with their batch, are not reused."""
        return f"{self.model_id}|L{self.num_layers}|unpadded"

    @property
    def key(self) -> str:
        return f"{self.pair_key}|{self.baseline}"


def scorer_settings(spec: BERTScoreSpec, seed: int = 0) -> ScorerSettings:
    """Resolve the backbone and layer without loading anything (used at start-up to fail early)."""
    baseline = "none" if spec.baseline == "none" else f"auto:{spec.baseline_pairs}:{seed}"
    if spec.model == "minilm":
        from ragsweep.embeddings.factory import bundled_minilm_dir

        return ScorerSettings(str(bundled_minilm_dir()), MINILM_ID, spec.num_layers or MINILM_LAYER, baseline)
    from bert_score.utils import model2layers

    layers = spec.num_layers or model2layers.get(spec.model)
    if layers is None:
        raise RagsweepError(
            f"scoring.bertscore.num_layers: bert-score has no tuned layer for {spec.model!r}; set num_layers"
        )
    from ragsweep.embeddings.factory import local_model_fingerprint

    return ScorerSettings(spec.model, local_model_fingerprint(spec.model) or spec.model, layers, baseline)


class BERTScoreRunner:
    """Cache-first BERTScore with a lazily loaded encoder (``bertscore_tokens.TokenEncoder``)."""

    def __init__(self, spec: BERTScoreSpec, cache_path: Path, device: str | None = None) -> None:
        self.spec = spec
        self.device = device or spec.device  # None: resolved when the scorer is built (GPU when there is one)
        settings = scorer_settings(spec)
        self.backbone, self.model_id, self.num_layers = settings.backbone, settings.model_id, settings.num_layers
        self.key = settings.pair_key
        from ragsweep.sqlite_store import open_store

        self._db = open_store(
            cache_path,
            "CREATE TABLE IF NOT EXISTS pair (model TEXT, cand BLOB, ref BLOB, p REAL, r REAL, f REAL,"
            " PRIMARY KEY (model, cand, ref)) WITHOUT ROWID;"
            "CREATE TABLE IF NOT EXISTS baseline (key TEXT PRIMARY KEY, p REAL, r REAL, f REAL, source TEXT);",
        )
        self._encoder = None
        self.computed = 0

    # ------------------------------------------------------------------ scorer
    def _get_encoder(self):
        if self._encoder is None:
            from ragsweep.embeddings.device import resolve_device
            from ragsweep.evaluation.bertscore_tokens import TokenEncoder

            try:
                self._encoder = TokenEncoder(self.backbone, self.num_layers, resolve_device(self.device),
                                             self.spec.batch_size)
            except OSError as exc:
                raise RagsweepError(
                    f"scoring.bertscore.model: cannot load {self.spec.model!r} ({str(exc).splitlines()[0]}); "
                    "use 'minilm' or a local path when offline"
                ) from None
        return self._encoder

    def _raw(self, cands: list[str], refs: list[str]) -> list[tuple[float, float, float]]:
        from ragsweep.evaluation.bertscore_tokens import score_pairs

        out: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)] * len(cands)
        for i, scores in score_pairs(self._get_encoder(), list(zip(cands, refs))):
            out[i] = scores
        return out

    # ------------------------------------------------------------------ pairs
    def score(self, pairs: list[tuple[str, str]], progress=None, chunk: int = 4096) -> list[tuple[float, float, float]]:
        """Raw (P, R, F) for each pair; both sides must be non-empty. Cached pairs cost nothing.

        A pair's score depends on that pair alone (``bertscore_tokens``), so how the pairs are
        chunked here, or which were cached, changes no value."""
        keys = [(_h(c), _h(r)) for c, r in pairs]
        found: dict[tuple[bytes, bytes], tuple[float, float, float]] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), 300):
            batch = unique[i : i + 300]
            where = " OR ".join(["(cand = ? AND ref = ?)"] * len(batch))
            args = [x for kv in batch for x in kv]
            for c, r, p, rr, f in self._db.execute(
                f"SELECT cand, ref, p, r, f FROM pair WHERE model = ? AND ({where})", [self.key, *args]
            ):
                found[(bytes(c), bytes(r))] = (p, rr, f)
        todo: dict[tuple[bytes, bytes], tuple[str, str]] = {}
        for k, pair in zip(keys, pairs):
            if k not in found and k not in todo:
                todo[k] = pair
        if progress is not None:
            progress(len(unique) - len(todo), len(unique))
        # grouped by reference: a chunk encodes each of its references once
        items = sorted(todo.items(), key=lambda kv: (kv[1][1], kv[1][0]))
        for i in range(0, len(items), chunk):
            batch = items[i : i + chunk]
            scores = self._raw([c for _, (c, _) in batch], [r for _, (_, r) in batch])
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO pair VALUES (?, ?, ?, ?, ?, ?)",
                    [(self.key, k[0], k[1], *s) for (k, _), s in zip(batch, scores)],
                )
            found.update({k: s for (k, _), s in zip(batch, scores)})
            self.computed += len(batch)
            if progress is not None:
                progress(len(batch), None)
        return [found[k] for k in keys]

    # ------------------------------------------------------------------ baseline
    def published_baseline(self) -> Baseline | None:
        """bert-score's own baseline file for this backbone and layer, if it ships one."""
        import bert_score

        path = Path(os.path.dirname(bert_score.__file__)) / "rescale_baseline" / "en" / f"{self.model_id}.tsv"
        if not path.is_file():
            return None
        import pandas as pd

        table = pd.read_csv(path)
        row = table[table["LAYER"] == self.num_layers]
        if row.empty:
            return None
        return Baseline(float(row["P"].iloc[0]), float(row["R"].iloc[0]), float(row["F"].iloc[0]),
                        "bert-score published")

    def baseline(self, corpus_sentences, corpus_fingerprint: str, seed: int = 0) -> Baseline:
        """Published baseline when available, else mean scores of random corpus sentence pairs (cached).

        ``corpus_sentences`` is a list or a callable returning one, called only when a corpus
        baseline has to be computed."""
        if self.spec.baseline == "none":
            return Baseline(0.0, 0.0, 0.0, "none")
        pub = self.published_baseline()
        if pub is not None:
            return pub
        n = self.spec.baseline_pairs
        key = f"{self.key}|{corpus_fingerprint}|{n}|{seed}"
        row = self._db.execute("SELECT p, r, f, source FROM baseline WHERE key = ?", [key]).fetchone()
        if row is not None:
            return Baseline(*row)
        if callable(corpus_sentences):
            corpus_sentences = corpus_sentences()
        pairs = sample_unrelated_pairs(corpus_sentences, n, seed)
        if not pairs:
            return Baseline(0.0, 0.0, 0.0, "none (corpus has too few sentences)")
        scores = self._raw([a for a, _ in pairs], [b for _, b in pairs])
        p, r, f = (sum(s[i] for s in scores) / len(scores) for i in range(3))
        base = Baseline(p, r, f, f"corpus ({len(pairs)} random sentence pairs)")
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO baseline VALUES (?, ?, ?, ?, ?)", [key, p, r, f, base.source])
        return base

    def close(self) -> None:
        self._db.close()


def sample_unrelated_pairs(sentences: list[str], n: int, seed: int) -> list[tuple[str, str]]:
    """``n`` random pairs of distinct corpus sentences (5 to 60 words), as bert-score samples them."""
    pool = sorted({s for s in sentences if 5 <= len(s.split()) <= 60})
    if len(pool) < 2:
        return []
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b = rng.sample(pool, 2)
        out.append((a, b))
    return out


def score_fields(raw: tuple[float, float, float] | None, base: Baseline) -> dict[str, float]:
    """Record fields for one answer: raw and rescaled P, R, F (NaN when unmeasured)."""
    if raw is None:
        nan = math.nan
        return {k: nan for k in ("bertscore_p", "bertscore_r", "bertscore_f1",
                                 "bertscore_p_rescaled", "bertscore_r_rescaled", "bertscore_f1_rescaled")}
    p, r, f = raw
    return {
        "bertscore_p": p, "bertscore_r": r, "bertscore_f1": f,
        "bertscore_p_rescaled": rescale(p, base.p),
        "bertscore_r_rescaled": rescale(r, base.r),
        "bertscore_f1_rescaled": rescale(f, base.f),
    }
