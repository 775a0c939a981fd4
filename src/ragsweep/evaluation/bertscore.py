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
    backend: str = "torch"

    @property
    def pair_key(self) -> str:
        """``unpadded-1t``: each pair scored alone, its similarities on one BLAS thread
        (``bertscore_tokens``); scores cached before, which moved with their batch or thread count, are
        not reused. ONNX backends score slightly differently: keys of their own."""
        key = f"{self.model_id}|L{self.num_layers}|unpadded-1t"
        if self.backend == "torch":
            return key
        from ragsweep.embeddings.onnx_export import export_tag

        return f"{key}|backend={self.backend}|{export_tag(self.backend)}"

    @property
    def key(self) -> str:
        return f"{self.pair_key}|{self.baseline}"


def scorer_settings(spec: BERTScoreSpec, seed: int = 0) -> ScorerSettings:
    """Resolve the backbone and layer without loading anything (used at start-up to fail early)."""
    baseline = "none" if spec.baseline == "none" else f"auto:{spec.baseline_pairs}:{seed}"
    if spec.model == "minilm":
        from ragsweep.embeddings.factory import bundled_minilm_dir

        return ScorerSettings(
            str(bundled_minilm_dir()), MINILM_ID, spec.num_layers or MINILM_LAYER, baseline, spec.backend
        )
    from bert_score.utils import model2layers

    layers = spec.num_layers or model2layers.get(spec.model)
    if layers is None:
        raise RagsweepError(
            f"scoring.bertscore.num_layers: bert-score has no tuned layer for {spec.model!r}; set num_layers"
        )
    from ragsweep.embeddings.factory import local_model_fingerprint

    return ScorerSettings(spec.model, local_model_fingerprint(spec.model) or spec.model, layers, baseline, spec.backend)


class BERTScoreRunner:
    """Cache-first BERTScore with a lazily loaded encoder (``bertscore_tokens.TokenEncoder``)."""

    def __init__(
        self, spec: BERTScoreSpec, cache_path: Path, device: str | None = None, export_root: Path | None = None
    ) -> None:
        """``export_root``: where ONNX exports are kept (default: the pair cache's directory)."""
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
        self._export_root = Path(export_root or Path(cache_path).parent)
        self.computed = 0

    # ------------------------------------------------------------------ scorer
    def _get_encoder(self):
        if self._encoder is None:
            self._encoder = load_encoder(self.spec, self._export_root, self.device)
        return self._encoder

    def _raw(self, cands: list[str], refs: list[str]) -> list[tuple[float, float, float]]:
        from ragsweep.evaluation.bertscore_tokens import score_pairs

        out: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)] * len(cands)
        for i, scores in score_pairs(self._get_encoder(), list(zip(cands, refs))):
            out[i] = scores
        return out

    def _run_blocks(self, blocks: list[list[tuple[str, str]]]):
        """Score blocks of pairs here, one after another (an executor may pass its own, e.g. Ray tasks)."""
        for i, block in enumerate(blocks):
            yield i, self._raw([c for c, _ in block], [r for _, r in block])

    # ------------------------------------------------------------------ pairs
    def lookup(self, pairs: list[tuple[str, str]]) -> tuple[dict, list]:
        """(cached scores by pair key, the distinct uncached pairs as (key, pair), references sharing candidates
        together)."""
        keys = [(_h(c), _h(r)) for c, r in pairs]
        found: dict[tuple[bytes, bytes], tuple[float, float, float]] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), 300):
            batch = unique[i : i + 300]
            # joined to the primary key, one probe per pair: an OR of (cand, ref) terms made SQLite scan every
            # cached pair of the model per batch (quadratic in the cache: 140 s of a contractnli x8 re-run)
            args = [x for kv in batch for x in kv]
            for c, r, p, rr, f in self._db.execute(lookup_sql(len(batch)), [*args, self.key]):
                found[(bytes(c), bytes(r))] = (p, rr, f)
        todo: dict[tuple[bytes, bytes], tuple[str, str]] = {}
        for k, pair in zip(keys, pairs):
            if k not in found and k not in todo:
                todo[k] = pair
        # references that share candidates together: a block encodes each of its texts once (``pair_order``)
        from ragsweep.evaluation.pair_order import clustered

        return found, clustered(list(todo.items()))

    def score(
        self, pairs: list[tuple[str, str]], progress=None, run_blocks=None, block: int = 4096
    ) -> list[tuple[float, float, float]]:
        """Raw (P, R, F) for each pair; both sides must be non-empty. Cached pairs cost nothing; the
        others are scored in blocks of ``block`` pairs by ``run_blocks`` (default: here, in turn).

        A pair's score depends on that pair alone (``bertscore_tokens``), so how the pairs are cut
        into blocks, where a block runs, or which pairs were cached, changes no value."""
        found, todo = self.lookup(pairs)
        if progress is not None:
            progress(len(found), len(found) + len(todo))
        blocks = [todo[i : i + block] for i in range(0, len(todo), block)]
        for i, scores in (run_blocks or self._run_blocks)([[pair for _, pair in b] for b in blocks]):
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO pair VALUES (?, ?, ?, ?, ?, ?)",
                    [(self.key, k[0], k[1], *sc) for (k, _), sc in zip(blocks[i], scores)],
                )
            found.update({k: sc for (k, _), sc in zip(blocks[i], scores)})
            self.computed += len(blocks[i])
            if progress is not None:
                progress(len(blocks[i]), None)
        return [found[(_h(c), _h(r))] for c, r in pairs]

    # ------------------------------------------------------------------ baseline
    def published_baseline(self) -> Baseline | None:
        """bert-score's own baseline file for this backbone and layer, if it ships one."""
        import importlib.util

        found = importlib.util.find_spec("bert_score")  # located, not imported: importing it imports PyTorch
        if found is None or not found.submodule_search_locations:
            return None
        path = Path(next(iter(found.submodule_search_locations))) / "rescale_baseline" / "en" / f"{self.model_id}.tsv"
        if not path.is_file():
            return None
        import pandas as pd

        table = pd.read_csv(path)
        row = table[table["LAYER"] == self.num_layers]
        if row.empty:
            return None
        return Baseline(
            float(row["P"].iloc[0]), float(row["R"].iloc[0]), float(row["F"].iloc[0]), "bert-score published"
        )

    def baseline(self, corpus_sentences, corpus_fingerprint: str, seed: int = 0, run_blocks=None) -> Baseline:
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
        scores = [sc for _, part in (run_blocks or self._run_blocks)([pairs]) for sc in part]
        p, r, f = (sum(s[i] for s in scores) / len(scores) for i in range(3))
        base = Baseline(p, r, f, f"corpus ({len(pairs)} random sentence pairs)")
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO baseline VALUES (?, ?, ?, ?, ?)", [key, p, r, f, base.source])
        return base

    def close(self) -> None:
        self._db.close()


