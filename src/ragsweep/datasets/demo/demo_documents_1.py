"""Demo documents, part 1 of 3: (id, title, body), as ``build_demo.py`` assembles them (CC0, see there)."""

DOCUMENTS: list[tuple[str, str, str]] = [
    (
        "data-protection-ordinance",
        "City of Tessaly Personal Data Protection Ordinance",
        """
§ 1 Definitions
(1) "Personal data" means any information relating to an identified or identifiable natural person.
(2) "Controller" means the municipal department that determines the purposes and means of processing personal data.
(3) "Data Protection Officer" means the official appointed under § 5 to monitor compliance with this Ordinance.
(4) "Personal data breach" means any accidental or unlawful loss, disclosure or alteration of personal data.

§ 2 Scope
This Ordinance applies to all processing of personal data by departments, agencies and contractors of the City of Tessaly. It does not apply to processing carried out by private individuals for purely household purposes.

§ 3 Principles of Processing
(1) Personal data shall be collected only for specified, explicit and legitimate purposes and shall not be further processed in a manner incompatible with those purposes.
(2) Personal data shall be kept no longer than is necessary for the purpose for which it was collected.
(3) A Controller must keep a register of processing activities and make it available to the Data Protection Officer on request.

§ 4 Rights of Data Subjects
(1) Any person may request a copy of the personal data held about them. The Controller shall respond within 30 days of receiving the request, free of charge.
(2) Where a request is manifestly excessive, the Controller may extend the response period once by a further 30 days and shall inform the requester of the reasons.
(3) A person may request the correction of inaccurate personal data at any time.

§ 5 Data Protection Officer
(1) The Mayor shall appoint a Data Protection Officer for a term of four years, renewable once.
(2) The Data Protection Officer shall report annually to the City Council by 31 March on the application of this Ordinance.

§ 6 Security and Breach Notification
(1) Controllers must implement appropriate technical and organisational measures to protect personal data.
(2) A Controller shall notify the Data Protection Officer of a personal data breach within 72 hours of becoming aware of it.
(3) Where a breach is likely to result in a high risk to individuals, the Controller shall also inform the affected persons without undue delay.

§ 7 Video Surveillance
(1) Recordings from municipal CCTV cameras shall be erased after 30 days unless they are required as evidence in pending proceedings.
(2) A person may request footage in which they appear, subject to § 4; the request must be made before the footage is erased.

§ 8 Penalties
A contractor that processes personal data in breach of this Ordinance may be fined up to $25,000 per violation by the Data Protection Officer.
""",
    ),
    (
        "tenancy-regulation",
        "City of Tessaly Residential Tenancy Regulation",
        """
§ 1 Definitions
(1) "Landlord" means a person who grants another person the right to occupy residential premises in return for rent.
(2) "Tenant" means a person who occupies residential premises under a tenancy agreement.
(3) "Security deposit" means money paid to the Landlord to secure the performance of the Tenant's obligations.
(4) "Rent Board" means the board established under § 7.

§ 2 Scope
This Regulation applies to all residential tenancies in the City of Tessaly except student residences operated by a university, hotels, and holiday lets of less than 28 days.

§ 3 Security Deposits
(1) A Landlord must not require a security deposit exceeding two months' rent.
(2) The deposit shall be held in a separate account and returned within 21 days after the tenancy ends, less any deductions itemised in writing.

§ 4 Rent Increases
(1) Rent may be increased no more than once in any 12-month period.
(2) An annual increase shall not exceed 4 percent of the current rent unless the Rent Board approves a higher amount under § 7.
(3) The Landlord shall give the Tenant at least 90 days' written notice of any rent increase.

§ 5 Repairs
(1) The Landlord shall carry out urgent repairs affecting heating, water or electricity within 48 hours of being notified.
(2) All other repairs for which the Landlord is responsible shall be completed within 14 days of notification.

§ 6 Termination
(1) A Tenant may end a periodic tenancy by giving at least 30 days' written notice to the Landlord.
(2) A Landlord may end a periodic tenancy only on a ground listed in this section and by giving at least 60 days' written notice to the Tenant.
(3) The grounds are: non-payment of rent for two consecutive months; serious damage to the premises caused by the Tenant; or the Landlord's genuine intention to occupy the premises personally.

§ 7 Rent Board
(1) The Rent Board consists of five members appointed by the City Council for terms of three years.
(2) A Landlord may apply to the Rent Board for approval of an increase above the limit in § 4, and the Rent Board shall decide such an application within 45 days.
""",
    ),
    (
        "employee-leave-policy",
        "Orinth Systems Ltd. Employee Leave Policy",
        """
§ 1 Definitions
(1) "Employee" means a person employed by Orinth Systems Ltd. under a contract of employment, excluding agency workers and contractors.
(2) "Line Manager" means the person to whom an Employee reports directly.
(3) "Leave Year" means the period from 1 April to 31 March.

§ 2 Scope
This Policy applies to all Employees in every office of Orinth Systems Ltd. Part-time Employees receive leave on a pro rata basis.

§ 3 Annual Leave
(1) A full-time Employee is entitled to 25 working days of paid annual leave in each Leave Year, in addition to public holidays.
(2) After five years of continuous service, the annual leave entitlement increases to 28 working days.
(3) Up to 5 unused days of annual leave may be carried over into the next Leave Year, but carried-over days must be taken by 30 June.

§ 4 Requesting Leave
(1) A request for annual leave of more than five consecutive working days shall be submitted to the Line Manager at least 30 days in advance.
(2) Shorter periods of annual leave require at least 5 working days' notice.
(3) The Line Manager must approve or refuse a request within 3 working days and give reasons for any refusal.

§ 5 Sick Leave
(1) An Employee who is unable to work due to illness must notify the Line Manager before 10:00 on the first day of absence.
(2) An absence of more than 7 calendar days must be supported by a medical certificate.
(3) Employees receive full pay for the first 20 working days of sick leave in any rolling 12-month period and half pay for the following 20 working days.

§ 6 Parental Leave
(1) An Employee with at least six months of service is entitled to 26 weeks of parental leave, of which the first 16 weeks are paid at full salary.
(2) The Employee shall give at least 60 days' notice of the intended start date of parental leave, subject to § 7.

§ 7 Exceptions
The HR Director may waive any notice requirement in this Policy in cases of emergency or medical necessity, and shall record the reason for each waiver.

§ 8 Compassionate Leave
An Employee may take up to 5 days of paid compassionate leave on the death of a close family member.
""",
    ),
    (
        "software-licence",
        "Quillfeather Ledger End User Licence Agreement",
        """
§ 1 Definitions
(1) "Software" means the Quillfeather Ledger accounting application, including all updates supplied under this Agreement.
(2) "Licensor" means Quillfeather Software Inc.
(3) "Licensee" means the organisation that has accepted this Agreement by signing an Order Form.
(4) "Authorised User" means an employee or contractor of the Licensee who is permitted by the Licensee to use the Software.

§ 2 Grant of Licence
(1) The Licensor grants the Licensee a non-exclusive, non-transferable licence to use the Software for the number of Authorised Users stated in the Order Form.
(2) Each Authorised User may install the Software on no more than three devices.

§ 3 Restrictions
The Licensee must not copy, modify, sublicense, rent or reverse engineer the Software, except to the extent that such restriction is prohibited by applicable law.

§ 4 Fees
(1) The Licensee shall pay an annual fee of $240 per Authorised User, invoiced in advance.
(2) Invoices are payable within 30 days, and late payments bear interest at 1.5 percent per month.

§ 5 Warranty
(1) The Licensor warrants that the Software will perform substantially in accordance with its documentation for 90 days from delivery.
(2) The Licensee's sole remedy for breach of this warranty is repair, replacement or a refund of the fees paid for the defective Software.

§ 6 Limitation of Liability
Except for liability arising under § 7, the Licensor's total liability under this Agreement shall not exceed the fees paid by the Licensee in the 12 months preceding the claim.

§ 7 Indemnity
The Licensor shall defend the Licensee against any third-party claim that the Software infringes an intellectual property right and shall pay any damages finally awarded on such a claim.

§ 8 Term and Termination
(1) This Agreement has an initial term of one year and renews automatically for successive one-year terms unless either party gives at least 30 days' written notice of non-renewal before the end of the current term.
(2) Either party may terminate this Agreement immediately for a material breach that has not been remedied within 15 days of written notice.
(3) On termination the Licensee shall uninstall the Software and destroy all copies within 10 days.

§ 9 Governing Law
This Agreement is governed by the laws of the jurisdiction in which the Licensor has its registered office.
""",
    ),
    (
        "procurement-rule",
        "Dunmore Regional Council Procurement Rule",
        """
§ 1 Definitions
(1) "Contracting Authority" means Dunmore Regional Council or any of its departments.
(2) "Estimated value" means the total amount payable over the full term of a contract, excluding value added tax.
(3) "Procurement Officer" means the officer designated by the Chief Executive to supervise procurement under this Rule.

§ 2 Scope
This Rule applies to all contracts for goods, services and works entered into by the Contracting Authority. It does not apply to employment contracts or to the purchase or lease of land.

§ 3 Thresholds
(1) A contract with an estimated value below $10,000 may be awarded directly after obtaining at least one written quotation.
(2) A contract with an estimated value of $10,000 or more but below $100,000 requires at least three written quotations.
(3) A contract with an estimated value of $100,000 or more shall be awarded by open tender advertised on the Council's procurement portal for at least 35 days.

§ 4 Prohibition of Splitting
A contract must not be divided into smaller contracts for the purpose of avoiding the thresholds in § 3.

§ 5 Evaluation
(1) Tenders shall be evaluated by a panel of at least three members appointed by the Procurement Officer.
(2) Price must account for at least 40 percent of the total evaluation score.
(3) Each panel member shall declare any conflict of interest in writing before reviewing any tender.

§ 6 Standstill Period
After notifying tenderers of the award decision, the Contracting Authority shall observe a standstill period of 10 days before concluding the contract.

§ 7 Local Suppliers
Where quotations are sought under § 3(2), at least one quotation should be requested from a small business located in the Dunmore region where practicable.

§ 8 Records
The Procurement Officer shall keep all procurement records for 6 years after the contract ends.
""",
    ),
    (
        "academic-integrity-code",
        "Kestrel Valley University Academic Integrity Code",
        """
§ 1 Definitions
(1) "Plagiarism" means presenting another person's work or ideas as one's own without acknowledgement.
(2) "Contract cheating" means arranging for a third party, paid or unpaid, to complete assessed work on a student's behalf.
(3) "Academic Integrity Officer" means the member of staff appointed by the Registrar to administer this Code.
(4) "Integrity Panel" means the panel established under § 5.

§ 2 Scope
This Code applies to all enrolled students of Kestrel Valley University, including exchange and visiting students, and to all work submitted for assessment.

§ 3 Student Obligations
(1) Students must acknowledge all sources used in assessed work.
(2) Students must not use generative AI tools in an assessment unless the module handbook expressly permits it, and any permitted use must be disclosed.

§ 4 Reporting
A member of staff who suspects a breach of this Code shall report it to the Academic Integrity Officer within 10 working days of discovering it.

§ 5 Integrity Panel
(1) An Integrity Panel consists of two members of academic staff and one student representative nominated by the Students' Union.
(2) The student shall receive at least 7 days' notice of the hearing and may be accompanied by one person of their choice.

§ 6 Penalties
(1) For a first minor breach, the Integrity Panel may reduce the mark for the assessment.
(2) For a moderate breach, the Integrity Panel may award a mark of zero for the assessment.
(3) For contract cheating, the Integrity Panel may suspend the student for up to one year or recommend expulsion to the Senate.

§ 7 Appeals
A student may appeal to the Pro-Vice-Chancellor (Education) within 14 days of the Integrity Panel's decision, but only on the grounds of procedural irregularity or new evidence.

§ 8 Records
The Academic Integrity Officer shall keep records of findings for 5 years after the student leaves the University.
""",
    ),
    (
        "records-retention-schedule",
        "City of Tessaly Municipal Records Retention Schedule",
        """
§ 1 Definitions
(1) "Record" means any information created or received in the course of municipal business, in any format.
(2) "Records Manager" means the officer in the City Clerk's Office responsible for this Schedule.
(3) "Disposal" means the destruction of a record or its transfer to the City Archive.

§ 2 Scope
This Schedule applies to all records held by departments of the City of Tessaly, whether on paper or in electronic systems.

§ 3 Retention Periods
(1) Financial records, including invoices and payment vouchers, shall be retained for 7 years after the end of the financial year to which they relate.
(2) Personnel files shall be retained for 6 years after the employment ends.
(3) General correspondence shall be retained for 3 years from the date of receipt or dispatch.
(4) Building permits and approved building plans shall be retained permanently.
(5) Approved minutes of the City Council and its committees shall be retained permanently and transferred to the City Archive after 20 years.

§ 4 Legal Holds
No record that is subject to a litigation hold may be disposed of, regardless of the periods in § 3, until the City Attorney lifts the hold in writing.

§ 5 Disposal
(1) The Records Manager must approve every disposal of records in advance.
(2) Paper records containing personal data must be destroyed by cross-cut shredding.
(3) A certificate of disposal shall be issued for each disposal and kept for 10 years.

§ 6 Review
The Records Manager shall review this Schedule every 3 years and submit any proposed changes to the City Council.
""",
    ),
]
