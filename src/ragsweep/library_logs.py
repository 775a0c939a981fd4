"""Libraries' log lines and warnings kept off the command's output (``--verbose`` shows them)."""

from __future__ import annotations

import logging
import os
import sys


class _Stderr(logging.StreamHandler):
    """Writes to ``sys.stderr`` as it is when a line is written (an in-process CLI run may capture it)."""

    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def redact_record(record: logging.LogRecord) -> bool:
    """A logging filter: the record's message with every URL's credentials redacted (``ragsweep.redact``)."""
    from ragsweep.redact import redact_text

    try:
        message = record.getMessage()
    except Exception:  # noqa: BLE001 - a malformed record is logging's to report, as it would be without us
        return True
    clean = redact_text(message)
    if clean != message:
        record.msg, record.args = clean, None
    return True


def quiet_libraries(verbose: bool = False) -> None:
    """Keep libraries' logs off stderr (bm25s logs DEBUG; LlamaIndex's file readers call ``logging.basicConfig
    (level=INFO)``): a root handler of ours makes later ``basicConfig`` calls no-ops and Python's last-resort
    handler unused; with ``verbose`` it prints INFO and above."""
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
        handler.addFilter(redact_record)  # httpx logs every request's URL, an LLM base_url's key with it
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        return
    root.addHandler(logging.NullHandler())
    ours = logging.getLogger("ragsweep")  # its own warnings (a folder opened with --allow-modified), once
    if not any(isinstance(h, _Stderr) for h in ours.handlers):
        handler = _Stderr()
        handler.addFilter(redact_record)
        handler.setLevel(logging.WARNING)
        handler.setFormatter(logging.Formatter("warning: %(message)s"))
        ours.addHandler(handler)
    for name in ("httpx", "chromadb", "sentence_transformers", "transformers", "bm25s"):
        logging.getLogger(name).setLevel(logging.ERROR)
