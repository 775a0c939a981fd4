"""What a run says and does when its LLM endpoint is not there, through the CLI against the scripted server.

An endpoint that refuses connections stops its calls after a few in a row, in one line naming it, instead of
retrying every call for a minute; the same command, once a server answers on that address, goes on where the
first stopped and completes.
"""

from __future__ import annotations

import socket

from conftest import BASE_LIMIT, SENTENCE256, describe
from fake_openai import FakeOpenAI

LIMIT = BASE_LIMIT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_endpoint_stops_in_one_line_and_the_same_command_resumes(make_spec, shared_cache, run_cli):
    port = _free_port()  # nothing listens there (yet)
    url = f"http://127.0.0.1:{port}/v1"
    spec = make_spec(
        "unreachable",
        splitters=[SENTENCE256],
        retrievers=[{"kind": "bm25"}],
        top_k=[3],
        generator={"kind": "llm"},
        llm={"model": "unreachable-model", "base_url": url, "api_key_env": None, "max_backoff": 0.5},
        prices={"unreachable-model": {"input": 0.0, "output": 0.0}},
    )
    args = ("run", spec.path, "--cache", shared_cache, "--limit", LIMIT)
    first = run_cli(*args)
    assert first.returncode == 2, describe(first)
    said = " ".join(first.stderr.split())
    assert f"cannot reach {url} (connection refused)" in said and "run the same command again" in said, said
    assert said.count("cannot reach") == 1
    fake = FakeOpenAI().start(port)
    try:
        again = run_cli(*args)
    finally:
        fake.stop()
    assert again.returncode == 0, describe(again)
    answered = [c for c in fake.calls() if c["endpoint"] == "chat" and c["kind"] == "generation"]
    assert len(answered) == LIMIT  # every answer, each once: none was recorded as failed the first time


def test_a_server_of_unknown_window_stops_a_configuration_at_its_first_refusal(make_spec, shared_cache, run_cli):
    """The scripted server states no window (no /props, not llama-cpp-python) and refuses prompts of 300 words
    or more: the run says at start-up that the window is unknown; the top_k 5 configuration's first prompt is
    refused and its other answers are not sent; the end line says they failed for good and does not also say a
    re-run retries them; the re-run sends nothing."""
    fake = FakeOpenAI(n_ctx=300).start()
    url = fake.base_url
    try:
        spec = make_spec(
            "unknown-window",
            splitters=[SENTENCE256],
            retrievers=[{"kind": "bm25"}],
            top_k=[1, 5],
            generator={"kind": "llm"},
            llm={
                "model": "unknown-window-model",
                "base_url": url,
                "api_key_env": None,
                "concurrency": 1,
                "adaptive_concurrency": False,
            },
            prices={"unknown-window-model": {"input": 0.0, "output": 0.0}},
        )
        args = ("run", spec.path, "--cache", shared_cache, "--limit", LIMIT)
        first = run_cli(*args)
        refused = [c for c in fake.calls() if c["endpoint"] == "chat" and c["status"] == 400]
        again = run_cli(*args)
        refused_again = [c for c in fake.calls() if c["endpoint"] == "chat" and c["status"] == 400]
    finally:
        fake.stop()
    assert first.returncode == 3, describe(first)
    out = " ".join(first.stdout.split())
    assert f"note: the server at {url} states no context window and none could be learnt" in out
    assert len(refused) == 1, refused  # the first prompt of top_k 5; its others were not sent
    assert "not sent: the server refused an earlier prompt of this configuration" in out
    # the one refused failed for good; the others, never sent, a re-run sends again: the end line says both, of
    # different answers; the re-run's first prompt of them is refused and stops the rest again
    assert "1 answers failed for good" in first.stderr and f"{LIMIT - 1} (configuration, question)" in first.stderr
    assert again.returncode == 3 and len(refused_again) == 2, describe(again)
    assert "2 answers failed for good" in again.stderr
