"""Demo documents stored as PDF text extraction leaves them (CC0, see ``build_demo.py``).

The text is kept exactly as a PDF-to-text tool would return it, on purpose: line breaks inside
sentences, words hyphenated across a line break ("Regula-\\ntion"), a soft hyphen, page footers
glued to the text that follows ("4/3/2025Page 1 of 2(2) The ..."), ligatures ("ﬁ", "ﬀ", "ﬃ") and
curly quotes. The questions quote these documents *cleanly* (straight quotes, whole words, single
spaces) and give the evidence as text only, so loading has to find it with a normalising matcher;
the chunks a splitter cuts from these documents carry the same noise, which costs lexical matching
("notiﬁed" is not "notified" to BM25). Apart from the noise the documents follow the corpus
conventions: a title line, and every section heading starts its own line with "§ N".
"""

DOCUMENTS: list[tuple[str, str, str]] = [
    (
        # Amends "tenancy-regulation" (the principal Regulation): deposits, urgent repairs, heating,
        # and a new landlord registration scheme.
        "tenancy-amendment-2025",
        "City of Tessaly Residential Tenancy (Amendment) Regulation 2025",
        """
Tessaly Municipal Gazette No. 14 of 2025
§ 1 Citation and Commencement
(1) This Regulation may be cited as the Residential Tenancy (Amendment) Regula-
tion 2025 and comes into force on 1 July 2025.
(2) In this Regulation, “the principal Regulation” means the City of Tessaly Resi-
dential Tenancy Regulation.
§ 2 Security Deposits
(1) In § 3(1) of the principal Regulation, “two months’ rent” is replaced by “one and
a half months’ rent”.
(2) In § 3(2) of the principal Regulation, “21 days” is replaced by “14 days”.
(3) A deposit paid before 1 July 2025 need not be reduced, but it shall be returned
within the period that applied when it was paid.
§ 3 Urgent Repairs
In § 5(1) of the principal Regulation, “48 hours” is replaced by “24 hours”, so that
urgent repairs aﬀecting heating, water or electricity must be carried out within 24
hours of the Landlord being notiﬁed.
§ 4 Minimum Heating Standard
The following paragraph is inserted after § 5(2) of the principal Regulation: “(3) Dur-
ing the heating season from 1 October to 30 April, the Landlord shall ensure that
the heating system can maintain a temperature of at least 20 degrees Celsius in
every living room and 18 degrees Celsius in every bedroom.”
§ 5 Landlord Registration
(1) Every Landlord shall register with the Rent Board before letting a dwelling, and
the Rent Board shall issue a certiﬁcate of registration within 10 working days.
4/3/2025Page 1 of 2(2) The registration fee is $85 per dwelling, payable every 3 years.
(3) A Landlord who lets a dwelling without a certiﬁcate of registration is liable to a
ﬁne of up to $2,000.
§ 6 Review
The Rent Board shall review the eﬀect of this Regulation on rents and on the sup\u00ad
ply of rental housing, and shall report its ﬁndings to the City Council by 31 De-
cember 2027.
4/3/2025Page 2 of 2
""",
    ),
    (
        "research-data-policy",
        "Kestrel Valley University Research Data Management Policy",
        """
KVU Policy RDM-04, Version 2.1
§ 1 Deﬁnitions
(1) “Research Data” means any information collected, observed or created for the pur-
pose of research, in any format.
(2) “Principal Investigator” means the member of academic staﬀ who leads a research
project.
(3) “Data Steward” means the oﬃcer of the Research Oﬃce who advises on and over-
sees the management of Research Data.
§ 2 Scope
This Policy applies to all research carried out by staﬀ and students of Kestrel Valley
University, whether it is funded externally or not.
§ 3 Data Management Plans
A Principal Investigator shall submit a data management plan to the Research Oﬃce
within 3 months of the start of any externally funded project and shall update the
plan whenever the project changes signiﬁcantly.
§ 4 Classiﬁcation and Storage
(1) Research Data shall be classiﬁed as public, internal, conﬁdential or restricted.
(2) Restricted data, including identiﬁable health data, shall be stored only on the Uni-
versity’s secure research platform and never on personal devices or in personal
cloud accounts.
Approved by Senate 4/3/2022Page 1 of 2KVU Policy RDM-04(3) Conﬁdential and restricted
data must be encrypted whenever they leave University systems.
§ 5 Retention
(1) Research Data that support a publication shall be retained for at least 10 years
after the date of publication.
(2) Research Data from clinical trials shall be retained for 25 years after the trial
ends.
§ 6 Sharing
Research Data underlying published results should be deposited in the University’s
open repository within 12 months of publication, unless the Data Steward grants an
exemption for legal, ethical or commercial reasons.
§ 7 Leaving the University
A researcher who leaves the University shall transfer all Research Data in their cus-
tody to the Data Steward before their last working day.
§ 8 Incidents
Any loss of, or unauthorised access to, restricted data shall be reported to the Univer-
sity’s Data Protection Oﬃcer within 24 hours of discovery.
Approved by Senate 4/3/2022Page 2 of 2
""",
    ),
]
