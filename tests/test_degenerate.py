"""Degenerate LLM answers (pipelines/degenerate.py): an answer that echoes the prompt's scaffolding, or is mostly a
long verbatim copy of the retrieved context, is flagged per answer, counted per configuration, and named by the
verdict when most of its pick's answers are such copies; end to end against the scripted OpenAI server, whose
``echo`` rule replies with the prompt itself (as SmolLM2-135M did through llama.cpp)."""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import describe

from ragsweep.evaluation.test_options import TestOptions
from ragsweep.pipelines.degenerate import (
    COPY_SENTENCES,
    answer_flags,
    copied_share,
    copies_context,
    degeneracy,
    echoes_prompt,
    scaffolding,
    sentence_words,
)

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "src" / "ragsweep" / "datasets" / "demo"
REFUSAL = "I cannot answer this from the provided documents."
QUESTION = "Who monitors compliance with the Ordinance?"
CUSTOM = (
    "Read the passages between the lines.\n=========\n{context_str}\n=========\n"
    "Answer in one sentence, quoting the passages where you can.\nQuestion: {query_str}\nResponse: "
)


@lru_cache(maxsize=1)
def chunks() -> tuple[str, ...]:
    """The demo data-protection ordinance in 256-token chunks, as the sweep's sentence splitter makes them."""
    from llama_index.core.node_parser import SentenceSplitter

    doc = next(
        json.loads(line)
        for line in (DEMO / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line)["id"] == "data-protection-ordinance"
    )
    return tuple(SentenceSplitter(chunk_size=256, chunk_overlap=32).split_text(doc["text"]))


def default_prompt(context: list[str], question: str = QUESTION) -> str:
    from llama_index.core.prompts.default_prompts import DEFAULT_TEXT_QA_PROMPT_TMPL

    return DEFAULT_TEXT_QA_PROMPT_TMPL.format(context_str="\n\n".join(context), query_str=question)


# --------------------------------------------------------------------------- copies_context
def test_a_faithful_answer_quoting_one_sentence_is_not_a_copy():
    ctx = list(chunks()[:3])
    quote = next(s for s in ctx[0].splitlines() if 'Data Protection Officer" means' in s)
    for answer in (quote, f"Under § 1(3) of the Ordinance, {quote}", "The Data Protection Officer monitors it."):
        flags = degeneracy(answer, ctx, None, QUESTION)
        assert flags["copied_context"] is False and flags["echoed_prompt"] is False, answer
    assert copied_share(quote, ctx) == 1.0  # QuIP alone cannot tell a quote from a dump


def test_no_single_sentence_of_the_context_is_a_copy_and_every_pasted_pair_of_chunks_is():
    """Over every sentence of the demo ordinance's chunks (3 retrieved at a time): quoting one never flags,
    pasting two chunks always does, whatever the sentence's length."""
    from ragsweep.datasets.sentences import sentences

    cs = chunks()
    for i in range(len(cs) - 2):
        ctx = list(cs[i : i + 3])
        for s in sentences("", ctx[1]):
            assert not copies_context(s.text, ctx), s.text
        assert copies_context(ctx[0] + "\n\n" + ctx[1], ctx)
        assert copies_context("Here is what the documents say. " + "\n".join(ctx), ctx)


def test_the_bar_follows_the_contexts_sentence_length():
    """Copied words must reach COPY_SENTENCES sentences' worth of the context (word-weighted mean length)."""
    short = ["The fee is due. It is ten euros. Pay it at the desk. The desk opens at nine. It closes at five."]
    assert sentence_words(short) == pytest.approx(98 / 22)  # sentences of 4, 4, 5, 5, 4 words
    three = "The fee is due. It is ten euros. Pay it at the desk."  # 13 words < 3 x 4.45
    four = three + " The desk opens at nine."  # 18 words
    assert COPY_SENTENCES == 3 and not copies_context(three, short) and copies_context(four, short)
    assert not copies_context("The fee is due.", short)
    assert not copies_context("Nothing of this is in the context, and it is rather long, " * 5, short)
    assert not copies_context("", short) and not copies_context("anything", [])
    assert copied_share("", short) is None and copied_share("x", []) is None


