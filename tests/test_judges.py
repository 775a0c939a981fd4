"""Judge parsing (strict: unparseable replies are unmeasured) and the single-prompt fast path."""

from __future__ import annotations

import asyncio

import pytest

from ragsweep.evaluation.judge_forms import parse_correctness, parse_yes_no
from ragsweep.evaluation.judges import check_prompt_files


@pytest.mark.parametrize(
    "raw, score",
    [
        ("4.0\nGood answer", 4.0),
        ("5", 5.0),
        ("Score: 3.5\nok", 3.5),
        ("**2**\nwrong", 2.0),
        ("1/5\nno", 1.0),
        ("\n\n4\nlate start", 4.0),
    ],
)
def test_correctness_scores_are_read_from_the_first_line(raw, score):
    assert parse_correctness(raw)[0] == score and parse_correctness(raw)[1] is None


@pytest.mark.parametrize(
    "raw, reason",
    [
        ("I think the answer is fine.", "first line is not a score"),
        ("7\nout of range", "outside 1-5"),
        ("0\n", "outside 1-5"),
        ("", "empty reply"),
        ("The score is 4", "first line is not a score"),
    ],
)
def test_unparseable_correctness_is_unmeasured_with_a_reason(raw, reason):
    score, why, _ = parse_correctness(raw)
    assert score is None and reason in why


@pytest.mark.parametrize(
    "raw, passing", [("YES", True), ("no", False), ("Yes, it is supported.", True), ("  NO.", False), ("**YES**", True)]
)
def test_yes_no_replies(raw, passing):
    assert parse_yes_no(raw) == (passing, None)


@pytest.mark.parametrize("raw", ["Maybe yes", "I cannot say yes or no", "", "Yesterday"])
def test_other_replies_are_unmeasured_not_failures(raw):
    # LlamaIndex's own parsing would count "Maybe yes" and "I cannot say yes or no" as passing
    passing, why = parse_yes_no(raw)
    assert passing is None and why


def test_replaced_templates_must_keep_their_placeholders(tmp_path):
    from ragsweep.config import JudgePrompts
    from ragsweep.errors import RagsweepError

    good = tmp_path / "c.txt"
    good.write_text("Q: {query}\nA: {generated_answer}\nRef: {reference_answer}\nScore 1-5 then reasons.")
    check_prompt_files(JudgePrompts(correctness=good))
    bad = tmp_path / "f.txt"
    bad.write_text("Is {query_str} supported? Answer YES or NO.")
    with pytest.raises(
        RagsweepError,
        match=r"stage2.prompts.faithfulness: .* lacks the placeholder\(s\) "
        r"\{context_str\}",
    ):
        check_prompt_files(JudgePrompts(faithfulness=bad))


def _contexts(n: int, size: int) -> list[list[str]]:
    from ragsweep.config import DatasetSpec
    from ragsweep.datasets.load import load_dataset

    docs = [d.text for d in load_dataset(DatasetSpec()).documents]
    out = []
    for i in range(n):
        text = docs[i % len(docs)]
        out.append([text[:size] + "  \n", "\n" + text[size : 2 * size], text[2 * size : 3 * size]])
    return out


def test_fast_path_sends_the_same_request_as_llamaindex_evaluators():
    """The direct single-prompt call must be byte-identical to what the LlamaIndex evaluator sends
    (same cache key, same verdict); with a context beyond the index's chunk size the evaluator runs."""
    from fake_openai import FakeOpenAI
    from llama_index.core.evaluation import FaithfulnessEvaluator, RelevancyEvaluator
    from llama_index.llms.openai_like import OpenAILike

    from ragsweep.evaluation.judges import JudgeCase, judge, single_prompt_context

    fake = FakeOpenAI().start()
    try:
        llm = OpenAILike(
            model="fake-model",
            api_base=fake.base_url,
            api_key="x",
            is_chat_model=True,
            context_window=8192,
            max_tokens=256,
        )

        async def main() -> None:
            for ctxs in _contexts(6, 400):
                for name, ev in (
                    ("faithfulness", FaithfulnessEvaluator(llm=llm)),
                    ("relevancy", RelevancyEvaluator(llm=llm)),
                ):
                    await ev.aevaluate(query="When is rent due?", response="Monthly.", contexts=ctxs)
                    reference_key = fake.calls()[-1]["key"]
                    qs = "Monthly." if name == "faithfulness" else "Question: When is rent due?\nResponse: Monthly."
                    assert single_prompt_context(ctxs, ev, qs) is not None
                    out = await judge(name, ev, JudgeCase("When is rent due?", "Monthly.", ctxs), threshold=4.0)
                    assert fake.calls()[-1]["key"] == reference_key
                    assert out["status"] == "ok" and out["passing"] is True
            big = ["word " * 1500]  # beyond SummaryIndex's 1024-token chunks: LlamaIndex's own path
            ev = FaithfulnessEvaluator(llm=llm)
            assert single_prompt_context(big, ev, "Monthly.") is None
            n = len(fake.calls())
            out = await judge("faithfulness", ev, JudgeCase("q", "Monthly.", big), threshold=4.0)
            assert out["status"] == "ok" and len(fake.calls()) > n

        asyncio.run(main())
    finally:
        fake.stop()
