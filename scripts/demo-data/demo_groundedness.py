"""Build the demo groundedness set (``groundedness.jsonl``): labelled answers for meta-evaluating
groundedness detectors and LLM judges offline (``ragsweep judges evaluate``).

Each item pairs one demo question that has gold evidence (``questions.jsonl``) with contexts cut from
that evidence and one hand-written answer, as a RAG system might give it, with two human labels:
``grounded`` (is every claim of the answer supported by the contexts?) and ``correctness`` (1-5 against
the question's reference answer). The answers were written for the ragsweep project, item by item,
after reading the contexts and the documents they come from; like the rest of the demo dataset they
are original, fictional and dedicated to the public domain (CC0 1.0). No answer is machine-generated
or a template.

Categories (``category``), 24 items each:

* ``supported``: every claim of the answer is stated in the contexts, often paraphrased; a
  conclusion drawn directly from them (a comparison of two figures, a date two years after
  another) counts as stated. Some answers are incomplete, which lowers ``correctness`` only.
* ``unsupported``: the answer's main claim is contradicted by the contexts or absent from them:
  a changed number, period, unit or base, the wrong body, a dropped condition, an invented
  obligation. Some errors are obvious, some subtle ("per kilometre" for "per mile", "after" for
  "before", "a one-off fee" for an annual one).
* ``misattributed``: the answer states a rule that is true of another document or party of the
  corpus as if it were the rule of the document or party the contexts are about (Ashby Vale's
  procurement figures as Dunmore's, the 2023 rental ordinance's limit as the 2025 one's, the leave
  policy's pre-amendment figures as the current ones, Skyvault's 48-hour breach deadline as the
  City's), or gives the contexts' rule to the wrong party (two figures swapped in a comparison, the
  HR Director's waiver as the Line Manager's). Each item's comment names where the claim is true.
* ``partly_supported``: one or more claims are supported, plus at least one that the contexts do not
  give: an extra condition, figure, exception or duty. Most extras are invented; in three items
  (``q011``, ``q015``, ``q046``) the extra claim is true elsewhere in the same document but not in
  the contexts, so the answer is correct (``correctness`` 5) yet not grounded.

How labels were assigned: ``grounded`` is True exactly for ``supported``; it is judged against the
contexts built below, with the question taken as given (an answer may name the council or document
the question asks about even where the context line does not). Every claim of a non-supported
answer was checked against each context of its item, including the extra nearby line (below), so
that the extra line never supports it. ``correctness`` compares the answer with the question's
reference answer: 5 fully correct and complete, 4 correct but incomplete or slightly imprecise,
3 partly correct, 2 mostly wrong, 1 wrong. It is independent of ``grounded``: a grounded answer can
be incomplete (4 or 3), and an ungrounded one correct (the three items above).

Contexts: the text of each gold evidence span of the question, widened to whole lines of its
document (from the start of the line holding the span's start to the end of the line holding its
end; the plain documents put one clause per line, the PDF-like ones break lines inside sentences,
so their contexts start and end mid-sentence as a PDF chunk would), in evidence order, without
repeats. Every third item (index ``i % 3 == 2``) gets one more context: the next non-empty line of
the same document after the last evidence line, an irrelevant but nearby passage such as a
retriever returns (often the next clause, sometimes a section heading or a sentence fragment).
Spans without offsets are located with ``locate.find_span``, then under ``normalise`` (curly quotes,
line-break hyphens, ligatures). Questions whose evidence has no ``doc_id`` (q093) or needs the fuzzy
tier (q086) are not used.

Record format, one JSON object per line, in ``ITEMS`` order: ``id`` (g001...), ``question``,
``contexts``, ``answer``, ``reference_answer`` (the demo question's, which the correctness judge
compares against), ``grounded``, ``correctness``, ``category``, ``qid``.

Regenerate from the project root (deterministic):

    .venv/bin/python scripts/demo-data/demo_groundedness.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEMO = HERE.parents[1] / "src" / "ragsweep" / "datasets" / "demo"  # where the package reads them
CATEGORIES = ("supported", "unsupported", "misattributed", "partly_supported")

# (qid, category, answer, correctness 1-5). Comments say what is wrong with a non-supported answer,
# or for a misattributed one where its claim is true.
ITEMS: list[tuple[str, str, str, int]] = [
    ("q004", "supported", "The city keeps general correspondence for three years, counted from the date a letter is received or sent out.", 5),
    ("q002", "unsupported", "A full-time employee gets 25 working days of paid annual leave per Leave Year, and public holidays are counted as part of those 25 days.", 2),  # contradicts 'in addition to public holidays'
    ("q001", "misattributed", "The Controller has 48 hours from becoming aware of the breach to notify the Data Protection Officer.", 1),  # 48 hours is Skyvault's breach deadline (cloud-data-processing-agreement § 5); the City's is 72 hours
    ("q011", "partly_supported", "Midnight on a Tuesday falls within Quiet Hours, which run from 22:00 to 07:00 on weekdays, so noise measured at your boundary may not exceed 45 dB(A).", 5),  # the Quiet Hours definition is true (noise-ordinance § 1) but not in the contexts
    ("q007", "supported", "If you pay within 14 days of the notice, the penalty comes down to $25.", 4),  # does not say the full penalty ($45) or the saving
    ("q003", "unsupported", "An appeal goes to the Vice-Chancellor and must be lodged within 28 days of the Integrity Panel's decision.", 1),  # wrong body and period (Pro-Vice-Chancellor (Education), 14 days)
    ("q005", "misattributed", "The Tessaly Public Library does not charge late fees; instead, borrowing is suspended once an item is more than 30 days overdue.", 1),  # the rule of Dunmore Regional Libraries (§ 5)
    ("q006", "partly_supported", "The recipient has to acknowledge receipt within 7 days, except for anonymous disclosures, which need no acknowledgement.", 3),  # invented exception for anonymous disclosures
    ("q010", "supported", "A street food vendor licence costs $320 a year.", 5),
    ("q008", "unsupported", "Passwords must be at least 12 characters long and must be changed every 90 days.", 1),  # 12 for 14; the 90-day change is invented
    ("q014", "misattributed", "Dunmore Regional Council's open tenders must be advertised on the Council's procurement portal for at least 30 days.", 1),  # 30 days is Ashby Vale's period; Dunmore's is 35
    ("q009", "partly_supported", "Indirect costs can be at most 15 percent of the Project's direct costs, and they must be shown as a separate line in the approved budget.", 4),  # the separate budget line is invented
    ("q015", "supported", "You may not fly it higher than 120 metres above ground level.", 5),
    ("q009", "unsupported", "The Foundation limits indirect costs to 15 percent of the total grant.", 2),  # the base is the Project's direct costs, not the grant
    ("q063", "misattributed", "Ashby Vale has to use an open tender once a contract is worth $100,000 or more, and the tender must be advertised for at least 35 days.", 1),  # Dunmore's threshold and period; Ashby Vale's are $150,000 and 30 days
    ("q012", "partly_supported", "The minimum age is 16. Volunteers under 18 need the written consent of a parent or guardian and must be accompanied by an adult volunteer on every shift.", 3),  # the accompaniment rule is invented
    ("q017", "supported", "Each speaker gets up to 3 minutes, within a public comment period of at least 30 minutes at every regular meeting.", 5),
    ("q012", "unsupported", "You must be 18 or over to volunteer with the Greenway Trust, and no exceptions are made for younger people.", 1),  # minimum age is 16 (under 18 with consent)
    ("q042", "misattributed", "No, both are kept for the same time: Tessaly keeps financial records for 7 years, and Dunmore Regional Council also keeps its procurement records for 7 years after the contract ends.", 1),  # 7 years is Ashby Vale's record keeping; Dunmore's is 6
    ("q013", "partly_supported", "You are covered for 90 days from delivery: during that time the Software should perform substantially as its documentation describes. The cover can be extended to a full year by buying premium support.", 3),  # the paid extension is invented
    ("q022", "supported", "Under the bylaw a Drone is an unmanned aircraft with a take-off mass of 250 grams or more, so a lighter aircraft is not a Drone.", 5),
    ("q016", "unsupported", "Skyvault has to tell the customer about a new Sub-processor within 30 days after engaging it.", 2),  # the notice is due at least 30 days before, not after
    ("q077", "misattributed", "No in both councils: Dunmore and Ashby Vale each require at least three written quotations for a $20,000 contract.", 2),  # Dunmore's three-quotation band applied to Ashby Vale, where one quotation suffices below $25,000
    ("q015", "partly_supported", "Not higher than 120 metres above ground level, and to fly over a public park you also need a City Drone Permit.", 5),  # the permit rule is true (drone-operation-bylaw § 3) but not in the contexts
    ("q023", "supported", "Going into a Closed Session takes a two-thirds vote of the members present, and the reasons have to be stated in open session.", 5),
    ("q018", "unsupported", "A Meridian Scholar needs to keep a grade point average of 3.0 or higher.", 1),  # 3.0 for 3.2
    ("q065", "misattributed", "Dunmore Regional Council requires price to make up at least 30 percent of the evaluation score.", 1),  # 30 percent is Ashby Vale's; Dunmore's is 40
    ("q017", "partly_supported", "Each speaker may talk for up to 3 minutes in the public comment period, but has to sign up with the clerk before the meeting opens.", 4),  # the sign-up requirement is invented
    ("q025", "supported", "The Controller must answer within 30 days of receiving your request, free of charge. You have to ask before the footage is erased, which happens after 30 days unless the recording is needed as evidence in pending proceedings.", 5),
    ("q019", "unsupported", "A single payment of $20 registers a desexed cat with the city for its whole life.", 2),  # the $20 fee is annual, not one-off
    ("q066", "misattributed", "A member of Dunmore Regional Libraries can borrow a DVD for 7 days.", 1),  # 7 days is the Tessaly Public Library's loan period; Dunmore's is 14
    ("q020", "partly_supported", "The Mayor appoints the Data Protection Officer for a four-year term, renewable once, and the appointment must be confirmed by a vote of the City Council.", 3),  # Council confirmation is invented
    ("q029", "supported", "At $60,000 the contract falls in the band from $10,000 up to $100,000, so at least three written quotations are required. Where practicable, at least one of them should be requested from a small business in the Dunmore region.", 5),
    ("q024", "unsupported", "The Trust pays volunteers 40 cents per kilometre for journeys in a private car.", 2),  # per mile, not per kilometre
    ("q043", "misattributed", "CCTV footage is kept longer: it is erased after 30 days, while a member's borrowing history is deleted 14 days after the item comes back.", 1),  # 14 days is Dunmore Regional Libraries' rule; Tessaly's is 30
    ("q021", "partly_supported", "It may not trade within 50 metres of a school entrance during school hours, and vans selling hot food must keep 100 metres away.", 3),  # the 100-metre rule for hot food is invented
    ("q033", "supported", "An unpaid penalty goes up to $90 once 28 days have passed. You can appeal to the Parking Adjudicator within 28 days of the notice, and the penalty is not enforced while the appeal is pending.", 5),
    ("q031", "unsupported", "The panel is made up of three members of academic staff, with no student member, and the student must be given 5 days' notice of the hearing.", 1),  # two staff and a student representative; 7 days' notice
    ("q060", "misattributed", "The 2025 Ordinance lets a host rent out a whole dwelling for up to 90 nights per calendar year.", 1),  # 90 nights is the 2023 Ordinance's limit; 2025 has 60
    ("q024", "partly_supported", "Car travel is reimbursed at $0.40 per mile, but only for journeys of more than 10 miles.", 3),  # the minimum distance is invented
    ("q035", "supported", "They are placed on probation for one semester, and if they miss the requirements a second time the scholarship ends. The requirements are a grade point average of at least 3.2 and passing at least 75 percent of the credits attempted in each Award Year.", 5),
    ("q032", "unsupported", "The final 20 percent is paid once the interim report is approved, and the final report is due within 90 days after the Grant Period ends.", 1),  # final 10 percent on approval of the final report, due within 60 days
    ("q061", "misattributed", "Under the 2023 Ordinance a registration cost $240 and was valid for one year from the date of issue.", 1),  # the 2025 Ordinance's fee and validity; 2023 had $150 and 2 years
    ("q026", "partly_supported", "Not on their own: an increase above 4 percent needs the Rent Board's approval, and the Board must decide the Landlord's application within 45 days. The Tenant can object to the Board within 14 days of being told about the application.", 4),  # the tenant's objection right is invented
    ("q040", "supported", "The Landlord's notice is longer: at least 60 days' written notice to end a periodic tenancy, whereas either party can stop the Quillfeather licence from renewing with at least 30 days' written notice before the term ends.", 5),
    ("q038", "unsupported", "Yes. On Saturdays noisy construction work is allowed from 08:00 to 18:00, so the builder needs no permit for the afternoon.", 1),  # Saturday hours end at 13:00; a permit is needed
    ("q062", "misattributed", "Letting a dwelling without a valid registration can be fined up to $1,000 under the 2025 Ordinance.", 1),  # $1,000 is the 2023 Ordinance's maximum; 2025 has $2,500
    ("q028", "partly_supported", "No. The cap, equal to the fees paid in the 12 months before the claim, does not apply to liability arising under § 7, and it does not apply to claims for loss of data either.", 3),  # the data-loss exception is invented
    ("q048", "supported", "The parking penalty recipient: they have 28 days from the notice to appeal to the Parking Adjudicator, while a food vendor has only 10 days to request a review of a suspension.", 5),
    ("q069", "unsupported", "Since the amendment, a medical certificate is required for any sick leave lasting more than 5 working days.", 1),  # more than 10 calendar days
    ("q068", "misattributed", "Up to 5 unused days may be carried over into the next Leave Year, and they must be taken by 30 June.", 1),  # the original Policy's rule, which the Amendment replaced (8 days, 30 September)
    ("q030", "partly_supported", "No. Invoices are normally kept for 7 years after the end of their financial year, but a record under a litigation hold cannot be disposed of until the City Attorney lifts the hold in writing, and it must then be kept for one more year.", 4),  # the extra year after the hold is invented
    ("q049", "supported", "The meeting recordings, by far: they are retained for 2 years after the meeting, while the University keeps its network security logs for 90 days.", 5),
    ("q075", "unsupported", "Approved minutes are kept for 20 years, after which they are destroyed.", 1),  # kept permanently; transferred to the City Archive after 20 years
    ("q071", "misattributed", "Employees with at least six months of service get 26 weeks of parental leave, 16 of them at full salary, and they must give at least 60 days' notice of the start date.", 2),  # the original Policy's parental leave, replaced by the Amendment (three months, 32 weeks, 20 paid); notice is right
    ("q031", "partly_supported", "The panel is two members of academic staff plus one student representative nominated by the Students' Union, and it is chaired by the Academic Integrity Officer. The student gets at least 7 days' notice of the hearing and can bring one person of their choice.", 4),  # the chairing by the Academic Integrity Officer is invented
    ("q061", "supported", "The 2023 Ordinance charged a registration fee of $150, and a registration was valid for 2 years from the date of issue.", 5),
    ("q087", "unsupported", "The heating has to keep a bedroom at 21 degrees Celsius or more all year round.", 1),  # 18 degrees, in the heating season 1 October to 30 April
    ("q073", "misattributed", "A heating failure counts as an urgent repair, so the landlord must carry out the repair within 48 hours of being notified.", 1),  # 48 hours is the principal Regulation's period, which the 2025 amendment replaced with 24
    ("q032", "partly_supported", "The final 10 percent is only paid once the Foundation approves the final report, which is due within 60 days after the end of the Grant Period; the Foundation then has 30 days to approve it.", 4),  # the Foundation's 30-day approval period is invented
    ("q063", "supported", "From an estimated value of $150,000 the contract must go to open tender, and the tender has to be advertised on the Council's procurement portal for at least 30 days.", 5),
    ("q091", "unsupported", "You have to complain to your organisation's HR department within 3 months of being demoted.", 1),  # to the Ombudsman, within 6 months
    ("q045", "misattributed", "The residential parking permit costs more: $75 a year for a first vehicle, against $60 for a City Drone Permit.", 1),  # the two fees swapped (drone permit $75 for 12 months, first-vehicle parking permit $60 a year)
    ("q035", "partly_supported", "A Scholar whose grade point average drops below 3.2 is put on probation for one semester, during which the instalments are halved; missing the requirements a second time ends the scholarship.", 3),  # halved instalments during probation are invented
    ("q065", "supported", "Price has to account for at least 40 percent of the total evaluation score.", 5),
    ("q084", "unsupported", "Files like that can be kept on an encrypted personal laptop, as long as the Data Steward has approved it.", 1),  # restricted data are never kept on personal devices
    ("q019", "misattributed", "The yearly fee for registering a desexed cat is $40.", 1),  # $40 is the fee for an animal that is not desexed; desexed is $20
    ("q037", "partly_supported", "Skyvault returns the data in a machine-readable format if the customer asks within 30 days, deletes it from its live systems within 90 days after termination and overwrites backup copies within 180 days, and it then confirms the deletion to the customer in writing.", 4),  # the written confirmation is invented
    ("q081", "supported", "The report on lost restricted research data: it is due within 24 hours of discovery, whereas access to the content of a user's account must be reported within 5 working days.", 5),
    ("q020", "unsupported", "The City Council elects the Data Protection Officer for a single six-year term that cannot be renewed.", 1),  # appointed by the Mayor for four years, renewable once
    ("q034", "misattributed", "The Chief Information Officer must approve the access in writing beforehand, and afterwards it has to be reported to the Data Protection Officer within 24 hours.", 2),  # 24 hours is the research data policy's deadline for restricted-data incidents; account access is 5 working days
    ("q038", "partly_supported", "Not without a permit: on Saturdays noisy construction work is allowed only from 08:00 to 13:00. For the afternoon the builder needs an extended hours construction permit, which costs $60 and must be applied for at least 10 working days ahead, and must also warn the neighbours in writing.", 4),  # the written warning to neighbours is invented
    ("q083", "supported", "Research data that back up a publication must be kept for at least ten years from the date of publication.", 5),
    ("q092", "unsupported", "Only the completed form STR-1 and a copy of the host's photo ID; no plans or photographs are needed.", 1),  # contradicts the list of required documents
    ("q036", "misattributed", "The Integrity Panel can order the Scholar to repay all instalments paid in the current Award Year, and it may also suspend the student for up to one year.", 3),  # repayment is the Scholar's duty under the Meridian terms (§ 7), not a power of the Integrity Panel; omits expulsion
    ("q039", "partly_supported", "The owner must keep the dog muzzled in public, hold liability insurance of at least $500,000 and complete a dog-handling course within 3 months. The declaration can be appealed within 21 days.", 3),  # the dog-handling course is invented
    ("q085", "supported", "The Principal Investigator has to submit a data management plan to the Research Office within 3 months of the start of the externally funded project.", 4),  # omits that the plan must be kept up to date (that clause is cut off in the context)
    ("q022", "unsupported", "Any unmanned aircraft flown in the city counts as a Drone under the bylaw, whatever it weighs.", 1),  # only 250 grams or more
    ("q041", "misattributed", "The City Controller has less time: it must notify its Data Protection Officer within 48 hours, whereas Skyvault has 72 hours to notify its customer.", 1),  # the two deadlines swapped (City 72 hours, Skyvault 48)
    ("q046", "partly_supported", "Yes. A first breach of the drone bylaw costs $300, more than the $200 fixed noise penalty, and a second drone offence within 2 years is fined $750.", 5),  # the second-offence fine is true (drone-operation-bylaw § 7(2)) but not in the contexts
    ("q089", "supported", "A dripping tap falls under the general rule for repairs: any repair the landlord is responsible for, other than the urgent kind, must be completed within 14 days of the landlord being notified.", 5),
    ("q050", "unsupported", "Tessaly keeps personnel files for 10 years after employment ends, while the University deletes integrity findings as soon as the student graduates.", 1),  # 6 years and 5 years after the student leaves
    ("q044", "misattributed", "The student has longer, with 21 days to appeal to the Pro-Vice-Chancellor (Education), compared with 14 days for the dog owner.", 1),  # the two appeal periods swapped (student 14, dog owner 21)
    ("q047", "partly_supported", "The drone permit: the Parks Department decides within 15 working days, while a complete food vendor application can take 28 days. Either decision can be appealed within 14 days.", 4),  # the appeal right is invented
    ("q090", "supported", "Only if your permit carries a night endorsement; without one, no flight may take place between sunset and sunrise.", 5),
    ("q089", "unsupported", "There is no deadline for minor repairs like a dripping tap; the owner only has to fix them before the tenancy ends.", 1),  # other repairs are due within 14 days
    ("q027", "misattributed", "The usual notice is at least 60 days before the intended start date, but in an emergency the employee's Line Manager can waive it.", 2),  # the waiver is the HR Director's power, not the Line Manager's
    ("q070", "partly_supported", "Yes. A registration issued under the 2023 Ordinance stays valid until it expires, and since it lasted 2 years, a May 2024 registration runs until May 2026. The host must, however, re-confirm it with the Housing Department within 3 months of the 2025 Ordinance coming into force.", 3),  # the re-confirmation duty is invented
    ("q094", "supported", "The Data Steward can grant the exemption, on legal, ethical or commercial grounds.", 5),
    ("q094", "unsupported", "Only the University's Research Ethics Committee can grant an exemption, and only on ethical grounds.", 1),  # the Data Steward, on legal, ethical or commercial grounds
    ("q088", "misattributed", "The animal is held for 7 days, and to get it back you pay a release fee of $150 plus $20 for each day it was kept.", 2),  # the City Vehicle Pound's fees (parking-ordinance § 6); the animal release fee is $80
    ("q079", "partly_supported", "Before the amendment up to 5 unused days could be carried over and had to be used by 30 June; now up to 8 days can be carried over, to be used by 30 September. Any carried-over days still untaken after that are paid out.", 4),  # the payout of untaken days is invented
    ("q071", "supported", "An employee with at least three months of service is now entitled to 32 weeks of parental leave, and the first 20 weeks are paid at full salary.", 3),  # omits the 60 days' notice the question asks for
    ("q062", "unsupported", "The 2025 Ordinance caps the fine for letting without a valid registration at $5,000.", 1),  # up to $2,500
    ("q096", "misattributed", "The fee is $85 per dwelling, payable every 3 years, and letting a dwelling without registering can be fined up to $2,500.", 2),  # $2,500 is the Short-Term Rental Ordinance 2025's fine for unregistered letting; here it is $2,000
    ("q095", "partly_supported", "The Chief Executive may award a contract worth up to $50,000 without quotations and must report the award to the Council at its next meeting. Such an emergency contract may run for no more than six months.", 4),  # the six-month limit is invented
]


def _read_jsonl(path: Path) -> list[dict]:
    with Path(path).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _locate(text: str, ev: dict, qid: str) -> tuple[int, int]:
    """``[start, end)`` of one evidence span in its document ``text``."""
    from ragsweep.datasets.locate import find_span
    from ragsweep.datasets.normalise import normalise, normalise_needle

    if "start" in ev and "end" in ev:
        start, end = int(ev["start"]), int(ev["end"])
        if "text" in ev and text[start:end] != ev["text"]:
            raise ValueError(f"{qid}: evidence offsets do not match its text in {ev['doc_id']!r}")
        return start, end
    if not ev.get("text"):
        raise ValueError(f"{qid}: evidence has neither offsets nor text")
    span = find_span(text, ev["text"])
    if span is not None:
        return span
    norm, needle = normalise(text), normalise_needle(ev["text"])
    i = norm.text.find(needle) if needle else -1
    if i < 0 or norm.text.find(needle, i + 1) >= 0:
        raise ValueError(f"{qid}: evidence not found exactly once in {ev['doc_id']!r}: {ev['text']!r}")
    return norm.span(i, i + len(needle))


def _lines(text: str, start: int, end: int) -> tuple[int, int]:
    """The span widened to whole lines: start of its first line to end of its last line."""
    a = text.rfind("\n", 0, start) + 1
    b = text.find("\n", end)
    return a, (len(text) if b < 0 else b)


def _next_line(text: str, end: int) -> str | None:
    """The next non-empty line after offset ``end`` (the end of a line), or None at the document's end."""
    for line in text[end:].split("\n"):
        if line.strip():
            return line
    return None