# --------------------------------------------------------------------------- echoes_prompt
def test_the_default_template_echoed_is_flagged_and_its_scaffolding_comes_from_llamaindex():
    from llama_index.core.prompts.chat_prompts import TEXT_QA_SYSTEM_PROMPT
    from llama_index.core.prompts.default_prompts import DEFAULT_TEXT_QA_PROMPT_TMPL

    s = scaffolding(None)
    for line in (
        "Context information is below.",
        "Given the context information and not prior knowledge, answer the query.",
    ):
        assert line in DEFAULT_TEXT_QA_PROMPT_TMPL
        assert echoes_prompt(f"The officer.\n{line}")
        assert echoes_prompt(line.upper())  # case and punctuation aside
    assert s.labels[:2] == ("query:", "answer:") and s.query_prefix == "query" and s.answer_label == "answer:"
    assert s.rules == ("---------------------",)
    # a chat model gets LlamaIndex's system prompt with it: echoing that is echoing the prompt too
    system_line = TEXT_QA_SYSTEM_PROMPT.content.splitlines()[0]
    assert echoes_prompt(system_line)
    ctx = list(chunks()[:3])
    whole = degeneracy(default_prompt(ctx), ctx, None, QUESTION)
    assert whole["echoed_prompt"] and whole["copied_context"] and whole["copied_share"] > 0.9


@pytest.mark.parametrize(
    "answer, echoed",
    [
        ("The Data Protection Officer monitors compliance.", False),
        ("Answer: The Data Protection Officer.", False),  # the answer slot's own label, leading: harmless
        ("**Answer:** The Data Protection Officer.", False),
        (f"Query: {QUESTION}\nAnswer: The Data Protection Officer.", True),  # restates the query line
        (f"The officer. query: {QUESTION.lower()}", True),  # inline too
        ("The Data Protection Officer.\nQuery: Who is the controller?\nAnswer: The department.", True),  # goes on
        ("The Data Protection Officer.\n---------------------\n(3) ...", True),  # the separator
        ("To answer the query, the context information is below the fold.", False),  # words of it, not the line
        ("context information   is below.", True),
        (
            "There are some rules to follow: notify within 72 hours.",
            False,
        ),  # a system-prompt label, not at a line start
        ("", False),
        ("   ", False),
        (None, False),
    ],
)
def test_echoes_of_the_default_template(answer, echoed):
    assert echoes_prompt(answer, None, QUESTION) is echoed


def test_a_custom_template_has_its_own_scaffolding_not_the_default():
    s = scaffolding(CUSTOM)
    assert s.instructions == (
        "read the passages between the lines.",
        "answer in one sentence, quoting the passages where you can.",
    )
    assert s.labels == ("question:", "response:") and s.rules == ("=========",)
    assert s.query_prefix == "question" and s.answer_label == "response:"
    assert echoes_prompt("Read the passages between the lines. The officer.", CUSTOM)
    assert echoes_prompt(f"The officer.\nQuestion: {QUESTION}", CUSTOM, QUESTION)
    assert not echoes_prompt("Response: the officer.", CUSTOM)
    # the default's lines are not this template's: a model given CUSTOM did not see them
    assert not echoes_prompt("Context information is below.", CUSTOM)
    assert echoes_prompt("Context information is below.", None)
    # slots and escaped braces: ``{{`` is a literal brace, not a slot
    braces = scaffolding('Reply as JSON like {{"answer": ...}} with no other text.\n{context_str}\nQ: {query_str}')
    assert braces.instructions == ('reply as json like {"answer": ...} with no other text.',)
    assert braces.answer_label is None and braces.query_prefix == "q"


def test_the_refusal_template_a_refusal_is_not_an_echo_its_instruction_is():
    from ragsweep.pipelines.generator_prompts import refusal_template

    template = refusal_template(REFUSAL)
    assert not echoes_prompt(REFUSAL, template)
    instruction = next(line for line in template.splitlines() if line.startswith("If the context"))
    assert echoes_prompt(instruction, template) and not echoes_prompt(instruction, None)
    assert echoes_prompt("Given the context information and not prior knowledge, answer the query.", template)


