"""What the outputs say about failed configurations, cut replies, mixed invocations and LLM endpoints."""

from __future__ import annotations

import pandas as pd

from ragsweep.llm.endpoint_text import endpoint_line, endpoint_lines
from ragsweep.pipelines.outputs.answer_notes import failure_lines, failures, invocation_lines, truncation_lines
from ragsweep.pipelines.outputs.summary import build_summary

TOO_LONG = (
    "generation: a prompt of 2,755 tokens exceeds the context window of 2,048 tokens (the server's error "
    "reply); lower top_k or the splitter's chunk_size, or give the server a larger context"
)


def _records() -> pd.DataFrame:
    rows = []
    for i in range(4):
        rows.append(
            {
                "config_id": "big-k8",
                "config_hash": "h1",
                "qid": f"q{i}",
                "split": "test",
                "error": TOO_LONG,
                "error_kind": "context_window",
                "truncated": None,
                "invocation": 1,
                "answer_empty": None,
            }
        )
        rows.append(
            {
                "config_id": "small-k2",
                "config_hash": "h2",
                "qid": f"q{i}",
                "split": "test",
                "error": "generation failed: APITimeoutError" if i == 0 else None,
                "error_kind": None,
                "truncated": i < 3,
                "invocation": 1 if i < 2 else 2,
                "answer_empty": False,
            }
        )
    return pd.DataFrame(rows)


def test_failed_configurations_are_named_with_their_reason():
    failed = failures(_records())
    assert [f["config_id"] for f in failed] == ["big-k8", "small-k2"]  # all failed first
    assert failed[0] == {
        "config_id": "big-k8",
        "failed": 4,
        "questions": 4,
        "reason": TOO_LONG,
        "kind": "context_window",
        "for_good": 4,
    }
    lines = failure_lines(failed)
    assert lines[0].startswith(f"failed: big-k8: all 4 answers failed: {TOO_LONG}; not retried")  # permanent
    assert lines[1].startswith("partly failed: small-k2: 1 of 4 answers failed: generation failed: APITimeoutError")
    assert lines[1].endswith("running the same command again retries them")
    assert failures(_records()[lambda r: r["error"].isna()]) == []


def test_truncated_replies_and_mixed_invocations_are_said():
    from ragsweep.pipelines.outputs.columns import SUMMARY_METRICS

    recs = _records()
    for m in SUMMARY_METRICS + ["cost_usd", "prompt_tokens", "completion_tokens"]:
        recs[m] = 0.5
    summary = build_summary(
        recs,
        [{"config_id": c, "config_hash": h} for c, h in (("big-k8", "h1"), ("small-k2", "h2"))],
        {"bootstrap_samples": 50, "confidence": 0.95},
        0,
    )
    every = summary[summary["split"] == "all"].to_dict("records")
    assert truncation_lines(every) == [
        "truncated: 3 of 4 answers of small-k2 were cut at llm.max_tokens "
        "(finish_reason length): raise max_tokens, or they are scored as cut"
    ]
    (note,) = invocation_lines(every)
    assert "small-k2" in note and "big-k8" not in note and "more than one invocation" in note


def test_endpoint_line_says_what_the_server_was_given_and_why():
    quiet = {
        "endpoint": "https://api.openai.com/v1",
        "model": "m",
        "timeouts": 0,
        "truncated": 0,
        "capacity": {
            "adaptive": True,
            "maximum": 8,
            "limit": 8,
            "lowest": 1,
            "highest": 8,
            "queued_at": None,
            "waited": 0,
            "queued": 0,
        },
    }
    assert endpoint_line(quiet) is None
    busy = {
        "endpoint": "http://127.0.0.1:8089/v1",
        "model": "smol",
        "timeouts": 2,
        "truncated": 5,
        "capacity": {
            "adaptive": True,
            "maximum": 8,
            "limit": 1,
            "lowest": 1,
            "highest": 2,
            "queued_at": 2,
            "waited": 40,
            "wait_s": 300.0,
            "queued": 3,
            "queue_s": 6.0,
        },
    }
    line = endpoint_line(busy)
    assert line.startswith(
        "LLM http://127.0.0.1:8089/v1 (smol): 1 request(s) in flight at the end, of "
        "llm.concurrency 8 (2 at once served no more than fewer did, or timed out; between 1 and 2)"
    )
    assert "40 calls waited for a free slot (7.5 s on average" in line and "2 timed out" in line
    assert "5 replies cut at max_tokens" in line
    assert endpoint_lines({"invocations": [{"llm_endpoints": [quiet, busy]}]}) == [line]
