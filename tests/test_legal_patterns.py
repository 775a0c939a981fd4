"""Offline legal-pattern triplet extractor (the heuristic, model-free KG baseline).

Every text here is written for these tests in legal/policy style; none is taken from a dataset.
"""

from __future__ import annotations

import re

import pytest

from ragsweep.graphs.legal_extractor import LegalPatternExtractor
from ragsweep.graphs.legal_patterns import Triplet, extract_triplets, normalize_entity

RELATION_LABEL = re.compile(r"^[A-Z][A-Z0-9_]*$")
ENTITY_LABEL = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")

CONTRACT = """Harbour Supply Agreement
This Agreement is made between Northwind Traders Ltd. (the "Supplier")
and Harbour City Council (hereinafter "the Buyer").

Article 1 Definitions
(1) "Goods" means the office furniture listed in Schedule 2.
(2) "Delivery Date" shall mean the date agreed in writing for delivery.
(3) In this Agreement the term "Working Day" means any day other than a public holiday.
(4) "Defect" includes any fault in design, materials or workmanship.

Article 2 Delivery
(1) The Supplier shall deliver the Goods to the Buyer's depot by the Delivery Date.
(2) Goods shall be inspected within 5 Working Days of delivery.
(3) The Buyer may reject any Goods that show a Defect, subject to Article 4.

Article 3 Confidentiality
The Supplier shall not disclose confidential information to any third party.

Article 4 Remedies
(1) No claim may be brought after 12 months from delivery.
(2) Disputes are first referred to the Harbour Procurement Board and the Regional Ombudsman Office.
"""


def triples(text: str, **kwargs) -> set[tuple[str, str, str]]:
    return {(t.subject, t.relation, t.object) for t in extract_triplets(text, **kwargs)}


# --- normalisation -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('"The Controller"', "controller"),
        ("  Each   Authorised\n User ", "authorised user"),
        ("the Tenant's", "tenant"),
        ("Employees'", "employees"),
        ("(4) Tenant", "tenant"),
        ("such Records,", "records"),
        ("the municipal office that keeps the register", "municipal office"),  # relative clause
        ("a notice, in writing", "notice"),  # comma
        ("the right to appeal the decision", "right"),  # "to" + verb
        ("money paid to the Landlord", "money paid to the landlord"),  # "to" + noun phrase is kept
        ("information relating to a named person", "information relating to a named person"),
        ("up to 5 unused days", "5 unused days"),
    ],
)
def test_normalize_entity(raw, expected):
    assert normalize_entity(raw) == expected


@pytest.mark.parametrize(
    "raw",
    ["", "   ", "the", "any of those", "it", "1,250", "(b)", "$ 40.00", "one two three four five six seven eight nine"],
)
def test_normalize_entity_rejects_non_entities(raw):
    assert normalize_entity(raw) == ""


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("§5", "§ 5"),
        ("§ 5", "§ 5"),
        ("Section 4.2", "section 4.2"),
        ("sections 4.2", "section 4.2"),
        ("section 12(b)", "section 12(b)"),
        ("Article 17 (3)", "article 17(3)"),
        ("Art. 17(3)", "article 17(3)"),
        ("Clause 9", "clause 9"),
        ("Schedule 2", "schedule 2"),
        ("Annex IV", "annex iv"),
        ("paragraph (b)", "paragraph (b)"),
    ],
)
def test_section_references_are_canonical(raw, expected):
    assert normalize_entity(raw) == expected


# --- patterns ----------------------------------------------------------------------------------------------


def test_quoted_definitions():
    got = triples(CONTRACT)
    assert ("goods", "DEFINED_AS", "office furniture listed") in got
    assert ("delivery date", "DEFINED_AS", "date agreed in writing for delivery") in got  # "shall mean"
    assert ("working day", "DEFINED_AS", "day") in got  # 'the term "X" means', cut at "other than"
    assert ("defect", "DEFINED_AS", "fault in design") in got  # "includes", cut at the comma
    labels = {(t.subject, t.subject_label) for t in extract_triplets(CONTRACT) if t.relation == "DEFINED_AS"}
    assert labels == {("goods", "TERM"), ("delivery date", "TERM"), ("working day", "TERM"), ("defect", "TERM")}


def test_unquoted_and_glossary_definitions_only_at_clause_start():
    assert triples("(4) Goods means the items listed in the order form.") == {
        ("goods", "DEFINED_AS", "items listed in the order form")
    }
    assert triples("Usage Data: information collected automatically when you use the app.") == {
        ("usage data", "DEFINED_AS", "information collected automatically")
    }
    assert triples("This means that the fee is waived.") == set()


def test_long_definiens_keeps_its_first_eight_words():
    text = '"Personal information" means any information relating to an identified or identifiable living individual.'
    (t,) = extract_triplets(text)
    assert t.object == "information relating to an identified or identifiable living"
    assert len(t.object.split()) == 8