def test_answer_flags_read_the_template_the_generator_uses(tmp_path):
    """The payload fields (1/0) with the template ``make_llm_synthesizer`` uses: a configuration's file, the
    generator's file, the refusal template, LlamaIndex's default."""
    from types import SimpleNamespace

    from llama_index.core.schema import NodeWithScore, TextNode

    nodes = [NodeWithScore(node=TextNode(text=c), score=1.0) for c in chunks()[:3]]
    custom = tmp_path / "custom.txt"
    custom.write_text(CUSTOM, encoding="utf-8")
    plain = SimpleNamespace(prompt_file=None, refusal=None)
    refusing = SimpleNamespace(prompt_file=None, refusal=REFUSAL)
    filed = SimpleNamespace(prompt_file=str(custom), refusal=None)
    echo = "Read the passages between the lines.\nThe officer."
    assert answer_flags(echo, nodes, plain, str(custom), QUESTION) == {
        "quip": 0.0,  # the share copied (QuIP), computed once with the flags
        "echoed_prompt": 1,
        "copied_context": 0,
        "looped": 0,
    }
    assert answer_flags(echo, nodes, filed, None, QUESTION)["echoed_prompt"] == 1
    assert answer_flags(echo, nodes, plain, None, QUESTION)["echoed_prompt"] == 0
    assert answer_flags(REFUSAL, nodes, refusing, None, QUESTION) == {
        "quip": answer_flags(REFUSAL, nodes, refusing, None, QUESTION)["quip"],
        "echoed_prompt": 0,
        "copied_context": 0,
        "looped": 0,
    }
    pasted = "\n".join(chunks()[:2])
    assert answer_flags(pasted, nodes, plain, None, QUESTION) == {
        "quip": pytest.approx(0.99, abs=0.01),  # two chunks pasted: all but the grams across the join
        "echoed_prompt": 0,
        "copied_context": 1,
        "looped": 0,
    }
    assert answer_flags("", [], plain, None, QUESTION) == {
        "quip": None,
        "echoed_prompt": 0,
        "copied_context": 0,
        "looped": 0,
    }


# --------------------------------------------------------------------------- records, summary, table, verdict
def _journal_records(tmp_path):
    from ragsweep.datasets.types import EvidenceSpan, Question
    from ragsweep.pipelines.journal import Journal
    from ragsweep.pipelines.outputs.records import build_records, question_rows

    gold = (EvidenceSpan("d", 0, 5),)
    questions = [Question(f"q{i}", f"question {i}", "ref", gold, "simple") for i in range(4)]
    journal = Journal(tmp_path / "journal.sqlite")
    for i, q in enumerate(questions):
        journal.add_answer(
            "h1",
            q.qid,
            "copier",
            {
                "answer": "a",
                "generator": "llm:m",
                "error": None,
                "echoed_prompt": int(i == 0),
                "copied_context": int(i < 3),
            },
        )
        journal.add_answer("h2", q.qid, "old-llm", {"answer": "a", "generator": "llm:m", "error": None})  # before
        journal.add_answer("h3", q.qid, "ext", {"answer": "a", "generator": "extractive-baseline", "error": None})
    journal.flush()
    configs = [
        {"config_id": "copier", "config_hash": "h1"},
        {"config_id": "old-llm", "config_hash": "h2"},
        {"config_id": "ext", "config_hash": "h3"},
    ]
    records = build_records(question_rows(questions, {q.qid: "test" for q in questions}), configs, journal)
    journal.close()
    return records, configs


