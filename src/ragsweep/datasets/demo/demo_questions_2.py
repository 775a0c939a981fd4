"""Demo questions, part 2 of 3: (type, question, reference answer, [(doc_id, quote), ...]); types in part 1."""

from demo_questions_1 import COMPARATIVE, COMPLEX, MULTI_HOP, OUT

QUESTIONS: list[tuple[str, str, str, list[tuple[str, str]]]] = [
    (
        COMPLEX,
        "An invoice paid by the City of Tessaly is eight years old but is the subject of a litigation hold. May it be destroyed?",
        "No. Financial records such as invoices are normally kept for 7 years after the end of their financial year, but a record under a litigation hold may not be disposed of, whatever the retention period, until the City Attorney lifts the hold in writing.",
        [
            ("records-retention-schedule", "Financial records, including invoices and payment vouchers, shall be retained for 7 years after the end of the financial year to which they relate."),
            ("records-retention-schedule", "No record that is subject to a litigation hold may be disposed of, regardless of the periods in § 3, until the City Attorney lifts the hold in writing."),
        ],
    ),
    (
        COMPLEX,
        "Who sits on a Kestrel Valley University Integrity Panel, and what procedural rights does the student have before the hearing?",
        "The panel has two members of academic staff and one student representative nominated by the Students' Union. The student must get at least 7 days' notice of the hearing and may bring one person of their choice.",
        [
            ("academic-integrity-code", "An Integrity Panel consists of two members of academic staff and one student representative nominated by the Students' Union."),
            ("academic-integrity-code", "The student shall receive at least 7 days' notice of the hearing and may be accompanied by one person of their choice."),
        ],
    ),
    (
        COMPLEX,
        "When does a Harlan Braddock Foundation grantee receive the last part of its grant, and when is the report that releases it due?",
        "The final 10 percent of the grant is held back until the Foundation approves the final report. That final narrative and financial report is due within 60 days after the end of the 18-month Grant Period.",
        [
            ("grant-agreement", "The final 10 percent of the grant is retained until the Foundation approves the final report."),
            ("grant-agreement", "The Grantee shall submit a final narrative and financial report within 60 days after the end of the Grant Period."),
        ],
    ),
    (
        COMPLEX,
        "I got a Tessaly parking penalty and want to contest it. What happens to the amount if I leave it unpaid past 28 days, and does an appeal help?",
        "An unpaid penalty rises to $90 after 28 days. However, you may appeal to the Parking Adjudicator within 28 days of the notice, and enforcement is suspended while the appeal is pending.",
        [
            ("parking-ordinance", "If the penalty remains unpaid after 28 days, it increases to $90."),
            ("parking-ordinance", "The recipient of a penalty notice may appeal to the Parking Adjudicator within 28 days of the notice."),
            ("parking-ordinance", "Enforcement of the penalty is suspended while an appeal is pending."),
        ],
    ),
    (
        COMPLEX,
        "What must Kestrel Valley University do before and after reading an individual user's email?",
        "It needs the written approval of the Chief Information Officer before accessing the content of a user's email. The access must then be recorded and reported to the University's Data Protection Officer within 5 working days.",
        [
            ("acceptable-use-policy", "The content of an individual User's email may be accessed only with the written approval of the Chief Information Officer, subject to § 7."),
            ("acceptable-use-policy", "Any access to the content of an individual User's account must be recorded and reported to the University's Data Protection Officer within 5 working days."),
        ],
    ),
    (
        COMPLEX,
        "What happens to a Meridian Scholar whose grade point average falls below the required level?",
        "A Scholar must keep a grade point average of at least 3.2 and pass at least 75 percent of credits attempted. One who does not is placed on probation for one semester, and if the requirements are missed a second time the scholarship ends.",
        [
            ("scholarship-terms", "To keep the scholarship, a Scholar must maintain a grade point average of at least 3.2 and pass at least 75 percent of the credits attempted in each Award Year."),
            ("scholarship-terms", "A Scholar who does not meet the requirements of § 4 is placed on probation for one semester."),
            ("scholarship-terms", "If the Scholar fails to meet the requirements a second time, the scholarship ends."),
        ],
    ),
    (
        MULTI_HOP,
        "What are the consequences for a Meridian Scholar at Kestrel Valley University who is found to have engaged in contract cheating?",
        "Under the scholarship terms, the Scholar must repay all instalments paid in the current Award Year. Under the Academic Integrity Code, the Integrity Panel may also suspend the student for up to one year or recommend expulsion to the Senate.",
        [
            ("scholarship-terms", "A Scholar who is found to have committed contract cheating under the Kestrel Valley University Academic Integrity Code shall repay all instalments paid in the current Award Year."),
            ("academic-integrity-code", "For contract cheating, the Integrity Panel may suspend the student for up to one year or recommend expulsion to the Senate."),
        ],
    ),
    (
        COMPLEX,
        "After a Skyvault hosting contract ends, what happens to the customer's personal data?",
        "Skyvault must return the data in a machine-readable format if the customer asks within 30 days, delete it from live systems within 90 days after termination, and overwrite backup copies within 180 days after termination.",
        [
            ("cloud-data-processing-agreement", "On termination, the Processor shall return Customer Personal Data in a machine-readable format if the Controller requests it within 30 days."),
            ("cloud-data-processing-agreement", "The Processor shall delete all Customer Personal Data from its live systems within 90 days after termination."),
            ("cloud-data-processing-agreement", "Copies held in backups shall be overwritten within 180 days after termination."),
        ],
    ),
    (
        COMPLEX,
        "A builder in Tessaly wants to do noisy work on a Saturday afternoon. Is that allowed, and what would they need?",
        "Not without a permit: on Saturdays noisy construction work is allowed only from 08:00 to 13:00. Work outside those hours needs an extended hours construction permit, which costs $60 and must be applied for at least 10 working days in advance.",
        [
            ("noise-ordinance", "Noisy construction work is permitted only from 07:30 to 18:00 on weekdays and from 08:00 to 13:00 on Saturdays"),
            ("noise-ordinance", "Work outside these hours requires an extended hours construction permit, which costs $60 and must be applied for at least 10 working days in advance."),
        ],
    ),
    (
        COMPLEX,
        "What obligations does the owner of a dog declared dangerous in Tessaly have, and can the declaration be challenged?",
        "The owner must keep the dog muzzled in public and hold liability insurance of at least $500,000. The owner may appeal against the declaration within 21 days.",
        [
            ("pet-ownership-regulation", "The Owner of a dangerous dog must keep it muzzled in public and hold liability insurance of at least $500,000."),
            ("pet-ownership-regulation", "The Owner may appeal against a declaration within 21 days."),
        ],
    ),
    # ---- comparative: two documents, one span each -------------------------------------------
    (
        COMPARATIVE,
        "Which requires more notice: a Tessaly Landlord ending a periodic tenancy, or a party declining to renew the Quillfeather Ledger licence?",
        "The Landlord's notice is longer: at least 60 days' written notice, compared with at least 30 days' written notice of non-renewal under the Quillfeather licence.",
        [
            ("tenancy-regulation", "by giving at least 60 days' written notice to the Tenant"),
            ("software-licence", "unless either party gives at least 30 days' written notice of non-renewal before the end of the current term"),
        ],
    ),
    (
        COMPARATIVE,
        "Who has less time to report a personal data breach: a City of Tessaly Controller reporting to its Data Protection Officer, or Skyvault reporting to its customer?",
        "Skyvault has less time: it must notify the customer within 48 hours, whereas a City Controller has 72 hours to notify the Data Protection Officer.",
        [
            ("data-protection-ordinance", "A Controller shall notify the Data Protection Officer of a personal data breach within 72 hours of becoming aware of it."),
            ("cloud-data-processing-agreement", "in any event within 48 hours, after becoming aware of a personal data breach affecting Customer Personal Data"),
        ],
    ),
    (
        COMPARATIVE,
        "Are Tessaly's financial records kept longer than Dunmore Regional Council's procurement records?",
        "Yes. Tessaly keeps financial records for 7 years after the end of the financial year, while Dunmore keeps procurement records for 6 years after the contract ends.",
        [
            ("records-retention-schedule", "Financial records, including invoices and payment vouchers, shall be retained for 7 years after the end of the financial year to which they relate."),
            ("procurement-rule", "The Procurement Officer shall keep all procurement records for 6 years after the contract ends."),
        ],
    ),
    (
        COMPARATIVE,
        "Which is kept longer: a Tessaly Public Library member's borrowing history after an item is returned, or municipal CCTV footage?",
        "Neither; both are kept for 30 days. Borrowing history is deleted 30 days after the item is returned (unless the member opts in to a reading history), and CCTV recordings are erased after 30 days unless needed as evidence.",
        [
            ("library-lending-policy", "A Member's borrowing history is deleted 30 days after each Item is returned, unless the Member has opted in to keep a reading history."),
            ("data-protection-ordinance", "Recordings from municipal CCTV cameras shall be erased after 30 days unless they are required as evidence in pending proceedings."),
        ],
    ),
    (
        COMPARATIVE,
        "Who has longer to appeal: a Kestrel Valley University student against an Integrity Panel decision, or a Tessaly dog owner against a dangerous-dog declaration?",
        "The dog owner has longer, with 21 days to appeal, compared with 14 days for the student.",
        [
            ("academic-integrity-code", "A student may appeal to the Pro-Vice-Chancellor (Education) within 14 days of the Integrity Panel's decision"),
            ("pet-ownership-regulation", "The Owner may appeal against a declaration within 21 days."),
        ],
    ),
    (
        COMPARATIVE,
        "Which costs more per year in Tessaly: a City Drone Permit or a residential parking permit for a first vehicle?",
        "The drone permit costs more: $75 for 12 months, compared with $60 per year for a first vehicle's residential parking permit.",
        [
            ("drone-operation-bylaw", "The permit fee is $75, and a permit is valid for 12 months from the date of issue."),
            ("parking-ordinance", "A residential parking permit costs $60 per year for a resident's first vehicle and $120 per year for a second vehicle."),
        ],
    ),
    (
        COMPARATIVE,
        "Is the fine for a first breach of Tessaly's drone bylaw higher than the fixed penalty under its noise ordinance?",
        "Yes. A first drone offence carries a fine of $300, while the noise fixed penalty is $200 (rising to $500 for a further breach within 12 months).",
        [
            ("drone-operation-bylaw", "An Operator who breaches this Bylaw is liable to a fine of $300 for a first offence."),
            ("noise-ordinance", "A fixed penalty of $200 may be imposed for a breach following a warning, rising to $500 for a further breach within 12 months."),
        ],
    ),
    (
        COMPARATIVE,
        "Which does Tessaly decide faster: a street food vendor licence application or a City Drone Permit application?",
        "The drone permit is decided faster, within 15 working days, whereas a complete food vendor application is decided within 28 days.",
        [
            ("food-vendor-licensing", "The City shall decide each complete application within 28 days."),
            ("drone-operation-bylaw", "The City Parks Department shall decide each permit application within 15 working days."),
        ],
    ),
    (
        COMPARATIVE,
        "Who has longer to challenge a decision: someone who received a Tessaly parking penalty, or a street food vendor whose licence has been suspended?",
        "The parking penalty recipient has longer: 28 days to appeal to the Parking Adjudicator, compared with 10 days for a food vendor to request a review of a suspension.",
        [
            ("parking-ordinance", "The recipient of a penalty notice may appeal to the Parking Adjudicator within 28 days of the notice."),
            ("food-vendor-licensing", "The licence holder may request a review of the suspension within 10 days."),
        ],
    ),
    (
        COMPARATIVE,
        "Which is kept longer: recordings of Tessaly's open Council meetings, or Kestrel Valley University's network security logs?",
        "Meeting recordings are kept much longer, for 2 years after the meeting, whereas the University keeps network security logs for 90 days.",
        [
            ("public-meeting-transparency", "Recordings shall be retained for 2 years after the Meeting."),
            ("acceptable-use-policy", "Network security logs are kept for 90 days."),
        ],
    ),
    (
        COMPARATIVE,
        "How long does Tessaly keep personnel files compared with how long Kestrel Valley University keeps academic integrity findings?",
        "Tessaly keeps personnel files for 6 years after employment ends, one year longer than the University, which keeps integrity findings for 5 years after the student leaves.",
        [
            ("records-retention-schedule", "Personnel files shall be retained for 6 years after the employment ends."),
            ("academic-integrity-code", "The Academic Integrity Officer shall keep records of findings for 5 years after the student leaves the University."),
        ],
    ),
    (
        COMPARATIVE,
        "Which must be done sooner: acknowledging a whistle-blower disclosure in Tessaly, or starting the investigation of a noise complaint?",
        "Starting a noise investigation is due sooner, within 5 working days of the complaint, whereas a whistle-blower disclosure must be acknowledged within 7 days.",
        [
            ("whistleblower-protection-act", "The recipient of a disclosure shall acknowledge receipt within 7 days."),
            ("noise-ordinance", "The Noise Officer shall begin investigating a complaint within 5 working days of receiving it."),
        ],
    ),
    # ---- out of scope: the corpus does not answer --------------------------------------------
    (
        OUT,
        "What fine does a Tessaly Landlord face for failing to return a security deposit on time?",
        "The documents do not say; the Residential Tenancy Regulation requires deposits to be returned within 14 days (21 days before the 2025 amendment) but sets no fine or penalty for failing to do so. The only fine in the 2025 amendment is for letting without a certificate of registration.",
        [],
    ),
    (
        OUT,
        "How many days of paid jury service leave does Orinth Systems give its employees?",
        "The documents do not say; the Orinth Systems Leave Policy and its Amendment No. 1 cover annual, sick, parental, compassionate and volunteering leave but not jury service.",
        [],
    ),
    (
        OUT,
        "Is there a discount on Quillfeather Ledger licences for charities or schools?",
        "The documents do not say; the licence only states a fee of $240 per Authorised User per year and mentions no discounts.",
        [],
    ),
    (
        OUT,
        "How many councillors sit on Dunmore Regional Council?",
        "The documents do not say how many members Dunmore Regional Council has; its Procurement Rule does not address the Council's composition.",
        [],
    ),
    (
        OUT,
        "What are the opening hours of the Tessaly Public Library?",
        "The documents do not give the Tessaly Public Library's opening hours; its Lending Policy covers membership, loans, fees and privacy only. The opening hours in the corpus belong to Dunmore Regional Libraries.",
        [],
    ),
    (
        OUT,
        "In which cities are Skyvault Hosting's data centres located?",
        "The documents do not name any data centre locations; the Data Processing Agreement only says data is stored in the region the customer selects.",
        [],
    ),
    (
        OUT,
        "What is the fine in Tessaly for failing to microchip a cat?",
        "The documents do not say; the Companion Animal Regulation requires microchipping but states no fine for failing to do it.",
        [],
    ),
    (
        OUT,
        "What salary does Tessaly's Municipal Integrity Ombudsman receive?",
        "The documents do not state the Ombudsman's salary; the Whistle-blower Protection Act only describes the Ombudsman's role in handling disclosures and complaints.",
        [],
    ),
]