def lookup_sql(n: int) -> str:
    """The cached scores of ``n`` (cand, ref) pairs (parameters: each pair's two hashes, then the model key), one
    primary-key probe per pair."""
    wanted = ", ".join(["(?, ?)"] * n)
    return (
        f"WITH wanted(cand, ref) AS (VALUES {wanted}) SELECT pair.cand, pair.ref, p, r, f FROM wanted "  # noqa: S608
        "JOIN pair ON pair.model = ? AND pair.cand = wanted.cand AND pair.ref = wanted.ref"
    )


_ENCODERS: dict[tuple, object] = {}  # one loaded encoder per settings and process (Ray workers reuse theirs)


def load_encoder(spec: BERTScoreSpec, export_root: Path, device: str | None = None):
    """The ``TokenEncoder`` of ``spec`` in this process, loaded on first use."""
    from ragsweep.embeddings.device import resolve_device, resolve_onnx_device
    from ragsweep.evaluation.bertscore_tokens import EncoderModel, TokenEncoder

    settings = scorer_settings(spec)
    key = (settings.pair_key, str(export_root), device or spec.device, spec.batch_size)
    if key not in _ENCODERS:
        try:
            _ENCODERS[key] = TokenEncoder(
                EncoderModel(settings.backbone, settings.num_layers, spec.backend, settings.model_id),
                (resolve_device if spec.backend == "torch" else resolve_onnx_device)(device or spec.device),
                spec.batch_size,
                export_root,
            )
        except OSError as exc:
            raise RagsweepError(
                f"scoring.bertscore.model: cannot load {spec.model!r} ({str(exc).splitlines()[0]}); "
                "use 'minilm' or a local path when offline"
            ) from None
    return _ENCODERS[key]


def ensure_export(spec: BERTScoreSpec, export_root: Path) -> None:
    """Export ``spec``'s encoder to ONNX now if its backend runs one and no process has exported it."""
    if spec.backend == "torch":
        return
    from ragsweep.evaluation.bertscore_tokens import backbone_export

    settings = scorer_settings(spec)
    backbone_export(settings.backbone, settings.num_layers, spec.backend, export_root, settings.model_id)


def release_encoder(spec: BERTScoreSpec) -> None:
    """Drop this process's encoders of ``spec``'s settings (the driver, once its scoring is done)."""
    key = scorer_settings(spec).pair_key
    for k in [k for k in _ENCODERS if k[0] == key]:
        del _ENCODERS[k]


def score_block(
    spec: BERTScoreSpec, export_root: Path, pairs: list[tuple[str, str]]
) -> list[tuple[float, float, float]]:
    """Raw (P, R, F) of ``pairs`` with no cache: what a Ray task computes for the driver to store."""
    from ragsweep.evaluation.bertscore_tokens import score_pairs

    out: list[tuple[float, float, float]] = [(0.0, 0.0, 0.0)] * len(pairs)
    for i, scores in score_pairs(load_encoder(spec, export_root), pairs):
        out[i] = scores
    return out


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
        return {
            k: nan
            for k in (
                "bertscore_p",
                "bertscore_r",
                "bertscore_f1",
                "bertscore_p_rescaled",
                "bertscore_r_rescaled",
                "bertscore_f1_rescaled",
            )
        }
    p, r, f = raw
    return {
        "bertscore_p": p,
        "bertscore_r": r,
        "bertscore_f1": f,
        "bertscore_p_rescaled": rescale(p, base.p),
        "bertscore_r_rescaled": rescale(r, base.r),
        "bertscore_f1_rescaled": rescale(f, base.f),
    }
