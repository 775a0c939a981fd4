"""A model's fast tokenizer read straight from its ``tokenizer.json`` with the ``tokenizers`` library.

``transformers.AutoTokenizer`` gives the same token ids from the same file, but importing it
imports PyTorch (about 600 MB of resident memory on the CUDA build); the ONNX Runtime backends
(embeddings and BERTScore) need only the ids, so they read the file themselves and a sweep on
ONNX never loads PyTorch (except once, in a child process, to export a model).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenizers import Tokenizer


class FastTokenizer:
    """Token ids (special tokens added, truncated at ``max_length``, never padded) of one model.

    Safe to call from several threads at once (the ONNX backends tokenize in their calls' threads):
    a ``tokenizers.Tokenizer`` is never reconfigured after it is made, since changing its truncation
    while another thread encodes with it fails (``Already borrowed``) or encodes with the other
    setting; each truncation length gets its own instance."""

    def __init__(self, model_dir: Path) -> None:
        import threading

        from tokenizers import Tokenizer

        self._json = (Path(model_dir) / "tokenizer.json").read_text(encoding="utf-8")
        self._tok = Tokenizer.from_str(self._json)
        self._tok.no_padding()
        self._tok.no_truncation()
        self._by_length: dict[int | None, Tokenizer] = {None: self._tok}
        self._lock = threading.Lock()
        config = _read(Path(model_dir) / "tokenizer_config.json")
        limit = config.get("model_max_length")
        self.model_max_length = int(limit) if isinstance(limit, (int, float)) and limit < 1e9 else None
        self.cls_id = self._special(config.get("cls_token"))
        self.sep_id = self._special(config.get("sep_token"))

    @staticmethod
    def available(model_dir: Path) -> bool:
        return (Path(model_dir) / "tokenizer.json").is_file()

    def _special(self, token) -> int | None:
        if isinstance(token, dict):  # {"content": "[CLS]", ...} in newer configs
            token = token.get("content")
        return self._tok.token_to_id(token) if isinstance(token, str) else None

    def encode(self, texts: list[str], max_length: int | None = None) -> list[tuple[list[int], list[int]]]:
        """(ids, type ids) per text."""
        return [(e.ids, e.type_ids) for e in self._for_length(max_length or None).encode_batch(list(texts))]

    def _for_length(self, max_length: int | None) -> Tokenizer:
        tok = self._by_length.get(max_length)
        if tok is None:
            assert max_length is not None  # the untruncated one (key None) is made in __init__
            from tokenizers import Tokenizer

            with self._lock:
                tok = self._by_length.get(max_length)
                if tok is None:
                    tok = Tokenizer.from_str(self._json)
                    tok.no_padding()
                    tok.enable_truncation(max_length)
                    self._by_length[max_length] = tok
        return tok


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def max_positions(model_dir: Path) -> int | None:
    """``max_position_embeddings`` of the model's ``config.json``, if it says."""
    value = _read(Path(model_dir) / "config.json").get("max_position_embeddings")
    return int(value) if isinstance(value, int) else None