def test_flags_in_records_and_counted_in_the_summary_old_answers_read_as_nan(tmp_path):
    from rich.console import Console

    from ragsweep.pipelines.outputs.summary import build_summary
    from ragsweep.pipelines.outputs.table import print_summary, read_summary

    records, configs = _journal_records(tmp_path)
    by = records.set_index(["config_id", "qid"])
    assert by.loc["copier", "echoed_prompt"].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert by.loc["copier", "copied_context"].tolist() == [1.0, 1.0, 1.0, 0.0]
    assert by.loc["old-llm", "echoed_prompt"].isna().all() and by.loc["ext", "copied_context"].isna().all()
    summary = build_summary(records, configs, {"bootstrap_samples": 200, "confidence": 0.95}, seed=0)
    test = summary[summary["split"] == "test"].set_index("config_id")
    assert test.loc["copier", "n_copied_context"] == 3 and test.loc["copier", "n_echoed_prompt"] == 1
    assert test.loc["copier", "copied_context"] == 0.75 and test.loc["copier", "echoed_prompt"] == 0.25
    assert test.loc["ext", "n_copied_context"] == 0 and math.isnan(test.loc["ext", "copied_context"])
    console = Console(width=200, record=True)
    print_summary(summary[summary["split"] == "test"], console)
    text = console.export_text()
    assert "echo/copy/loop" in text and "1/3/0" in text and "copied_context" in text
    cells = {c[1].strip(): c[3].strip() for c in (line.split("\u2502") for line in text.splitlines()) if len(c) > 3}
    assert cells["copier"] == "1/3/0" and cells["old-llm"] == cells["ext"] == "-"  # not measured: no count
    summary[summary["split"] == "test"].to_csv(tmp_path / "summary.csv", index=False)  # a no-op re-run reads it
    again = Console(width=200, record=True)
    print_summary(read_summary(tmp_path / "summary.csv"), again)
    assert again.export_text() == text
    quiet = Console(width=200, record=True)
    print_summary(summary[(summary["split"] == "test") & (summary["config_id"] != "copier")], quiet)
    assert "echo/copy/loop" not in quiet.export_text()  # nothing flagged: no column, no caption


def _verdict_records(flags: dict[str, list[int]], metric: str = "bertscore_f1_rescaled") -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for config, (mean, echoed, copied) in flags.items():
        for split in ("validation", "test"):
            for i in range(10):
                rows.append(
                    {
                        "config_id": config,
                        "qid": f"{split[0]}{i}",
                        "split": split,
                        "error": None,
                        "qtype": "simple",
                        metric: mean + rng.normal(0, 0.01),
                        "echoed_prompt": float(i < echoed),
                        "copied_context": float(i < copied),
                    }
                )
    return pd.DataFrame(rows)


def test_the_verdict_notes_a_pick_whose_answers_are_mostly_copies():
    from ragsweep.evaluation.verdict import Verdict, decide
    from ragsweep.pipelines.outputs.verdict_text import verdict_lines

    v = decide(
        _verdict_records({"a": (0.5, 2, 8), "b": (0.2, 0, 0)}), "bertscore_f1_rescaled", tests=TestOptions(n_boot=200)
    )
    assert v.chosen == "a" and v.flagged == {"n": 10, "copied_context": 8, "echoed_prompt": 2, "either": 8}
    note = (
        "note: 8 of its 10 test answers copy the prompt or its context: 8 copy the retrieved context verbatim "
        "(copied_context), 2 echo the prompt's instructions (echoed_prompt); its BERTScore F1 (rescaled) may "
        "reward copying"
    )
    assert v.flagged_note("BERTScore F1 (rescaled)") == note
    assert any(note in line for line in verdict_lines(v))
    back = Verdict.from_dict(json.loads(json.dumps(v.to_dict())))
    assert back.flagged == v.flagged and v.to_dict()["flagged_note"].startswith("note: 8 of its 10 test answers")
    only = decide(_verdict_records({"a": (0.5, 6, 0)}), "bertscore_f1_rescaled", tests=TestOptions(n_boot=200))
    assert only.flagged_note() == (
        "note: 6 of its 10 test answers echo the prompt's instructions (echoed_prompt); "
        "its bertscore_f1_rescaled may reward copying"
    )
    hit = decide(_verdict_records({"a": (0.5, 0, 9)}, "hit"), "hit", tests=TestOptions(n_boot=200))
    assert hit.flagged_note() == "note: 9 of its 10 test answers copy the retrieved context verbatim (copied_context)"