def test_aliases():
    got = triples(CONTRACT)
    assert ("supplier", "ALIAS_OF", "northwind traders ltd") in got
    assert ("buyer", "ALIAS_OF", "harbour city council") in got  # (hereinafter "the Buyer")
    alias = next(t for t in extract_triplets(CONTRACT) if t.relation == "ALIAS_OF")
    assert (alias.subject_label, alias.object_label) == ("PARTY", "PARTY")


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "(3) A Data Custodian must keep a register of disclosures and make it available to the Regulator.",
            ("data custodian", "MUST_KEEP", "register of disclosures"),
        ),
        (
            "The Contractor shall not disclose confidential information to any third party.",
            ("contractor", "SHALL_NOT_DISCLOSE", "confidential information"),
        ),
        ("Visitors must not feed the animals.", ("visitors", "MUST_NOT_FEED", "animals")),
        ("No tenant may sublet the premises without consent.", ("tenant", "MAY_NOT_SUBLET", "premises")),  # "No S"
        ("Every employee is entitled to 20 days of paid leave.", ("employee", "ENTITLED_TO", "20 days of paid leave")),
        ("The Licensee is required to notify the Licensor in writing.", ("licensee", "REQUIRED_TO_NOTIFY", "licensor")),
        (
            "The Auditor shall report annually to the Finance Committee.",  # object after a preposition
            ("auditor", "SHALL_REPORT", "finance committee"),
        ),
        ("The Licensee must not copy, modify or distribute the Software.", ("licensee", "MUST_NOT_COPY", "software")),
        ("Where a complaint is upheld, the Board shall refund the fee.", ("board", "SHALL_REFUND", "fee")),
        ("A tenant who breaches this clause must pay a penalty.", ("tenant", "MUST_PAY", "penalty")),
        ("The Landlord shall carry out urgent repairs.", ("landlord", "SHALL_CARRY_OUT", "urgent repairs")),
    ],
)
def test_duties(sentence, expected):
    assert expected in triples(sentence)


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Backup tapes shall be stored in a locked cabinet.", ("backup tapes", "SHALL_BE_STORED", "locked cabinet")),
        ("Invoices must be paid within 30 days.", ("invoices", "MUST_BE_PAID", "30 days")),
        (
            "Personal records shall be kept securely and shall not be disclosed to the public.",  # subject carried over
            ("personal records", "SHALL_NOT_BE_DISCLOSED", "public"),
        ),
    ],
)
def test_passive_duties(sentence, expected):
    assert expected in triples(sentence)


def test_duty_question_entities_meet_the_chunk():
    """The entity of "What must a data custodian keep?" is the subject of the duty that answers it."""
    (t,) = [t for t in extract_triplets("(3) A Data Custodian must keep a register of disclosures.")]
    assert normalize_entity("a data custodian") == t.subject
    assert t.relation.startswith("MUST_")


def test_cross_references_link_entities_to_sections():
    got = triples("(2) The Tenant may appeal under Section 4.2 to the Housing Tribunal.")
    assert ("tenant", "MAY_APPEAL", "housing tribunal") in got  # the reference is not taken as the object
    assert ("tenant", "REFERS_TO", "section 4.2") in got
    assert ("housing tribunal", "REFERS_TO", "section 4.2") in got
    assert ("data protection officer", "REFERS_TO", "§ 5") in triples(
        '(3) "Data Protection Officer" means the official appointed under §5.'
    )


def test_references_meet_headings():
    heading = extract_triplets("Section 4.2 Appeals")
    assert [(t.subject, t.relation, t.object, t.subject_label, t.object_label) for t in heading] == [
        ("section 4.2", "HAS_TITLE", "appeals", "SECTION", "TOPIC")
    ]
    reference = extract_triplets("A complaint may be escalated by the Tenant under section 4.2.")
    assert {t.object for t in reference if t.relation == "REFERS_TO"} == {"section 4.2"}
    got = triples(CONTRACT)
    assert ("article 4", "HAS_TITLE", "remedies") in got
    assert ("buyer", "REFERS_TO", "article 4") in got  # "subject to Article 4" meets the "Article 4 Remedies" heading
    assert ("goods", "REFERS_TO", "schedule 2") in got


def test_fallback_co_occurrence():
    assert triples("Meetings of the Audit Committee are chaired by the Chief Financial Officer.") == {
        ("audit committee", "CO_OCCURS_WITH", "chief financial officer")
    }
    assert ("harbour procurement board", "CO_OCCURS_WITH", "regional ombudsman office") in triples(CONTRACT)
    many = "Reports go to the Audit Committee, Risk Committee, Data Office, Legal Team, Works Council and Board Office."
    assert len(triples(many)) == 3  # at most three pairs per sentence
    assert triples("This applies to Fleet Services.") == set()  # a lone sentence-initial capital is no entity


def test_nothing_extractable():
    assert extract_triplets("the weather was nice today.") == []
    assert extract_triplets("") == []


def test_defined_terms_are_mentions_later_in_the_chunk():
    text = '"Member" means a person holding a library card.\nMembers and Library Staff meet at the Main Branch.'
    got = triples(text)
    assert ("member", "CO_OCCURS_WITH", "library staff") in got  # plural folded onto the defined term


