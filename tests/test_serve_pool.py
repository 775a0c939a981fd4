"""``ragsweep serve``'s pool of pipeline workers: answers under concurrency are the answers one at a time, questions
really run in parallel (a barrier only they can pass together, never a clock), the queue limit counts every
worker's questions, and every twin is closed when the server stops, before the pipeline it was made from."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from conftest import describe
from served_app import running

import ragsweep
from ragsweep.errors import RagsweepError

TIMED = ("retrieval_ms", "generation_ms")  # how long answering took: the one part of a reply that may differ


class _Shared:
    """What a pipeline double and its twins share: the twins made, the names closed, the questions inside
    ``ask`` now, an optional barrier every question waits at and a gate it waits for."""

    def __init__(self, barrier: int = 0, gated: bool = False, fail_twin: int = 0) -> None:
        self.made: list[_Twinned] = []
        self.closed: list[str] = []
        self.inside = 0
        self.lock = threading.Lock()
        self.barrier = threading.Barrier(barrier) if barrier else None
        self.gate = threading.Event()
        if not gated:
            self.gate.set()
        self.fail_twin = fail_twin


class _Twinned:
    """A pipeline double with ``twin()``: it answers with its name and records the threads it ran on."""

    config_id = "double"

    def __init__(self, shared: _Shared, name: str = "pipeline") -> None:
        self.shared, self.name, self.threads = shared, name, set[int]()

    def twin(self) -> _Twinned:
        number = len(self.shared.made) + 1
        if number == self.shared.fail_twin:
            raise RagsweepError(f"twin {number} cannot open")
        made = _Twinned(self.shared, f"twin-{number}")
        self.shared.made.append(made)
        return made

    def ask(self, question: str, answer: bool = True, stream=None) -> dict:
        self.threads.add(threading.get_ident())
        with self.shared.lock:
            self.shared.inside += 1
        try:
            if self.shared.barrier is not None:
                self.shared.barrier.wait(60)  # passed only by as many questions answered at once
            assert self.shared.gate.wait(60)
            return {"answer": f"{self.name}: {question}", "sources": []}
        finally:
            with self.shared.lock:
                self.shared.inside -= 1

    def close(self) -> None:
        self.shared.closed.append(self.name)


def _until(condition, what: str) -> None:
    """Wait for ``condition()`` (a state the test brings about, not a duration); a minute at most."""
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.01)


def test_questions_run_in_parallel_each_worker_on_its_own_pipeline():
    """Four questions pass a barrier of four only when the pool answers them at once; each pipeline (the given one
    and its three twins) stays on one thread of its own."""
    from ragsweep.serve import make_app

    shared = _Shared(barrier=4)
    pipeline = _Twinned(shared)
    with running(make_app(pipeline, workers=4)) as url, ThreadPoolExecutor(max_workers=8) as clients:
        replies = list(
            clients.map(lambda i: httpx.post(f"{url}/query", json={"question": f"q{i}"}, timeout=120), range(8))
        )
    assert [r.status_code for r in replies] == [200] * 8
    everyone = [pipeline, *shared.made]
    assert {r.json()["answer"].split(":")[0] for r in replies} == {p.name for p in everyone}
    assert [len(p.threads) for p in everyone] == [1, 1, 1, 1]
    assert len(set().union(*(p.threads for p in everyone))) == 4


def test_the_queue_limit_counts_the_questions_of_every_worker():
    """Two workers answering and one question waiting fill a queue of three: the fourth gets 503 with Retry-After,
    the three are answered once the gate opens."""
    from ragsweep.serve import make_app

    shared = _Shared(gated=True)
    with running(make_app(_Twinned(shared), max_queue=3, workers=2)) as url, ThreadPoolExecutor(3) as clients:
        asked = [clients.submit(httpx.post, f"{url}/query", json={"question": "one"}, timeout=60)]
        asked.append(clients.submit(httpx.post, f"{url}/query", json={"question": "two"}, timeout=60))
        _until(lambda: shared.inside == 2, "both workers answering")
        asked.append(clients.submit(httpx.post, f"{url}/query", json={"question": "three"}, timeout=60))
        _until(lambda: httpx.get(f"{url}/health").json()["queued"] == 3, "a third question waiting")
        assert shared.inside == 2  # two workers: the third waits for one of them
        refused = httpx.post(f"{url}/query", json={"question": "four"}, timeout=10)
        assert refused.status_code == 503 and int(refused.headers["retry-after"]) >= 1
        assert "the most this server queues" in refused.json()["error"]["message"]
        shared.gate.set()
        answers = sorted(f.result().json()["answer"].split(": ")[1] for f in asked)
        assert answers == ["one", "three", "two"]
        assert httpx.get(f"{url}/health").json()["queued"] == 0


def test_retry_after_divides_the_queue_across_the_workers():
    from ragsweep.serve.limits import AnswerQueue, Busy

    for workers, expected in ((1, 12), (4, 3)):
        queue = AnswerQueue(limit=4, workers=workers)
        queue.admit()
        queue.done(3.0)  # the mean answering time: 3 s
        for _ in range(4):
            queue.admit()
        with pytest.raises(Busy) as busy:
            queue.admit()
        assert busy.value.retry_after == expected  # 4 waiting x 3 s / workers


def test_the_server_stopping_closes_every_twin_last_first_and_leaves_the_pipeline():
    from ragsweep.serve import make_app

    shared = _Shared()
    pipeline = _Twinned(shared)
    app = make_app(pipeline, workers=3)
    with running(app) as url:
        assert httpx.post(f"{url}/query", json={"question": "x"}, timeout=30).status_code == 200
        assert shared.closed == []
    assert shared.closed == ["twin-2", "twin-1"]  # the given pipeline is its caller's to close, after them
    app.state.pool.close()  # again (serve's own finally): nothing more
    assert shared.closed == ["twin-2", "twin-1"]


def test_a_twin_that_cannot_open_closes_those_made_and_says_why():
    from ragsweep.serve import make_app

    shared = _Shared(fail_twin=3)
    with pytest.raises(RagsweepError, match="twin 3 cannot open"):
        make_app(_Twinned(shared), workers=4)
    assert shared.closed == ["twin-2", "twin-1"]


@pytest.fixture(scope="module")
def fusion_folder(base_run, run_cli, tmp_path_factory):
    """An exported fusion configuration (BM25 and MiniLM on Chroma) of the reference sweep."""
    cid = "sentence256-minilm-fusion-k5"
    folder = tmp_path_factory.mktemp("pool") / cid
    proc = run_cli("export", base_run.run_dir, cid, "--out", folder)
    assert proc.returncode == 0, describe(proc)
    return folder


def _answers(folder, questions: list[str], workers: int, in_flight: int) -> list[dict]:
    """Each question's reply from a newly loaded copy of ``folder`` (no question vector computed before) served by
    ``workers``, ``in_flight`` requests at a time; without the timings."""
    from ragsweep.serve import make_app

    with ragsweep.load_pipeline(folder) as pipeline:
        with running(make_app(pipeline, workers=workers)) as url, ThreadPoolExecutor(in_flight) as clients:
            replies = list(
                clients.map(lambda q: httpx.post(f"{url}/query", json={"question": q}, timeout=120), questions)
            )
    assert [r.status_code for r in replies] == [200] * len(questions), [r.text for r in replies if r.status_code != 200]
    return [{k: v for k, v in r.json().items() if k not in TIMED} for r in replies]


def test_answers_under_concurrency_are_the_answers_one_at_a_time(fusion_folder):
    """Every demo question (most never embedded before), some twice at once, through four workers at sixteen in
    flight: the same answers, sources, offsets, scores, texts and order as one question at a time on one worker.
    Each run embeds its questions anew (a fresh copy of the folder), so the vectors too are computed concurrently
    against alone."""
    from ragsweep.datasets.demo import load_demo_corpus, load_demo_questions

    questions = [q.question for q in load_demo_questions(load_demo_corpus())[0]]
    questions = questions + questions[:24]  # asked again while the first asking may still be under way
    together = _answers(fusion_folder, questions, workers=4, in_flight=16)
    alone = _answers(fusion_folder, questions, workers=1, in_flight=1)
    assert len(questions) > 100 and all(a["sources"] for a in alone)
    for question, got, expected in zip(questions, together, alone):
        assert got == expected, question
