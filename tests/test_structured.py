"""Replies asked in a form (``llm/reply_form.py``, ``llm/structured.py``, ``llm/ask.py``) against the scripted server
over real HTTP, one server kind each: one that takes OpenAI's ``json_schema``, one that takes llama-cpp-python's
``json_object`` with a schema (and answers ``json_schema`` with a 500), one that ignores ``response_format`` and
replies in free text, one that refuses it. The probe learns which, once per endpoint; the schema is sent in that
form and is part of the call cache's key; a free-text server's replies are read as text, an unreadable one is
asked again once, and the re-asks are counted, priced and said in the endpoint line.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from ragsweep.config import JudgePrompts, LLMSpec, PriceSpec
from ragsweep.evaluation.judge_forms import CORRECTNESS, VERDICT
from ragsweep.evaluation.judges import JudgeCase, build_judges, judge
from ragsweep.llm.ask import aask_text, ask_text
from ragsweep.llm.cache import LLMCallCache
from ragsweep.llm.endpoint_text import endpoint_line
from ragsweep.llm.engine import LLMEngine
from ragsweep.llm.engine_inputs import RunTerms
from ragsweep.llm.openai_like import SweepLLM
from ragsweep.llm.reply_form import ReplyForm, strict_object
from ragsweep.llm.structured import PROBE_TOKEN, response_format
from ragsweep.llm.usage import Trace, llm_scope

sys.path.insert(0, str(Path(__file__).parent))
from fake_openai import FakeOpenAI  # noqa: E402

PRICE = PriceSpec(input=1, output=2)
QUESTION = "What is the annual licence fee?"
ANSWER = "The annual licence fee is $320."
CONTEXT = "The annual licence fee is $320, payable in January."


@pytest.fixture()
def endpoint(tmp_path):
    """``make(structured=..., rules=...)`` -> (fake server, engine, SweepLLM); all closed afterwards."""
    made = []

    def make(structured: str = "json_schema", rules=None, cache: str = "c.sqlite", **spec):
        fake = FakeOpenAI(structured=structured, rules=rules or []).start()
        llm_spec = LLMSpec(model="fake-model", base_url=fake.base_url, api_key_env=None, **spec)
        engine = LLMEngine(llm_spec, LLMCallCache(tmp_path / cache), run=RunTerms(price=PRICE, run_id="r"))
        made.append((fake, engine))
        return fake, engine, SweepLLM(llm_spec, engine, None)

    yield make
    for fake, engine in made:
        engine.close()
        fake.stop()


def chats(fake) -> list[dict]:
    return [c for c in fake.calls() if c["endpoint"] == "chat"]


def run_judges(llm, names=("correctness", "faithfulness", "relevancy")) -> dict:
    judges = build_judges(list(names), llm, JudgePrompts(), 4.0)

    async def go():
        out = {}
        for name in names:
            trace = Trace()
            with llm_scope(trace, stage="judge", judge=name):
                case = JudgeCase(QUESTION, ANSWER, [CONTEXT], "$320 a year.")
                out[name] = await judge(name, judges[name], case, threshold=4.0)
            out[name]["calls"] = trace.calls
        return out

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("kind", "mode", "probes"),
    [("json_schema", "json_schema", ["json_schema"]), ("json_object", "json_object", ["json_schema", "json_object"])],
)
def test_a_server_that_takes_a_schema_is_probed_once_and_held_to_it(endpoint, kind, mode, probes):
    fake, engine, llm = endpoint(kind)
    out = run_judges(llm)
    assert {n: (r["status"], r["score"], r["calls"]) for n, r in out.items()} == {
        "correctness": ("ok", 4.0, 1),
        "faithfulness": ("ok", 1.0, 1),
        "relevancy": ("ok", 1.0, 1),
    }
    assert json.loads(out["correctness"]["raw"])["score"] == 4  # the reply is the schema's object
    calls = chats(fake)
    assert [c["response_format"] for c in calls if c["kind"] == "probe"] == probes
    assert [(c["kind"], c["response_format"]) for c in calls if c["kind"] != "probe"] == [
        ("correctness", mode),
        ("faithfulness", mode),
        ("relevancy", mode),
    ]
    st = engine.describe()["structured"]
    assert st["mode"] == mode and st["asked"] == 3 and st["constrained_calls"] == 3
    assert st["reasks"] == 0 and st["unreadable"] == 0 and engine.failures == 0  # a refused probe is no failure
    assert st["source"].startswith("probe") and f"{mode} answered in the schema" in st["source"]
    line = endpoint_line(engine.describe())
    assert f"3 formed replies held to their JSON schema (response_format {mode})" in line


@pytest.mark.parametrize("kind", ["ignore", "reject"])
def test_a_server_without_schemas_is_read_as_text(endpoint, kind):
    fake, engine, llm = endpoint(kind)
    out = run_judges(llm)
    assert {n: (r["status"], r["score"], r["calls"]) for n, r in out.items()} == {
        "correctness": ("ok", 4.0, 1),
        "faithfulness": ("ok", 1.0, 1),
        "relevancy": ("ok", 1.0, 1),
    }
    calls = chats(fake)
    assert [c["response_format"] for c in calls if c["kind"] == "probe"] == ["json_schema", "json_object"]
    assert all(c["response_format"] is None for c in calls if c["kind"] != "probe")  # nothing more is sent
    st = engine.describe()["structured"]
    assert st["mode"] == "text" and st["constrained_calls"] == 0 and st["asked"] == 3
    verb = "ignored" if kind == "ignore" else "refused (400)"
    assert st["source"] == f"probe; json_schema {verb}; json_object {verb}"
    assert "3 formed replies read as text (no schema support" in endpoint_line(engine.describe())


def test_an_unreadable_free_text_reply_is_asked_again_once_counted_and_priced(endpoint):
    again = "Your reply could not be read"
    rules = [
        # correctness: unreadable, then readable when asked again; faithfulness: unreadable twice
        {"kind": "correctness", "match": again, "reply": "2\nThe fee is wrong."},
        {"kind": "correctness", "action": "malformed"},
        {"kind": "faithfulness", "action": "malformed"},
    ]
    fake, engine, llm = endpoint("ignore", rules)
    out = run_judges(llm, ("correctness", "faithfulness"))
    c, f = out["correctness"], out["faithfulness"]
    assert (c["status"], c["score"], c["reasked"], c["calls"]) == ("ok", 2.0, True, 2)
    assert (f["status"], f["reasked"], f["calls"]) == ("unmeasured", True, 2)
    assert f["reason"].startswith("reply does not start with YES or NO")
    repairs = [c for c in chats(fake) if c["kind"] in ("correctness", "faithfulness")]
    assert len(repairs) == 4
    st = engine.describe()["structured"]
    assert (st["asked"], st["reasks"], st["repaired"], st["unreadable"]) == (2, 2, 1, 1)
    billed = [x for x in chats(fake) if x["kind"] in ("correctness", "faithfulness")][1::2]  # the second of each
    assert st["reask_usd"] == pytest.approx(
        sum(x["prompt_tokens"] * 1 + x["completion_tokens"] * 2 for x in billed) / 1e6, rel=1e-6
    )
    line = endpoint_line(engine.describe())
    assert "2 repair re-asks (USD " in line and "1 read after one" in line and "1 still unreadable" in line


def test_a_reply_cut_at_max_tokens_breaks_the_json_and_is_asked_again(endpoint):
    """A server held to a schema still cuts a reply at max_tokens: the JSON is broken, the re-ask gets the
    schema again. A formed reply gets at least the tokens its schema's longest object takes (the spec's 3 would
    cut every one)."""
    cut = {"kind": "correctness", "reply": '{"score": 4, "reasoning": "The fee is', "finish_reason": "length"}
    fake, engine, llm = endpoint("json_schema", [{**cut, "times": 1}], max_tokens=3)
    out = run_judges(llm, ("correctness",))["correctness"]
    assert out["status"] == "ok" and out["reasked"] and out["calls"] == 2
    sent = [x for x in chats(fake) if x["kind"] == "correctness"]
    assert [x["response_format"] for x in sent] == ["json_schema", "json_schema"]
    assert engine.describe()["structured"]["repaired"] == 1 and engine.truncated == 1
    assert CORRECTNESS.max_tokens > 3 and all(x["completion_tokens"] > 3 for x in sent[1:])


def test_the_schema_is_part_of_the_cache_key(endpoint, tmp_path):
    """The same prompt in two forms is two calls; the same form again is the cache's; a new engine on the same
    cache (a re-run) learns the mode from the cached probe and calls nothing."""
    words = {"type": "array", "items": {"type": "string"}, "maxItems": 3}
    a = ReplyForm("words_a", strict_object({"words": words}), lambda o: o["words"], None, "a list")
    b = ReplyForm("words_b", strict_object({"words": {**words, "maxItems": 2}}), lambda o: o["words"], None, "a list")
    fake, engine, llm = endpoint("json_schema")
    first = ask_text(llm, "Name three colours.", a)
    assert first.value is not None and ask_text(llm, "Name three colours.", b).value is not None
    assert ask_text(llm, "Name three colours.", a) == first
    assert [c["kind"] for c in chats(fake)] == ["probe", "generation", "generation"]
    assert engine.cache_hits == 1
    again = LLMEngine(engine.spec, LLMCallCache(tmp_path / "c.sqlite"), run=RunTerms(price=PRICE, run_id="r2"))
    try:
        llm2 = SweepLLM(engine.spec, again, None)
        assert ask_text(llm2, "Name three colours.", b).value is not None
        assert len(chats(fake)) == 3 and again.calls == 0 and again.describe()["structured"]["mode"] == "json_schema"
    finally:
        again.close()


def test_a_form_the_server_refuses_is_sent_again_as_text(endpoint):
    """A server that took the probe's schema but refuses a form's (a keyword it cannot compile): that form is read
    as text from then on, and the call still answers."""
    fake, engine, llm = endpoint("json_schema")
    assert ask_text(llm, "warm up", VERDICT).value is not None  # probe + one call held to the schema
    fake.set_rules([{"kind": "any", "match": "refuse me", "action": "status", "status": 400, "times": 1}])
    reply = ask_text(llm, "refuse me: is the sky blue?", CORRECTNESS)
    sent = [c["response_format"] for c in chats(fake)[2:]]
    assert sent == ["json_schema", None, None]  # refused; the same request as text; its repair re-ask as text
    assert reply.value is None and reply.reasked  # a generation's reply is no score
    assert engine.describe()["structured"]["refused"].keys() == {"correctness"}


def test_probe_and_formats():
    form = CORRECTNESS
    assert response_format("json_schema", form)["json_schema"]["strict"] is True
    assert response_format("json_object", form) == {"type": "json_object", "schema": form.schema}
    assert response_format("text", form) is None
    # OpenAI's strict mode refuses length bounds: sent without them there
    sent = response_format("json_schema", form, openai_api=True)["json_schema"]["schema"]
    assert "maxLength" not in json.dumps(sent) and "maxLength" in json.dumps(form.schema)
    assert PROBE_TOKEN not in "Reply with one JSON object."


def test_forms_read_json_against_the_schema_then_text():
    assert CORRECTNESS.read('{"score": 5, "reasoning": "right"}') == ((5.0, "right"), None)
    assert CORRECTNESS.read("4\nclose enough") == ((4.0, "close enough"), None)
    value, why = CORRECTNESS.read('{"score": 7, "reasoning": "x"}')
    assert value is None and why.startswith("JSON reply does not follow the schema: score:")
    assert CORRECTNESS.read("")[1] == "empty reply"
    assert VERDICT.read('```json\n{"verdict": "NO"}\n```') == (False, None)
    assert VERDICT.read("YES, it is supported.") == (True, None)
    assert VERDICT.read('{"verdict": "maybe"}')[0] is None
    # llama-cpp-python's grammar for a bounded string lets raw newlines through: read all the same
    assert CORRECTNESS.read('{ "score": 4, "reasoning": "one.\n\ntwo." }') == ((4.0, "one.\n\ntwo."), None)


def test_async_and_sync_asks_agree(endpoint):
    fake, engine, llm = endpoint("json_object")
    sync = ask_text(llm, "Is it? Reply YES or NO.", VERDICT)
    sync_async = asyncio.run(aask_text(llm, "Is it? Reply YES or NO.", VERDICT))
    assert sync == sync_async and sync.mode == "json_object"
