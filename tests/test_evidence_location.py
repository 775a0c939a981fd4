"""Evidence located in tiers (exact, normalised, fuzzy), every miss listed, copies counted as gold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsweep.config.dataset import DatasetSpec
from ragsweep.datasets.duplicates import add_copies, near_duplicate_documents
from ragsweep.datasets.load import load_dataset
from ragsweep.datasets.locate import CorpusIndex
from ragsweep.datasets.normalise import normalise, normalise_needle
from ragsweep.datasets.text_evidence import TextLocator
from ragsweep.datasets.types import EvidenceSpan, Question
from ragsweep.errors import RagsweepError
from ragsweep.run_dir import RunDir

# A PDF-extracted page: a footer glued to the text, a word hyphenated across a line break, curly
# quotes, a ligature, an en dash, a non-breaking space and a line break inside a sentence.
PDF_PAGE = (
    "City of Tessaly Rules 4/3/2022Page 3\n"
    "§ 4. The Licensee shall not disclose the Confi-\ndential Information to any \u201cthird party\u201d "
    "without the Board\u2019s written consent \u2013 see \u00a7\u00a05.\n"
    "A \ufb01ne of 500\u00a0euros applies to each\nbreach.\n"
)
CLEAN = {
    "footer": "City of Tessaly Rules 4/3/2022 Page 3",
    "hyphen_quotes": (
        'The Licensee shall not disclose the Confidential Information to any "third party" '
        "without the Board's written consent - see § 5."
    ),
    "ligature_nbsp": "A fine of 500 euros applies to each breach.",
}


def test_normalise_maps_back_to_exact_offsets() -> None:
    n = normalise(PDF_PAGE)
    assert "Confidential" in n.text and "fine" in n.text and " " not in n.text and "\n" not in n.text
    for clean in CLEAN.values():
        i = n.text.find(normalise_needle(clean))
        assert i >= 0, clean
        start, end = n.span(i, i + len(normalise_needle(clean)))
        assert normalise_needle(PDF_PAGE[start:end]) == normalise_needle(clean)
        assert not PDF_PAGE[start].isspace() and not PDF_PAGE[end - 1].isspace()


def test_tiers_exact_then_normalised_then_fuzzy() -> None:
    docs = {"rules": PDF_PAGE, "other": "Nothing here about licences."}
    loc = TextLocator(docs)
    assert loc.locate("q1", "evidence[0]", "The Licensee shall not disclose") == EvidenceSpan("rules", 42, 73)
    for i, clean in enumerate(CLEAN.values()):
        span = loc.locate(f"q{i + 2}", "evidence[0]", clean)
        assert span is not None and span.doc_id == "rules"
        assert normalise_needle(PDF_PAGE[span.start : span.end]) == normalise_needle(clean)
    typo = "The Licensee shall not disclose the Confidental Informations to any third party"
    assert loc.locate("q9", "evidence[0]", typo) is None
    assert loc.summary() == {
        "exact": 1,
        "normalised": 3,
        "fuzzy": 0,
        "unlocated": 1,
        "total": 5,
        "fuzzy_threshold": None,
    }
    miss = loc.unlocated[0].record
    assert miss["qid"] == "q9" and miss["closest_doc_id"] == "rules" and 0.85 < miss["similarity"] < 1.0
    assert "Confi-\ndential" in miss["closest_text"]
    assert "closest:" in str(loc.unlocated[0]) and "similarity 0." in str(loc.unlocated[0])

    fuzzy = TextLocator(docs, fuzzy=0.85)
    span = fuzzy.locate("q9", "evidence[0]", typo)
    assert span is not None and span.doc_id == "rules" and fuzzy.summary()["fuzzy"] == 1
    assert TextLocator(docs, fuzzy=0.99).locate("q9", "evidence[0]", typo) is None


def test_named_document_is_searched_alone() -> None:
    docs = {"a": "Alpha text. The same sentence.", "b": "The same sentence. Beta."}
    idx = CorpusIndex(docs)
    assert idx.exact("The same sentence.", "b").doc_id == "b"
    assert [m.doc_id for m in idx.normalised_all(normalise_needle("The same  sentence."))] == ["a", "b"]
    assert [m.doc_id for m in idx.normalised_all(normalise_needle("The same sentence."), "b")] == ["b"]
    assert idx.normalised_all(normalise_needle("sentence.Beta"), "a") == []


def test_copies_in_other_documents_count_as_gold() -> None:
    clause = "Each party shall keep the Confidential Information secret for five years after disclosure."
    docs = {
        "template": f"Template.\n{clause}\n",
        "signed": f"Signed copy.\n{clause.replace(' ', chr(10), 3)}\n",
        "short": "Yes. Yes.",
    }
    q1 = Question("q1", "How long?", evidence=(EvidenceSpan("template", 10, 10 + len(clause)),))
    q2 = Question("q2", "Short?", evidence=(EvidenceSpan("short", 0, 4),))  # too short to expand
    out, report = add_copies([q1, q2], CorpusIndex(docs))
    assert out[1] == q2
    assert [e.doc_id for e in out[0].evidence] == ["template", "signed"]
    copy = out[0].evidence[1]
    assert normalise_needle(docs["signed"][copy.start : copy.end]) == normalise_needle(clause)
    assert report.summary() == {
        "questions": 1,
        "spans_added": 1,
        "documents": [{"evidence_doc": "template", "copy_doc": "signed", "copies": 1}],
    }
    assert "1 question(s)" in report.note() and "template -> signed (1)" in report.note()


def test_near_duplicate_documents() -> None:
    base = " ".join(f"word{i}" for i in range(200))
    docs = {"law": base, "rules": "Preamble of the rules. " + base + " Closing words.", "other": "unrelated " * 50}
    pairs = near_duplicate_documents(docs)
    assert pairs[0]["document"] == "law" and pairs[0]["within"] == "rules" and pairs[0]["containment"] == 1.0
    assert all(p["document"] != "other" and p["within"] != "other" for p in pairs)


def _write(tmp_path: Path, docs: dict[str, str], rows: list[dict]) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in docs.items()), encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return corpus, questions


def _spec(corpus: Path, questions: Path, **kw) -> DatasetSpec:
    return DatasetSpec(
        corpus={"format": "jsonl", "path": corpus}, questions={"format": "jsonl", "path": questions}, **kw
    )


def test_load_lists_every_unlocated_text_in_a_file(tmp_path: Path) -> None:
    corpus, questions = _write(
        tmp_path,
        {"rules": PDF_PAGE},
        [
            {"id": "ok", "question": "Fine?", "evidence": [{"doc_id": "rules", "text": CLEAN["ligature_nbsp"]}]},
            {"id": "bad1", "question": "A?", "evidence": [{"text": "Completely absent sentence number one here."}]},
            {
                "id": "bad2",
                "question": "B?",
                "evidence": [
                    {"doc_id": "rules", "text": "The Licensee shall never tell."},
                    {"text": "Another missing piece of evidence text."},
                ],
            },
        ],
    )
    run_dir = tmp_path / "run"
    with pytest.raises(RagsweepError) as err:
        load_dataset(_spec(corpus, questions), report_dir=run_dir)
    msg = str(err.value)
    unlocated = RunDir(run_dir).unlocated_evidence
    assert "3 evidence text(s) in 2 question(s)" in msg and str(unlocated) in msg and "\n" not in msg
    lines = [json.loads(x) for x in unlocated.read_text(encoding="utf-8").splitlines()]
    assert [(r["qid"], r["field"]) for r in lines] == [
        ("bad1", "evidence[0]"),
        ("bad2", "evidence[0]"),
        ("bad2", "evidence[1]"),
    ]
    assert lines[1]["closest_doc_id"] == "rules" and lines[1]["similarity"] > 0.5
    ds = load_dataset(_spec(corpus, questions, unlocated_evidence="drop_question"), report_dir=run_dir)
    assert [q.qid for q in ds.questions] == ["ok"]
    assert ds.evidence["location"] == {
        "exact": 0,
        "normalised": 1,
        "fuzzy": 0,
        "unlocated": 3,
        "total": 4,
        "fuzzy_threshold": None,
    }
    assert len(ds.evidence["unlocated"]) == 3
    questions.write_text(
        json.dumps({"id": "ok", "question": "Fine?", "evidence": [{"doc_id": "rules", "text": CLEAN["ligature_nbsp"]}]})
        + "\n",
        encoding="utf-8",
    )
    load_dataset(_spec(corpus, questions), report_dir=run_dir)
    assert not RunDir(run_dir).unlocated_evidence.exists()  # a stale list does not outlive its cause


def test_duplicate_evidence_policy(tmp_path: Path) -> None:
    clause = "The Tenant shall give the Landlord sixty days written notice before leaving the premises."
    corpus, questions = _write(
        tmp_path,
        {"lease": f"Lease.\n{clause}", "guide": f"Guide quoting: {clause}"},
        [{"id": "q1", "question": "Notice?", "evidence": [{"doc_id": "lease", "text": clause}]}],
    )
    ds = load_dataset(_spec(corpus, questions))
    assert [e.doc_id for e in ds.questions[0].evidence] == ["lease", "guide"]
    assert ds.evidence["copies"]["questions"] == 1 and any("count as gold too" in n for n in ds.notes)
    first = load_dataset(_spec(corpus, questions, duplicate_evidence="first"))
    assert [e.doc_id for e in first.questions[0].evidence] == ["lease"] and first.evidence["copies"] is None


def test_demo_exercises_every_tier_and_a_copy() -> None:
    ds = load_dataset(DatasetSpec())
    loc = ds.evidence["location"]
    assert loc["exact"] >= 1 and loc["normalised"] >= 1 and loc["fuzzy"] == 1 and loc["unlocated"] == 0
    assert loc["fuzzy_threshold"] == 0.9 and ds.evidence["copies"]["questions"] == 1
    with pytest.raises(RagsweepError, match="1 evidence text"):
        load_dataset(DatasetSpec(fuzzy_evidence=0.999))


def test_offset_map_equals_a_character_by_character_walk() -> None:
    """The compact map (only changed characters recorded) against the obvious per-character one."""
    import random

    from ragsweep.datasets.normalise import normalise_char

    rng = random.Random(7)
    alphabet = list("abc XYZ019.,") + [
        "\n",
        "\t",
        "-",
        "\u00ad",
        "\u2013",
        "\ufb01",
        "\ufb03",
        "\u2019",
        "\u201c",
        "\u00a0",
        "\u200b",
        "\uff21",
        "\u00bc",
        "\u00e9",
        "e\u0301",
    ]
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        expect_text, expect_map = "", []
        for i, c in enumerate(text):
            out = normalise_char(c)
            expect_text += out
            expect_map += [i] * len(out)
        n = normalise(text)
        assert n.text == expect_text
        assert [n.original(i) for i in range(len(n.text))] == expect_map


def test_a_span_and_its_copies_are_one_piece_of_evidence_for_every_metric() -> None:
    """Retrieving the copy finds the evidence: recall and nDCG must not fall because copies exist."""
    from ragsweep.metrics import all_retrieval_metrics

    original = EvidenceSpan("A", 0, 40)
    copy = EvidenceSpan("B", 100, 140, copy_of=0)
    other = EvidenceSpan("C", 0, 20)
    alone = all_retrieval_metrics([("A", 0, 50)], [original], 3)
    assert all_retrieval_metrics([("A", 0, 50)], [original, copy], 3) == alone
    assert all_retrieval_metrics([("B", 95, 145)], [original, copy], 3) == all_retrieval_metrics(
        [("B", 95, 145)], [EvidenceSpan("B", 100, 140)], 3
    )
    both = all_retrieval_metrics([("B", 100, 140), ("C", 0, 20)], [original, copy, other], 3)
    assert both["span_recall"] == 1.0 and both["ndcg"] == 1.0 and both["hit"] == 1.0
    half = all_retrieval_metrics([("C", 0, 20)], [original, copy, other], 3)
    assert half["span_recall"] == pytest.approx(20 / 60) and half["mrr"] == 1.0


def test_fuzzy_matching_is_attributed_scored_and_filtered_right() -> None:
    """Regressions: a quote at the very start of its document is not given to the previous one; a long
    quote does not score 1.0 against a short document holding a piece of it; a named document is
    searched even when many others share the text."""
    nn = normalise_needle
    docs = {"A": "Lorem ipsum dolor sit.", "B": "The quick brown fox jumps over the lazy dog, again and again."}
    for doc_id in (None, "B"):
        m = CorpusIndex(docs).closest(nn("The quick brown fox jumps ovr the lazy dog, again"), doc_id)
        assert m is not None and m.doc_id == "B" and m.start == 0 and m.similarity > 0.95
    long = (
        "The Supplier shall deliver the goods within ten business days of the order. Payment is due "
        "within thirty days. Late payments accrue interest at two percent per month thereafter."
    )
    short = CorpusIndex({"B": "Payment is due within thirty days.", "A": "Something else."}).closest(nn(long))
    assert short is not None and short.similarity < 0.5
    assert TextLocator({"B": "Payment is due within thirty days."}, fuzzy=0.9).locate("q", "e", long) is None
    tmpl = (
        "This Agreement is made between the parties. The Recipient shall hold the Confidential "
        "Information in strict confidence for five years."
    )
    index = CorpusIndex({f"nda{i:03d}": f"Header {i}. {tmpl}" for i in range(60)})
    m = index.closest(nn(tmpl.replace("strict", "strlct")), "nda059")
    assert m is not None and m.doc_id == "nda059" and m.similarity > 0.98


def test_short_quotes_match_whole_words_and_accents_fold() -> None:
    loc = TextLocator({"D": "the latest results are in", "E": "a test of the system"})
    assert loc.locate("q", "e", "a test") == EvidenceSpan("E", 0, 6)
    assert TextLocator({"D": "the latest results are in"}).locate("q", "e", "a test") is None
    assert TextLocator({"D": "the latest results"}).locate("q", "e", "test") is None
    accents = TextLocator({"D": "Le cafe\u0301 de la gare ferme\u0301 le dimanche."})
    span = accents.locate("q", "e", "Le café de la gare fermé le dimanche.")
    assert span == EvidenceSpan("D", 0, 39) and accents.summary()["normalised"] == 1


def test_evidence_counts_after_the_policy(tmp_path: Path) -> None:
    """Spans given and texts located are counted on the questions kept, each distinct span once."""
    clause = "The Tenant shall pay the rent on the first day of every month."
    corpus, questions = _write(
        tmp_path,
        {"lease": clause},
        [
            {
                "id": "q1",
                "question": "A?",
                "evidence": [{"doc_id": "lease", "start": 0, "end": 10}, {"text": clause}, {"text": clause}],
            },
            {"id": "q2", "question": "B?", "evidence": [{"text": clause}, {"text": "Nowhere in this corpus at all."}]},
        ],
    )
    ds = load_dataset(_spec(corpus, questions, unlocated_evidence="drop_question"))
    assert [q.qid for q in ds.questions] == ["q1"]
    assert (ds.evidence["spans"], ds.evidence["given_as_spans"], ds.evidence["located_by_text"]) == (2, 1, 1)
