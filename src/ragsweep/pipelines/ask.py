"""``ragsweep ask``: one free-form question through one configuration, with the sweep's stages and caches."""

from __future__ import annotations

from pathlib import Path

from ragsweep.cache_dir import DEFAULT_CACHE, CacheDir
from ragsweep.config import SweepSpec
from ragsweep.datasets.types import Dataset, Question
from ragsweep.pipelines.answer_record import AnswerRecord
from ragsweep.pipelines.grid import Configuration
from ragsweep.pipelines.live import Chosen


def answer_question(
    spec: SweepSpec,
    config: Configuration,
    dataset: Dataset,
    question: str | Question,
    cache_dir: Path | None = None,
    chosen: Chosen = Chosen(),
) -> AnswerRecord:
    """The answer payload (sources with their text) of ``question`` (a text, or a ``Question`` with the conversation
    before it) under ``config``, reusing the caches
    (it may build a missing index, so it holds the cache's lock while it runs); ``chosen``: the fusion weights
    and abstention threshold the run chose on its validation questions."""
    from ragsweep.pipelines.live import LivePipeline
    from ragsweep.pipelines.lock import writer_locks

    cache = CacheDir(Path(cache_dir or spec.cache_dir or DEFAULT_CACHE))
    with writer_locks(spec, None, cache.root):
        with LivePipeline(spec, config, dataset, cache, chosen=chosen) as pipeline:
            if isinstance(question, Question):
                return pipeline.ask(question.question, history=question.history)
            return pipeline.ask(question)
