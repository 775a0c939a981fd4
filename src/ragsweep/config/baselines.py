"""Reference baselines a sweep scores beside its configurations and never chooses (``baselines:``): how good the
verdict's pick is against answering without retrieval, with perfect retrieval, and with the whole documents."""

from __future__ import annotations

from typing import Literal

BaselineName = Literal["no_retrieval", "oracle", "full_document"]
BASELINE_HELP = (
    "reference points scored like configurations and never chosen: no_retrieval (no context), oracle (the gold "
    "evidence alone), full_document (the gold documents, cut to the context window)"
)