def _contexts(q: dict, docs: dict[str, str], extra: bool) -> list[str]:
    qid = q["id"]
    if not q.get("evidence"):
        raise ValueError(f"{qid}: question has no gold evidence")
    contexts: list[str] = []
    last: tuple[str, int] | None = None
    for ev in q["evidence"]:
        doc_id = ev.get("doc_id")
        if doc_id not in docs:
            raise ValueError(f"{qid}: evidence without a known doc_id ({doc_id!r})")
        text = docs[doc_id]
        a, b = _lines(text, *_locate(text, ev, qid))
        if text[a:b] not in contexts:
            contexts.append(text[a:b])
        last = (doc_id, b)
    if extra:
        doc_id, b = last
        line = _next_line(docs[doc_id], b)
        if line is None:
            raise ValueError(f"{qid}: its evidence ends {doc_id!r}, so it has no next line; move the item "
                             "to an index with i % 3 != 2")
        contexts.append(line)
    return contexts


def build(corpus_path: str | Path, questions_path: str | Path) -> list[dict]:
    """The labelled records, one per item of ``ITEMS`` in order (format: module docstring)."""
    docs = {d["id"]: d["text"] for d in _read_jsonl(Path(corpus_path))}
    questions = {q["id"]: q for q in _read_jsonl(Path(questions_path))}
    seen: set[tuple[str, str]] = set()
    records = []
    for i, (qid, category, answer, correctness) in enumerate(ITEMS):
        if qid not in questions:
            raise ValueError(f"item {i}: unknown question {qid!r}")
        if not questions[qid].get("evidence"):
            raise ValueError(f"item {i}: question {qid} has no gold evidence")
        if category not in CATEGORIES:
            raise ValueError(f"item {i}: unknown category {category!r}")
        if not isinstance(correctness, int) or isinstance(correctness, bool) or not 1 <= correctness <= 5:
            raise ValueError(f"item {i}: correctness must be an integer 1-5, got {correctness!r}")
        if not answer.strip():
            raise ValueError(f"item {i}: empty answer")
        if (qid, answer) in seen:
            raise ValueError(f"item {i}: duplicate (qid, answer) for {qid}")
        seen.add((qid, answer))
        q = questions[qid]
        records.append({
            "id": f"g{i + 1:03d}",
            "question": q["question"],
            "contexts": _contexts(q, docs, extra=i % 3 == 2),
            "answer": answer,
            "reference_answer": q["reference_answer"],
            "grounded": category == "supported",
            "correctness": correctness,
            "category": category,
            "qid": qid,
        })
    return records


def main() -> int:
    records = build(DEMO / "corpus.jsonl", DEMO / "questions.jsonl")
    out = DEMO / "groundedness.jsonl"
    with out.open("w", encoding="utf-8", newline="\n") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    counts = Counter(r["category"] for r in records)
    print(f"wrote {len(records)} items to {out.name}: {dict(counts)}; "
          f"{len({r['qid'] for r in records})} distinct questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