def test_deterministic_and_deduplicated():
    once = extract_triplets(CONTRACT)
    assert once == extract_triplets(CONTRACT)
    assert extract_triplets(CONTRACT + "\n" + CONTRACT) == once
    keys = [(t.subject, t.relation, t.object) for t in once]
    assert len(keys) == len(set(keys))


def test_max_per_chunk_keeps_the_first_triplets():
    full = extract_triplets(CONTRACT)
    assert len(full) > 5
    assert extract_triplets(CONTRACT, max_per_chunk=5) == [
        Triplet(t.subject, t.relation, t.object, *_labels_in(full[:5], t)) for t in full[:5]
    ]
    assert extract_triplets(CONTRACT, max_per_chunk=0) == []


def _labels_in(triplets: list[Triplet], t: Triplet) -> tuple[str, str]:
    """Labels are unified over the kept triplets only, so recompute them for the truncated list."""
    rank = ["SECTION", "PARTY", "TERM", "TOPIC", "ENTITY"]
    labels: dict[str, str] = {}
    for x in triplets:
        for name, label in ((x.subject, x.subject_label), (x.object, x.object_label)):
            labels[name] = min(labels.get(name, label), label, key=rank.index)
    return labels[t.subject], labels[t.object]


def test_labels_are_valid_graph_identifiers_and_names_are_non_empty():
    text = CONTRACT + "\nThe Vendor's staff shall, where practicable, re-test all devices (see § 9(a)).\n"
    triplets = extract_triplets(text)
    for t in triplets:
        assert RELATION_LABEL.match(t.relation), t
        assert ENTITY_LABEL.match(t.subject_label) and ENTITY_LABEL.match(t.object_label), t
        assert t.subject.strip() and t.object.strip() and t.subject != t.object, t
    names: dict[str, set[str]] = {}
    for t in triplets:
        names.setdefault(t.subject, set()).add(t.subject_label)
        names.setdefault(t.object, set()).add(t.object_label)
    assert all(len(labels) == 1 for labels in names.values())  # one label per entity within a chunk


# --- LlamaIndex integration --------------------------------------------------------------------------------


def _nodes():
    from llama_index.core.schema import TextNode

    return [
        TextNode(id_="n1", text="(3) A Data Custodian must keep a register of disclosures.", metadata={"doc_id": "a"}),
        TextNode(
            id_="n2",
            text="The Data Custodian shall report annually to the Oversight Board under § 4.",
            metadata={"doc_id": "b"},
        ),
    ]


def test_extractor_sets_kg_metadata():
    from llama_index.core.graph_stores.types import KG_NODES_KEY, KG_RELATIONS_KEY, EntityNode, Relation

    nodes = _nodes()
    previous = EntityNode(name="earlier entity")
    nodes[0].metadata[KG_NODES_KEY] = [previous]
    out = LegalPatternExtractor()(nodes)
    assert out is nodes
    first = nodes[0].metadata
    assert first[KG_NODES_KEY][0] is previous  # existing lists are appended to, as SimpleLLMPathExtractor does
    assert all(isinstance(n, EntityNode) for n in first[KG_NODES_KEY])
    (rel,) = first[KG_RELATIONS_KEY]
    assert isinstance(rel, Relation)
    assert (rel.source_id, rel.label, rel.target_id) == ("data custodian", "MUST_KEEP", "register of disclosures")
    names = {n.name: n for n in first[KG_NODES_KEY]}
    assert {rel.source_id, rel.target_id} <= set(names)
    assert names["data custodian"].label == "PARTY" and names["data custodian"].properties["doc_id"] == "a"
    assert rel.properties == {"doc_id": "a"}
    second = {(r.source_id, r.label, r.target_id) for r in nodes[1].metadata[KG_RELATIONS_KEY]}
    assert second == {
        ("data custodian", "SHALL_REPORT", "oversight board"),
        ("data custodian", "REFERS_TO", "§ 4"),
        ("oversight board", "REFERS_TO", "§ 4"),
    }


def test_extractor_limit_and_async():
    import asyncio

    from llama_index.core.graph_stores.types import KG_RELATIONS_KEY

    nodes = asyncio.run(LegalPatternExtractor(max_triplets_per_chunk=1).acall(_nodes()))
    assert [len(n.metadata[KG_RELATIONS_KEY]) for n in nodes] == [1, 1]


def test_property_graph_index_builds_offline():
    from llama_index.core import PropertyGraphIndex
    from llama_index.core.graph_stores import SimplePropertyGraphStore

    index = PropertyGraphIndex(
        nodes=_nodes(),
        kg_extractors=[LegalPatternExtractor()],
        property_graph_store=SimplePropertyGraphStore(),
        embed_kg_nodes=False,
        use_async=False,
    )
    found = {
        (s.name, r.label, o.name)
        for s, r, o in index.property_graph_store.get_triplets(entity_names=["data custodian"])
    }
    assert ("data custodian", "MUST_KEEP", "register of disclosures") in found
    assert ("data custodian", "SHALL_REPORT", "oversight board") in found
    assert {o.name for _, _, o in index.property_graph_store.get_triplets(relation_names=["REFERS_TO"])} == {"§ 4"}
