"""A bounded pool of pipeline workers: ``workers`` threads, each answering with a pipeline of its own.

One pipeline answered every question on one thread, so 16 questions in flight waited behind each other even where
answering waits on an LLM server that computes many at once (BENCHMARKS "Serving the chosen pipeline under load").
A pipeline is not shared between threads: its retrieval memo is emptied after every question (``ask_many``), its
models and rerankers are built on first use, its counters are plain integers. So the pool holds the given pipeline
and ``workers - 1`` twins (``LivePipeline.twin``: the same configuration over the same cache, with its own SQLite
connections, models, memos and LLM engine), made when the pool is (a twin that cannot open fails before anything
is served), and each worker thread takes one for good when it starts: a pipeline only ever answers on its thread.

What twins still share is read-only once open, or guarded where it is written: the spec, the configuration and
the dataset (its lazily built indexes come out the same whoever builds them); Chroma's system for one path (its
client registry is reference-counted under a lock; a twin reads its collection at open and its vectors once, then
searches its own copy, ``retrievers.exact_vectors``); the cache files (SQLite in WAL mode; a vector computed by two
twins at once is the same bits, ``embeddings.batching``; an ONNX export is made under a file lock); the pure
``lru_cache`` memos of ``pipelines.memos``; the process's trace writer (``tracing``: started by the first pipeline,
kept by its twins). An LLM call's single flight is an engine's: a new question asked of two twins at once is sent
twice, and a server that does not answer a request the same way twice (temperature above 0) may answer it twice
differently, where one pipeline would have sent it once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class PipelinePool:
    """``pipeline`` (closing it stays its caller's) and ``workers - 1`` twins of it, one per worker thread; a
    question submitted goes to any free worker, else waits for the first one free."""

    def __init__(self, pipeline: Any, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = workers
        self.pipelines = [pipeline]
        try:
            while len(self.pipelines) < workers:
                self.pipelines.append(pipeline.twin())
        except BaseException:
            self._close_twins()
            raise
        self._unbound = list(self.pipelines)
        self._lock = threading.Lock()
        self._own = threading.local()
        # a ThreadPoolExecutor starts a thread only while none is idle, at most ``workers``, and keeps each until
        # shutdown: ``_bind`` runs once per thread and never finds the list empty
        self._threads = ThreadPoolExecutor(workers, thread_name_prefix="ragsweep-pipeline", initializer=self._bind)
        self._closed = False

    def _bind(self) -> None:
        with self._lock:
            self._own.pipeline = self._unbound.pop()

    def _run(self, work: Callable[[Any], T]) -> T:
        return work(self._own.pipeline)

    def submit(self, work: Callable[[Any], T]) -> Future[T]:
        """``work(pipeline)`` on a free worker, with that worker's own pipeline."""
        return self._threads.submit(self._run, work)

    def close(self) -> None:
        """Let the questions being answered finish, stop the threads, then close the twins, the last made first
        (the given pipeline may own the cache's folder: its caller closes it after). Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._threads.shutdown(wait=True)
        self._close_twins()

    def _close_twins(self) -> None:
        failed: BaseException | None = None
        while len(self.pipelines) > 1:
            try:
                self.pipelines.pop().close()
            except Exception as exc:  # noqa: BLE001 - the other twins are closed all the same; the first is raised
                failed = failed or exc
        if failed is not None:
            raise failed
