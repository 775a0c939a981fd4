"""Libraries' log lines and warnings kept off the command's output (``--verbose`` shows them)."""

from __future__ import annotations

import os
import sys


def quiet_libraries(verbose: bool = False) -> None:
    """Keep libraries' logs off stderr (bm25s logs DEBUG; LlamaIndex's file readers call ``logging.basicConfig
    (level=INFO)``): a root handler of ours makes later ``basicConfig`` calls no-ops and Python's last-resort
    handler unused; with ``verbose`` it prints INFO and above."""
    import logging
    import warnings

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "info" if verbose else "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    root = logging.getLogger()
    if verbose:
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.INFO)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        return
    root.addHandler(logging.NullHandler())
    for name in ("httpx", "chromadb", "sentence_transformers", "transformers", "bm25s"):
        logging.getLogger(name).setLevel(logging.ERROR)
