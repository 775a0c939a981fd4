"""What a sentence-transformers directory says happens after the transformer: pooling, normalisation, length.

The ONNX backend runs only the transformer; the rest must be done exactly as the model's own
``modules.json``, ``1_Pooling/config.json`` and ``sentence_bert_config.json`` say, or its vectors
would not match the PyTorch backend's. A model with any other module (Dense, LayerNorm, a
router, static embeddings) is refused rather than approximated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from ragsweep.errors import RagsweepError

# ``pooling_mode_*`` booleans of older configs -> the mode names sentence-transformers uses now.
_LEGACY_MODES = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
POOLING_MODES = ("cls", "mean", "max", "mean_sqrt_len_tokens")


@dataclass(frozen=True)
class SentenceLayout:
    """The transformer's directory and what follows it, read from a sentence-transformers model."""

    transformer_dir: Path
    pooling: tuple[str, ...]  # concatenated in this order, as sentence-transformers does
    include_prompt: bool
    normalize: bool
    max_seq_length: int | None
    do_lower_case: bool


def _read_json(path: Path) -> dict | list:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RagsweepError(f"{path}: cannot read ({exc}); is this a sentence-transformers model directory?") from None


def read_layout(model_dir: Path, field: str) -> SentenceLayout:
    """The layout of ``model_dir``; ``field`` names the spec field in errors.

    A directory without ``modules.json`` is a plain transformer, which sentence-transformers wraps
    with mean pooling; so does this.
    """
    modules_file = model_dir / "modules.json"
    transformer, pooling_dir, normalize = model_dir, None, False
    if modules_file.is_file():
        kinds = []
        for module in _read_json(modules_file):
            kind = str(module.get("type", "")).rsplit(".", 1)[-1]
            kinds.append(kind)
            if kind == "Transformer":
                transformer = model_dir / module.get("path", "")
            elif kind == "Pooling":
                pooling_dir = model_dir / module.get("path", "")
            elif kind == "Normalize":
                normalize = True
        if kinds[:1] != ["Transformer"] or any(k not in ("Pooling", "Normalize") for k in kinds[1:]):
            raise RagsweepError(
                f"{field}: the ONNX backend runs Transformer -> Pooling -> Normalize models; {model_dir.name} has "
                f"modules {kinds}; use backend: torch"
            )
    pooling, include_prompt = ("mean",), True
    if pooling_dir is not None:
        config = cast(dict[str, Any], _read_json(pooling_dir / "config.json"))  # a JSON object
        mode = config.get("pooling_mode") or [m for key, m in _LEGACY_MODES.items() if config.get(key)]
        pooling = (mode,) if isinstance(mode, str) else tuple(mode)
        include_prompt = bool(config.get("include_prompt", True))
        unsupported = [m for m in pooling if m not in POOLING_MODES]
        if unsupported or not pooling:
            raise RagsweepError(
                f"{field}: the ONNX backend pools by {', '.join(POOLING_MODES)}; {model_dir.name} pools by "
                f"{unsupported or 'nothing'}; use backend: torch"
            )
    st_config = transformer / "sentence_bert_config.json"
    settings = cast(dict[str, Any], _read_json(st_config)) if st_config.is_file() else {}  # a JSON object
    return SentenceLayout(
        transformer,
        pooling,
        include_prompt,
        normalize,
        settings.get("max_seq_length"),
        bool(settings.get("do_lower_case", False)),
    )


def pool(hidden: np.ndarray, mask: np.ndarray, modes: tuple[str, ...]) -> np.ndarray:
    """Sentence vectors from token vectors ``hidden`` (batch, tokens, dim) over the tokens ``mask`` keeps,
    with sentence-transformers' formulas (its ``Pooling`` module), modes concatenated."""
    weights = mask[..., None].astype(hidden.dtype)
    out = []
    for mode in modes:
        if mode == "cls":  # the first kept token (left padding moves it)
            out.append(hidden[np.arange(hidden.shape[0]), mask.argmax(axis=1)])
        elif mode == "max":
            out.append(np.where(weights > 0, hidden, -np.inf).max(axis=1))
        else:
            counts = np.clip(weights.sum(axis=1), 1e-9, None)
            total = (hidden * weights).sum(axis=1)
            out.append(total / (counts if mode == "mean" else np.sqrt(counts)))
    return np.concatenate(out, axis=1) if len(out) > 1 else out[0]


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Unit length rows (``torch.nn.functional.normalize``: the norm is clamped at 1e-12)."""
    return vectors / np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
