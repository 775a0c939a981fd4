"""Demo documents, part 4: near-identical distractors (CC0, see ``build_demo.py``).

Each document here has a twin elsewhere in the corpus worded almost the same way, so lexical and
dense retrievers confuse them: two versions of one ordinance (2023 and 2025), a guidance note that
restates and quotes the 2025 version, a second council's procurement rule and library policy
(compare ``procurement-rule`` and ``library-lending-policy``), and an amendment to a policy
(``employee-leave-policy``) that restates the paragraphs it replaces with new numbers. The names
that tell the twins apart (the year, the council) mostly stand in the title and the first section,
far from the figures, so small chunks cannot tell which twin they came from.
"""

DOCUMENTS: list[tuple[str, str, str]] = [
    (
        "short-term-rental-ordinance-2023",
        "City of Tessaly Short-Term Rental Ordinance 2023",
        """
§ 1 Citation and Commencement
This Ordinance may be cited as the Short-Term Rental Ordinance 2023. It comes into force on 1 April 2023.

§ 2 Definitions
(1) "Host" means a person who offers a dwelling, or part of a dwelling, for short-term rental.
(2) "Short-term rental" means the letting of a dwelling or part of a dwelling to guests for fewer than 30 consecutive nights.
(3) "Platform" means an online service through which short-term rentals are advertised or booked.
(4) "Registration Number" means the number issued by the Housing Department for a dwelling under § 3.

§ 3 Registration
(1) A Host must register each dwelling with the Housing Department before offering it for short-term rental.
(2) The registration fee is $150, and a registration is valid for 2 years from the date of issue.
(3) Every advertisement for a short-term rental must display the Registration Number of the dwelling.

§ 4 Night Limits
(1) A Host may let a whole dwelling for short-term rental for no more than 90 nights in a calendar year.
(2) No limit applies to the letting of a room in a dwelling in which the Host lives during the stay.

§ 5 Occupancy and Safety
(1) No more than 2 guests per bedroom, and no more than 10 guests in total, may stay in a dwelling at one time.
(2) Each dwelling must have a working smoke alarm on every floor and a fire extinguisher in the kitchen.

§ 6 Platform Duties
(1) A Platform must remove an advertisement that does not display a valid Registration Number within 5 working days of a request from the Housing Department.
(2) A Platform shall report to the Housing Department each quarter the number of nights booked for each registered dwelling.

§ 7 Tourist Levy
A Host shall collect a tourist levy of 3 percent of the nightly rate from each guest and pay it to the City each quarter.

§ 8 Penalties
(1) A Host who lets a dwelling without a valid registration is liable to a fine of up to $1,000.
(2) A Host who exceeds the night limit in § 4 is liable to a fine of up to $500 for each night over the limit.
""",
    ),
    (
        "short-term-rental-ordinance-2025",
        "City of Tessaly Short-Term Rental Ordinance 2025",
        """
§ 1 Citation, Commencement and Repeal
(1) This Ordinance may be cited as the Short-Term Rental Ordinance 2025. It comes into force on 1 March 2025.
(2) The Short-Term Rental Ordinance 2023 is repealed, but a registration issued under it remains valid until its expiry date.

§ 2 Definitions
(1) "Host" means a person who offers a dwelling, or part of a dwelling, for short-term rental.
(2) "Short-term rental" means the letting of a dwelling or part of a dwelling to guests for fewer than 30 consecutive nights.
(3) "Platform" means an online service through which short-term rentals are advertised or booked.
(4) "Registration Number" means the number issued by the Housing Department for a dwelling under § 3.

§ 3 Registration
(1) A Host must register each dwelling with the Housing Department before offering it for short-term rental.
(2) The registration fee is $240, and a registration is valid for 1 year from the date of issue.
(3) Every advertisement for a short-term rental must display the Registration Number of the dwelling.
(4) A Host may hold registrations for no more than 2 dwellings in the City.

§ 4 Night Limits
(1) A Host may let a whole dwelling for short-term rental for no more than 60 nights in a calendar year.
(2) No limit applies to the letting of a room in a dwelling in which the Host lives during the stay.

§ 5 Occupancy and Safety
(1) No more than 2 guests per bedroom, and no more than 8 guests in total, may stay in a dwelling at one time.
(2) Each dwelling must have a working smoke alarm on every floor, a carbon monoxide alarm near every fuel-burning appliance and a fire extinguisher in the kitchen.

§ 6 Platform Duties
(1) A Platform must remove an advertisement that does not display a valid Registration Number within 2 working days of a request from the Housing Department.
(2) A Platform shall report to the Housing Department each month the number of nights booked for each registered dwelling.

§ 7 Tourist Levy
A Host shall collect a tourist levy of 5 percent of the nightly rate from each guest and pay it to the City each quarter.

§ 8 Penalties
(1) A Host who lets a dwelling without a valid registration is liable to a fine of up to $2,500.
(2) A Host who exceeds the night limit in § 4 is liable to a fine of up to $750 for each night over the limit.
(3) The Housing Department may suspend the registration of a Host who commits two offences under this Ordinance within 12 months.
""",
    ),
    (
        # Quotes one sentence of the 2025 ordinance verbatim (§ 3 below): that sentence is gold in both.
        "short-term-rental-guidance",
        "Tessaly Housing Department Guidance Note for Short-Term Rental Hosts",
        """
§ 1 Purpose
This Guidance Note explains how to comply with the Short-Term Rental Ordinance 2025. It has no legal force of its own, and where it differs from the Ordinance, the Ordinance prevails.

§ 2 Registering Online
(1) Hosts register through the Housing Department's online portal using form STR-1. The application must include proof of ownership or the owner's written consent, a floor plan showing every bedroom, and a photograph of each smoke alarm.
(2) The Housing Department aims to issue a Registration Number within 10 working days of receiving a complete application.
(3) A Host who changes address or sells the dwelling should tell the Housing Department within 14 days, so that the registration can be cancelled or transferred.

§ 3 How Many Homes
Section 3(4) of the Ordinance provides: "A Host may hold registrations for no more than 2 dwellings in the City." For this purpose, spouses and civil partners who own homes together count as a single Host.

§ 4 Counting Nights
A night counts towards the annual limit whenever a guest stays overnight, whether or not the guest paid. Nights on which the Host also sleeps in the dwelling do not count. Hosts should keep a booking log and retain it for 3 years, because the Housing Department may ask to see it.

§ 5 Inspections
Officers of the Housing Department may visit a registered dwelling on 24 hours' notice to check its safety equipment. A Host who refuses entry twice may have the registration suspended.

§ 6 Neighbours
Hosts are encouraged to give their immediate neighbours a telephone number at which someone can be reached at any hour while guests are staying.

§ 7 Contact
Questions may be sent to the short-term rental helpdesk of the Housing Department, which answers enquiries within 5 working days.
""",
    ),
    (
        "procurement-rule-ashby-vale",
        "Ashby Vale District Council Procurement Rule",
        """
§ 1 Definitions
(1) "Contracting Authority" means Ashby Vale District Council or any of its departments.
(2) "Estimated value" means the total amount payable over the full term of a contract, excluding value added tax.
(3) "Procurement Officer" means the officer designated by the Chief Executive to supervise procurement under this Rule.

§ 2 Scope
This Rule applies to all contracts for goods, services and works entered into by the Contracting Authority. It does not apply to employment contracts or to the purchase or lease of land.

§ 3 Thresholds
(1) A contract with an estimated value below $25,000 may be awarded directly after obtaining at least one written quotation.
(2) A contract with an estimated value of $25,000 or more but below $150,000 requires at least three written quotations.
(3) A contract with an estimated value of $150,000 or more shall be awarded by open tender advertised on the Council's procurement portal for at least 30 days.

§ 4 Prohibition of Splitting
A contract must not be divided into smaller contracts for the purpose of avoiding the thresholds in § 3.

§ 5 Evaluation
(1) Tenders shall be evaluated by a panel of at least three members appointed by the Procurement Officer.
(2) Price must account for at least 30 percent of the total evaluation score.
(3) Each panel member shall declare any conflict of interest in writing before reviewing any tender.

§ 6 Standstill Period
After notifying tenderers of the award decision, the Contracting Authority shall observe a standstill period of 14 days before concluding the contract.

§ 7 Emergency Procurement
In an emergency that threatens life or property, the Chief Executive may award a contract worth up to $50,000 without quotations and shall report the award to the Council at its next meeting.

§ 8 Records
The Procurement Officer shall keep all procurement records for 7 years after the contract ends.
""",
    ),
    (
        "employee-leave-policy-amendment",
        "Orinth Systems Ltd. Employee Leave Policy Amendment No. 1",
        """
§ 1 Commencement
(1) This Amendment amends the Orinth Systems Ltd. Employee Leave Policy (the "Policy") with effect from 1 April 2025, the first day of the 2025-26 Leave Year.
(2) Every provision of the Policy that this Amendment does not change continues to apply.

§ 2 Carry-over of Annual Leave
Paragraph (3) of § 3 of the Policy is replaced by: "(3) Up to 8 unused days of annual leave may be carried over into the next Leave Year, but carried-over days must be taken by 30 September."

§ 3 Medical Certificates
In paragraph (2) of § 5 of the Policy, "7 calendar days" is replaced by "10 calendar days", so that only an absence of more than 10 calendar days must be supported by a medical certificate.

§ 4 Parental Leave
Paragraph (1) of § 6 of the Policy is replaced by: "(1) An Employee with at least three months of service is entitled to 32 weeks of parental leave, of which the first 20 weeks are paid at full salary."

§ 5 Volunteering Leave
The following section is added after § 8 of the Policy: "§ 9 Volunteering Leave. An Employee may take up to 2 days of paid volunteering leave in each Leave Year to work for a registered charity, with the approval of the Line Manager."

§ 6 Transitional Provision
Annual leave carried over from the 2024-25 Leave Year under the former rule may be taken until 30 September 2025.

§ 7 Review
The HR Director shall review the effect of this Amendment on staff absence and report to the Board of Directors within 18 months of its commencement. The review shall consider in particular whether the longer carry-over period has led to leave being concentrated in the summer months, and whether the extended parental leave has been taken up equally by Employees of every gender.
""",
    ),
    (
        "dunmore-library-lending-policy",
        "Dunmore Regional Libraries Lending Policy",
        """
§ 1 Definitions
(1) "Member" means a person holding a valid Dunmore Regional Libraries card.
(2) "Junior Member" means a Member under the age of 14.
(3) "Item" means any book, audiobook, DVD, game or other material available for loan.

§ 2 Membership
(1) Membership is free for residents of the Dunmore region. Non-residents pay an annual membership fee of $30.
(2) Library cards are valid for 4 years and may be renewed at any branch.

§ 3 Loan Periods and Limits
(1) Books and audiobooks may be borrowed for 28 days.
(2) DVDs and games may be borrowed for 14 days.
(3) A Member may have up to 20 Items on loan at one time; a Junior Member may have up to 10 Items.

§ 4 Renewals
An Item may be renewed up to 3 times, unless it has been reserved by another Member.

§ 5 Overdue Items
(1) No late fees are charged for overdue Items.
(2) Borrowing rights are suspended while a Member has any Item that is more than 30 days overdue.

§ 6 Lost or Damaged Items
(1) A Member who loses or damages an Item shall pay its replacement cost plus a processing fee of $8.
(2) The replacement cost is refunded if the lost Item is returned in good condition within 90 days of payment.

§ 7 Opening Hours
Every branch is open from 09:00 to 19:00 Monday to Friday and from 10:00 to 16:00 on Saturdays, and closed on Sundays and public holidays.

§ 8 Privacy of Borrowing Records
(1) A Member's borrowing history is deleted 14 days after each Item is returned, unless the Member has opted in to keep a reading history.
(2) Library staff must not disclose which Items a Member has borrowed to any third party except under a court order.
""",
    ),
]
