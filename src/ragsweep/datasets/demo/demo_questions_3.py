"""Demo questions, part 3 of 3: questions on the near-identical and PDF-like documents; types in part 1.

Quotes from the PDF-like documents (``demo_documents_pdf.py``) are written cleanly: straight quotes,
whole words, single spaces. They do not occur verbatim in the stored text (line breaks, hyphenation,
ligatures and curly quotes there), except where marked "exact"; the loader finds them by normalising.
A quote given with a tuple of document ids stands verbatim in each of them.
"""

from demo_questions_1 import COMPARATIVE, COMPLEX, DISAMBIGUATION, MULTI_HOP, OUT, PARAPHRASE, SIMPLE

STR_2023 = "short-term-rental-ordinance-2023"
STR_2025 = "short-term-rental-ordinance-2025"
STR_GUIDE = "short-term-rental-guidance"
ASHBY = "procurement-rule-ashby-vale"
LEAVE_AMEND = "employee-leave-policy-amendment"
DUNMORE_LIB = "dunmore-library-lending-policy"
TENANCY_AMEND = "tenancy-amendment-2025"  # PDF-like
RESEARCH = "research-data-policy"  # PDF-like

QUESTIONS: list[tuple[str, str, str, list[tuple]]] = [
    # ---- disambiguation: one of several near-identical documents ------------------------------
    (
        DISAMBIGUATION,
        "Under Tessaly's Short-Term Rental Ordinance 2025, for how many nights a year may a host let a whole dwelling?",
        "No more than 60 nights in a calendar year (the 2023 Ordinance allowed 90).",
        [(STR_2025, "A Host may let a whole dwelling for short-term rental for no more than 60 nights in a calendar year.")],
    ),
    (
        DISAMBIGUATION,
        "What registration fee did Tessaly's Short-Term Rental Ordinance 2023 charge, and how long did a registration last?",
        "The fee was $150, and a registration was valid for 2 years from the date of issue.",
        [(STR_2023, "The registration fee is $150, and a registration is valid for 2 years from the date of issue.")],
    ),
    (
        DISAMBIGUATION,
        "Under the 2025 short-term rental ordinance, what is the highest fine for letting a dwelling without a valid registration?",
        "A fine of up to $2,500 (the 2023 Ordinance set up to $1,000).",
        [(STR_2025, "A Host who lets a dwelling without a valid registration is liable to a fine of up to $2,500.")],
    ),
    (
        DISAMBIGUATION,
        "Above what estimated value must Ashby Vale District Council put a contract out to open tender, and for how long must the tender be advertised?",
        "From an estimated value of $150,000; the open tender must be advertised on the Council's procurement portal for at least 30 days.",
        [(ASHBY, "A contract with an estimated value of $150,000 or more shall be awarded by open tender advertised on the Council's procurement portal for at least 30 days.")],
    ),
    (
        DISAMBIGUATION,
        "How long is the standstill period after Ashby Vale District Council notifies tenderers of an award decision?",
        "Ashby Vale must observe a standstill period of 14 days before concluding the contract.",
        [(ASHBY, "the Contracting Authority shall observe a standstill period of 14 days before concluding the contract")],
    ),
    (
        DISAMBIGUATION,
        "What share of the evaluation score must price make up when Dunmore Regional Council evaluates tenders?",
        "Price must account for at least 40 percent of the total evaluation score.",
        [("procurement-rule", "Price must account for at least 40 percent of the total evaluation score.")],
    ),
    (
        DISAMBIGUATION,
        "For how long may a member of Dunmore Regional Libraries borrow a DVD?",
        "DVDs (and games) may be borrowed from Dunmore Regional Libraries for 14 days.",
        [(DUNMORE_LIB, "DVDs and games may be borrowed for 14 days.")],
    ),
    (
        DISAMBIGUATION,
        "How many items may a junior member of the Tessaly Public Library have on loan at once?",
        "A Junior Member of the Tessaly Public Library may have up to 8 items on loan at one time.",
        [("library-lending-policy", "A Member may have up to 15 Items on loan at one time; a Junior Member may have up to 8 Items.")],
    ),
    (
        DISAMBIGUATION,
        "Under Orinth Systems' leave rules as amended in 2025, how many unused annual leave days may be carried over, and by when must they be taken?",
        "Up to 8 unused days may be carried over into the next Leave Year, and they must be taken by 30 September.",
        [(LEAVE_AMEND, "Up to 8 unused days of annual leave may be carried over into the next Leave Year, but carried-over days must be taken by 30 September.")],
    ),
    (
        DISAMBIGUATION,
        "Since Amendment No. 1, how long can an Orinth Systems employee be off sick before a medical certificate is needed?",
        "Only an absence of more than 10 calendar days must be supported by a medical certificate (before the amendment, more than 7).",
        [(LEAVE_AMEND, "so that only an absence of more than 10 calendar days must be supported by a medical certificate")],
    ),
    # ---- multi-hop: the answer needs two documents --------------------------------------------
    (
        MULTI_HOP,
        "A host registered a Tessaly dwelling under the 2023 short-term rental ordinance in May 2024. Does the registration survive the 2025 ordinance, and until when?",
        "Yes. The 2025 Ordinance repealed the 2023 one but keeps registrations issued under it valid until they expire, and a registration under the 2023 Ordinance was valid for 2 years from issue, so it runs until May 2026.",
        [
            (STR_2025, "The Short-Term Rental Ordinance 2023 is repealed, but a registration issued under it remains valid until its expiry date."),
            (STR_2023, "The registration fee is $150, and a registration is valid for 2 years from the date of issue."),
        ],
    ),
    (
        MULTI_HOP,
        "How many weeks of parental leave does an Orinth Systems employee now get, how many of them on full pay, and how much notice is needed?",
        "Since Amendment No. 1 (April 2025), an employee with at least three months of service gets 32 weeks, the first 20 at full salary. The notice rule is unchanged: at least 60 days' notice of the intended start date.",
        [
            (LEAVE_AMEND, "An Employee with at least three months of service is entitled to 32 weeks of parental leave, of which the first 20 weeks are paid at full salary."),
            ("employee-leave-policy", "The Employee shall give at least 60 days' notice of the intended start date of parental leave, subject to § 7."),
        ],
    ),
    (
        MULTI_HOP,
        "What is the largest security deposit a Tessaly landlord may ask for on a tenancy starting in August 2025?",
        "One and a half months' rent: the Residential Tenancy (Amendment) Regulation 2025, in force from 1 July 2025, replaced the former cap of two months' rent.",
        [
            (TENANCY_AMEND, "In § 3(1) of the principal Regulation, \"two months' rent\" is replaced by \"one and a half months' rent\"."),
            ("tenancy-regulation", "A Landlord must not require a security deposit exceeding two months' rent."),
        ],
    ),
    (
        MULTI_HOP,
        "Since the 2025 amendment, how quickly must a Tessaly landlord repair a heating breakdown?",
        "Within 24 hours of being notified: heating is an urgent repair, and the 2025 amendment replaced the 48 hours of the principal Regulation with 24 hours.",
        [
            ("tenancy-regulation", "The Landlord shall carry out urgent repairs affecting heating, water or electricity within 48 hours of being notified."),
            (TENANCY_AMEND, "In § 5(1) of the principal Regulation, \"48 hours\" is replaced by \"24 hours\""),
        ],
    ),
    (
        MULTI_HOP,
        "Someone filmed by a drone in Tessaly asks for a copy of the footage of them. How long does the Controller have to answer?",
        "Drone images of identifiable persons are personal data handled under the Personal Data Protection Ordinance, under which the Controller must respond within 30 days of receiving the request, free of charge.",
        [
            ("drone-operation-bylaw", "Images of identifiable persons captured by a Drone are personal data and shall be handled in accordance with the City of Tessaly Personal Data Protection Ordinance."),
            ("data-protection-ordinance", "The Controller shall respond within 30 days of receiving the request, free of charge."),
        ],
    ),
    (
        MULTI_HOP,
        "How long must approved minutes of Tessaly council meetings be kept, and when do they go to the City Archive?",
        "Permanently: the Open Meetings Rule defers to the Records Retention Schedule, which keeps approved minutes permanently and transfers them to the City Archive after 20 years.",
        [
            ("public-meeting-transparency", "Approved minutes shall be retained permanently in accordance with the Municipal Records Retention Schedule."),
            ("records-retention-schedule", "Approved minutes of the City Council and its committees shall be retained permanently and transferred to the City Archive after 20 years."),
        ],
    ),
    # ---- comparative: two documents, often near-identical ones --------------------------------
    (
        COMPARATIVE,
        "How did the 2025 short-term rental ordinance change the number of nights a whole Tessaly dwelling may be let each year?",
        "It cut the limit from 90 nights a calendar year under the 2023 Ordinance to 60 nights.",
        [
            (STR_2023, "A Host may let a whole dwelling for short-term rental for no more than 90 nights in a calendar year."),
            (STR_2025, "A Host may let a whole dwelling for short-term rental for no more than 60 nights in a calendar year."),
        ],
    ),
    (
        COMPARATIVE,
        "A council wants to buy $20,000 of services. May it award the contract on a single written quotation in Dunmore Regional Council, and in Ashby Vale District Council?",
        "In Ashby Vale yes: below $25,000 one written quotation suffices. In Dunmore no: a contract of $10,000 or more but below $100,000 needs at least three written quotations.",
        [
            (ASHBY, "A contract with an estimated value below $25,000 may be awarded directly after obtaining at least one written quotation."),
            ("procurement-rule", "A contract with an estimated value of $10,000 or more but below $100,000 requires at least three written quotations."),
        ],
    ),
    (
        COMPARATIVE,
        "Where can a book be borrowed for longer: the Tessaly Public Library or Dunmore Regional Libraries?",
        "Dunmore Regional Libraries: 28 days, against 21 days at the Tessaly Public Library.",
        [
            ("library-lending-policy", "Books and audiobooks may be borrowed for 21 days."),
            (DUNMORE_LIB, "Books and audiobooks may be borrowed for 28 days."),
        ],
    ),
    (
        COMPARATIVE,
        "How did Orinth Systems' Amendment No. 1 change the carry-over of unused annual leave?",
        "Before it, up to 5 unused days could be carried over and had to be taken by 30 June; after it, up to 8 days, to be taken by 30 September.",
        [
            ("employee-leave-policy", "Up to 5 unused days of annual leave may be carried over into the next Leave Year, but carried-over days must be taken by 30 June."),
            (LEAVE_AMEND, "Up to 8 unused days of annual leave may be carried over into the next Leave Year, but carried-over days must be taken by 30 September."),
        ],
    ),
    (
        COMPARATIVE,
        "Which registration has to be paid for more often in Tessaly: a landlord's registration with the Rent Board or a host's registration under the Short-Term Rental Ordinance 2025?",
        "The short-term rental registration: it costs $240 and is valid for 1 year, while the landlord registration fee of $85 per dwelling is payable every 3 years.",
        [
            (TENANCY_AMEND, "The registration fee is $85 per dwelling, payable every 3 years."),  # exact: verbatim in the PDF-like text
            (STR_2025, "The registration fee is $240, and a registration is valid for 1 year from the date of issue."),
        ],
    ),
    (
        COMPARATIVE,
        "Which must reach Kestrel Valley University's Data Protection Officer sooner: a report that restricted research data was lost, or a report that someone accessed the content of a user's account?",
        "The loss of restricted research data: it must be reported within 24 hours of discovery, while access to an account's content must be reported within 5 working days.",
        [
            (RESEARCH, "Any loss of, or unauthorised access to, restricted data shall be reported to the University's Data Protection Officer within 24 hours of discovery."),
            ("acceptable-use-policy", "Any access to the content of an individual User's account must be recorded and reported to the University's Data Protection Officer within 5 working days."),
        ],
    ),
    (
        COMPARATIVE,
        "How did the 2025 tenancy amendment change the time a Tessaly landlord has to return a deposit after the tenancy ends?",
        "It shortened it from 21 days to 14 days; a deposit paid before 1 July 2025 is still returned within the period that applied when it was paid.",
        [
            ("tenancy-regulation", "The deposit shall be held in a separate account and returned within 21 days after the tenancy ends, less any deductions itemised in writing."),
            (TENANCY_AMEND, "In § 3(2) of the principal Regulation, \"21 days\" is replaced by \"14 days\"."),
        ],
    ),
    # ---- paraphrase: one fact, worded unlike its evidence -------------------------------------
    (
        PARAPHRASE,
        "How long must a Kestrel Valley researcher hold on to the data behind a published paper?",
        "Research data that support a publication must be retained for at least 10 years after the date of publication.",
        [(RESEARCH, "Research Data that support a publication shall be retained for at least 10 years after the date of publication.")],
    ),
    (
        PARAPHRASE,
        "Where may a Kestrel Valley research team keep files with patients' names and medical details in them?",
        "Identifiable health data are restricted data: they may be stored only on the University's secure research platform, never on personal devices or in personal cloud accounts.",
        [(RESEARCH, "Restricted data, including identifiable health data, shall be stored only on the University's secure research platform and never on personal devices or in personal cloud accounts.")],
    ),
    (
        PARAPHRASE,
        "Our lab at Kestrel Valley just won outside funding. How soon must the project lead file a plan for looking after the project's data?",
        "The Principal Investigator must submit a data management plan to the Research Office within 3 months of the start of the project, and update it when the project changes significantly.",
        [(RESEARCH, "A Principal Investigator shall submit a data management plan to the Research Office within 3 months of the start of any externally funded project")],
    ),
    (
        PARAPHRASE,
        "I am about to quit my research job at Kestrel Valley. What must I do with my project files first?",
        "Transfer all research data in your custody to the Data Steward before your last working day.",
        # quoted with an OCR slip ("Stevvard"): located only by fuzzy matching (specs/demo.yaml: fuzzy_evidence 0.9)
        [(RESEARCH, "ocr:A researcher who leaves the University shall transfer all Research Data in their custody to the Data Stevvard before their last working day.")],
    ),
    (
        PARAPHRASE,
        "In winter, how warm must the heating keep a rented bedroom in Tessaly?",
        "From 1 October to 30 April the heating must be able to keep every bedroom at 18 degrees Celsius (and every living room at 20 degrees Celsius).",
        [(TENANCY_AMEND, "During the heating season from 1 October to 30 April, the Landlord shall ensure that the heating system can maintain a temperature of at least 20 degrees Celsius in every living room and 18 degrees Celsius in every bedroom.")],
    ),
    (
        PARAPHRASE,
        "If the city picks up my runaway dog, how long will they keep it and what do I pay to get it back?",
        "A seized animal is held for 7 days and may be released to its owner on payment of an $80 release fee.",
        [("pet-ownership-regulation", "An animal seized under this Regulation is held for 7 days and may be released to its Owner on payment of a release fee of $80.")],
    ),
    (
        PARAPHRASE,
        "The kitchen tap in the flat I rent keeps dripping. How long does the owner have to fix it?",
        "A non-urgent repair for which the landlord is responsible must be completed within 14 days of notification.",
        [("tenancy-regulation", "All other repairs for which the Landlord is responsible shall be completed within 14 days of notification.")],
    ),
    (
        PARAPHRASE,
        "Can I take my quadcopter up after dark in Tessaly?",
        "Only if the permit carries a night endorsement; otherwise no flight may take place between sunset and sunrise.",
        [("drone-operation-bylaw", "No flight may take place between sunset and sunrise unless the permit carries a night endorsement.")],
    ),
    (
        PARAPHRASE,
        "I was moved to a lower grade after telling the authorities about fraud in a city department. How long do I have to complain, and to whom?",
        "A whistle-blower who suffers retaliation may complain to the Municipal Integrity Ombudsman within 6 months of the detriment.",
        [("whistleblower-protection-act", "A whistle-blower who suffers retaliation may complain to the Ombudsman within 6 months of the detriment.")],
    ),
    # ---- simple and complex -----------------------------------------------------------------
    (
        SIMPLE,
        "What must a host include with an online short-term rental registration on form STR-1 in Tessaly?",
        "Proof of ownership or the owner's written consent, a floor plan showing every bedroom, and a photograph of each smoke alarm.",
        [(STR_GUIDE, "The application must include proof of ownership or the owner's written consent, a floor plan showing every bedroom, and a photograph of each smoke alarm.")],
    ),
    (
        SIMPLE,
        "For how many dwellings may one host in Tessaly hold short-term rental registrations?",
        "No more than 2 dwellings in the City, under section 3(4) of the Short-Term Rental Ordinance 2025; the Housing Department's guidance adds that spouses and civil partners who own homes together count as one Host.",
        # The same sentence stands in the 2025 ordinance and in the guidance note that quotes it: the
        # evidence is text only, without a doc_id, and both copies count as gold.
        [((STR_2025, STR_GUIDE), "A Host may hold registrations for no more than 2 dwellings in the City.")],
    ),
    (
        SIMPLE,
        "Who can exempt Kestrel Valley University research data from deposit in the open repository, and on what grounds?",
        "The Data Steward, for legal, ethical or commercial reasons.",
        [(RESEARCH, "unless the Data Steward grants an exemption for legal, ethical or commercial reasons")],
    ),
    (
        SIMPLE,
        "What may Ashby Vale District Council's Chief Executive do in an emergency that threatens life or property?",
        "Award a contract worth up to $50,000 without quotations, and report the award to the Council at its next meeting.",
        [(ASHBY, "In an emergency that threatens life or property, the Chief Executive may award a contract worth up to $50,000 without quotations and shall report the award to the Council at its next meeting.")],
    ),
    (
        COMPLEX,
        "What does a Tessaly landlord pay to register a dwelling with the Rent Board, and what happens if they let it without registering?",
        "The fee is $85 per dwelling, payable every 3 years; letting a dwelling without a certificate of registration makes the landlord liable to a fine of up to $2,000.",
        [
            (TENANCY_AMEND, "The registration fee is $85 per dwelling, payable every 3 years."),  # exact
            (TENANCY_AMEND, "A Landlord who lets a dwelling without a certificate of registration is liable to a fine of up to $2,000."),
        ],
    ),
    # ---- out of scope: the corpus does not answer, though a near-identical document tempts ------
    (
        OUT,
        "What tourist levy does Ashby Vale District Council charge on short-term rentals?",
        "The documents do not say; the only tourist levy in the corpus is the City of Tessaly's (3 percent under the 2023 Ordinance, 5 percent under the 2025 Ordinance), and Ashby Vale appears only in a procurement rule.",
        [],
    ),
    (
        OUT,
        "How many nights a year may a whole home be let to tourists in the Dunmore region?",
        "The documents do not say; the corpus has short-term rental rules only for the City of Tessaly, not for Dunmore.",
        [],
    ),
    (
        OUT,
        "How many weeks of paid parental leave does Quillfeather Software give its staff?",
        "The documents do not say; the parental leave rules in the corpus are Orinth Systems', and Quillfeather appears only as the licensor of Quillfeather Ledger.",
        [],
    ),
]