def test_no_note_at_half_or_less_nor_without_flags():
    from ragsweep.evaluation.verdict import Verdict, decide
    from ragsweep.pipelines.outputs.verdict_text import verdict_lines

    half = decide(_verdict_records({"a": (0.5, 3, 5)}), "bertscore_f1_rescaled", tests=TestOptions(n_boot=200))
    assert half.flagged["either"] == 5 and half.flagged_note() is None
    assert not any("note:" in line for line in verdict_lines(half))
    old = _verdict_records({"a": (0.5, 0, 0)}).drop(columns=["echoed_prompt", "copied_context"])
    v = decide(old, "bertscore_f1_rescaled", tests=TestOptions(n_boot=200))
    assert v.flagged == {} and v.flagged_note() is None
    nan = _verdict_records({"a": (0.5, 0, 0)}).assign(echoed_prompt=np.nan, copied_context=np.nan)  # extractive
    assert decide(nan, "bertscore_f1_rescaled", tests=TestOptions(n_boot=200)).flagged == {}
    stored = v.to_dict()  # a verdict.json written before the flags existed
    for key in ("flagged", "flagged_note"):
        stored.pop(key)
    assert Verdict.from_dict(stored).flagged == {}


# --------------------------------------------------------------------------- end to end
def test_an_echoing_configuration_is_flagged_counted_and_named_by_the_verdict(
    make_spec, run_cli, read_run, shared_cache, tmp_path
):
    """Two prompt templates on the demo; the scripted server echoes the prompt back under one of them (its
    ``echo`` rule), as SmolLM2-135M did. BERTScore prefers the echoes (about .49 against .29 on validation),
    so the verdict picks them: its answers carry both flags, the summary counts them, the table shows them,
    and the verdict (printed, verdict.json, and recomputed by ``show``) says so."""
    from fake_openai import FakeOpenAI

    rows = [json.loads(line) for line in (DEMO / "questions.jsonl").read_text(encoding="utf-8").splitlines()]
    qfile = tmp_path / "questions.jsonl"
    qfile.write_text("".join(json.dumps(r) + "\n" for r in [r for r in rows if r["evidence"]][:6]), encoding="utf-8")
    body = "Context information is below.\n---------------------\n{context_str}\n---------------------\n"
    echo = tmp_path / "echo.txt"
    echo.write_text(
        body + "Using only this context (scripted to echo), answer the query.\nQuery: {query_str}\nAnswer: ",
        encoding="utf-8",
    )
    plain = tmp_path / "plain.txt"
    plain.write_text(body + "Answer briefly.\nQuery: {query_str}\nAnswer: ", encoding="utf-8")
    with FakeOpenAI(
        rules=[{"kind": "generation", "match": "(scripted to echo)", "action": "echo"}], api_key="sk-echo"
    ) as fake:
        spec = make_spec(
            "echo-llm",
            dataset={
                "corpus": {"format": "demo"},
                "questions": {"format": "jsonl", "path": str(qfile)},
                "fuzzy_evidence": 0.9,
            },
            splitters=[{"kind": "sentence", "chunk_size": 256, "chunk_overlap": 32}],
            retrievers=[{"kind": "bm25"}],
            top_k=[3],
            llm={"model": "fake-echo", "base_url": fake.base_url, "api_key_env": "FAKE_KEY"},
            generator={"kind": "llm", "prompt_files": [str(echo), str(plain)]},
            scoring={"metric": "bertscore_f1_rescaled", "bootstrap_samples": 200, "bertscore": {"baseline": "none"}},
        )
        proc = run_cli(
            "run", str(spec.path), "--cache", str(shared_cache), "--no-progress", env={"FAKE_KEY": "sk-echo"}
        )
    assert proc.returncode == 0, describe(proc)
    run = read_run(spec.run_dir, proc)
    echo_id, plain_id = "sentence256-bm25-k3-pecho", "sentence256-bm25-k3-pplain"
    recs = run.records.set_index("config_id")
    echoed = recs.loc[echo_id]
    assert echoed["answer"].str.contains("(scripted to echo)", regex=False).all()  # the prompt itself came back
    assert echoed["echoed_prompt"].eq(1.0).all() and echoed["copied_context"].eq(1.0).all()
    assert recs.loc[plain_id, "echoed_prompt"].eq(0.0).all() and recs.loc[plain_id, "copied_context"].eq(0.0).all()
    summ = run.summary[run.summary["split"] == "all"].set_index("config_id")
    assert summ.loc[echo_id, "n_echoed_prompt"] == 6 and summ.loc[echo_id, "n_copied_context"] == 6
    assert summ.loc[echo_id, "echoed_prompt"] == 1.0 and summ.loc[plain_id, "n_copied_context"] == 0
    verdict = json.loads((spec.run_dir / "verdict.json").read_text(encoding="utf-8"))
    assert verdict["chosen"] == echo_id
    n = verdict["flagged"]["n"]
    flagged = {k: v for k, v in verdict["flagged"].items() if k != "looped"}  # an echo may repeat its context
    assert flagged == {"n": n, "copied_context": n, "echoed_prompt": n, "either": n} and n > 0
    looped = verdict["flagged"].get("looped")  # the echoed contexts of overlapping chunks repeat themselves
    head = "are degenerate" if looped else "copy the prompt or its context"
    note = (
        f"note: {n} of its {n} {verdict['reported_on']} answers {head}: {n} copy the "
        f"retrieved context verbatim (copied_context), {n} echo the prompt's instructions (echoed_prompt)"
        + (f", {looped} restate themselves in a loop (looped)" if looped else "")
        + "; its BERTScore F1 (rescaled) may reward copying"
    )
    assert verdict["flagged_note"] == note
    out = " ".join(proc.stdout.split())
    assert note in out and "echo/copy/loop" in out, proc.stdout
    show = run_cli("show", str(spec.run_dir))  # the verdict recomputed from the records says it too
    assert show.returncode == 0 and note in " ".join(show.stdout.split()), describe(show)


def test_chat_markup_loops_and_cut_answers_count_as_degenerate():
    """What Gemma 3 270M wrote under llama-cpp-python's Llama 2 fallback: chat markup, the question restated as
    "Q: ... A:" in a loop, cut at max_tokens. Each is flagged; a pick whose answers are mostly so gets the note."""
    from ragsweep.evaluation.verdict import decide
    from ragsweep.pipelines.degenerate import degeneracy, echoes_prompt, loops

    q = "How long are general letters kept?"
    for markup in (
        "<<SYS>> You are helpful. <</SYS>> Three years.",
        "Three years. [/INST] [/INST]",
        "<start_of_turn>model\nThree years.",
        "<|im_start|>assistant Three years.",
        "<|start_header_id|>assistant<|end_header_id|> Three years.",
    ):
        assert echoes_prompt(markup), markup
    assert not echoes_prompt("Three years [from receipt].")
    looping = " ".join(["Q: How long are general letters kept? A: three years."] * 3)
    assert loops(looping, q) and degeneracy(looping, ["General correspondence: 3 years."], None, q)["looped"]
    assert loops(f"Q: {q} A: Q: {q} A:", q)  # the question restated twice
    assert not loops("General correspondence is kept for three years from receipt or dispatch.", q)
    rows = []
    for split in ("validation", "test"):
        for i in range(10):
            rows.append(
                {
                    "config_id": "g",
                    "qid": f"{split[0]}{i}",
                    "split": split,
                    "error": None,
                    "hit": 1.0,
                    "echoed_prompt": 0.0,
                    "copied_context": 0.0,
                    "looped": float(i < 4),
                    "truncated": i < 7,
                }
            )
    v = decide(pd.DataFrame(rows), "hit", tests=TestOptions(n_boot=200))
    assert v.flagged == {"n": 10, "copied_context": 0, "echoed_prompt": 0, "looped": 4, "truncated": 7, "either": 7}
    assert v.flagged_note() == (
        "note: 7 of its 10 test answers are degenerate: 4 restate themselves in a loop (looped), "
        "7 are cut at max_tokens (truncated)"
    )
