"""Build the shipped ragsweep demo dataset (corpus.jsonl and questions.jsonl).

All twenty documents below are original, fictional legal/policy texts written for the
ragsweep project (the City of Tessaly, Dunmore Regional Council, Kestrel Valley University,
Orinth Systems, Quillfeather Software, Skyvault Hosting, the Harlan Braddock Foundation, the
Greenway Trust and the Meridian Scholars Programme are all invented). They are dedicated to the
public domain (CC0) for use with the project.

Questions carry their gold evidence as quoted text plus a doc_id; this script locates every quote
with ``str.find`` and refuses to write anything if a quote is missing from its document or occurs
in it more than once. Output is deterministic, so re-running regenerates identical files:

    .venv/bin/python src/ragsweep/datasets/demo/build_demo.py   # from the project root
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------------------------
# Documents: (id, title, body). The stored text is the title line, a blank line, then the body.
# Every section heading starts a line with "§ N"; nothing else does.
# ---------------------------------------------------------------------------------------------

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
    (
        "drone-operation-bylaw",
        "City of Tessaly Unmanned Aircraft Operation Bylaw",
        """
§ 1 Definitions
(1) "Drone" means an unmanned aircraft with a take-off mass of 250 grams or more.
(2) "Operator" means the person who controls the flight of a Drone.
(3) "Restricted Zone" means any area within 1 kilometre of Tessaly Municipal Airport or within 500 metres of a hospital helipad or a prison.

§ 2 Scope
This Bylaw applies to every Drone flown within the limits of the City of Tessaly. It does not apply to Drones operated by police, fire or ambulance services in the course of their duties.

§ 3 Permits
(1) An Operator must hold a City Drone Permit to fly a Drone over a public park.
(2) The permit fee is $75, and a permit is valid for 12 months from the date of issue.
(3) The City Parks Department shall decide each permit application within 15 working days.

§ 4 Operating Rules
(1) A Drone shall not be flown higher than 120 metres above ground level.
(2) The Operator must keep the Drone within visual line of sight at all times.
(3) A Drone must not be flown within 30 metres of any person who is not involved in its operation.
(4) No flight may take place between sunset and sunrise unless the permit carries a night endorsement.

§ 5 Restricted Zones
Flight within a Restricted Zone is prohibited except with the prior written authorisation of the Airport Authority.

§ 6 Privacy
Images of identifiable persons captured by a Drone are personal data and shall be handled in accordance with the City of Tessaly Personal Data Protection Ordinance.

§ 7 Penalties
(1) An Operator who breaches this Bylaw is liable to a fine of $300 for a first offence.
(2) A subsequent offence committed within 2 years of the first is liable to a fine of $750, and the police may seize the Drone.
""",
    ),
    (
        "library-lending-policy",
        "Tessaly Public Library Lending Policy",
        """
§ 1 Definitions
(1) "Member" means a person holding a valid Tessaly Public Library card.
(2) "Junior Member" means a Member under the age of 16.
(3) "Item" means any book, audiobook, DVD, game or other material available for loan.

§ 2 Membership
(1) Membership is free for residents of the City of Tessaly. Non-residents pay an annual membership fee of $25.
(2) Library cards are valid for 3 years and may be renewed at any branch.

§ 3 Loan Periods and Limits
(1) Books and audiobooks may be borrowed for 21 days.
(2) DVDs and games may be borrowed for 7 days.
(3) A Member may have up to 15 Items on loan at one time; a Junior Member may have up to 8 Items.

§ 4 Renewals
An Item may be renewed up to 2 times, unless it has been reserved by another Member.

§ 5 Overdue Items
(1) A late fee of $0.25 per Item per day is charged for overdue Items, up to a maximum of $10 per Item.
(2) No late fees are charged to Junior Members.
(3) Borrowing rights are suspended while a Member owes more than $20 in fees.

§ 6 Lost or Damaged Items
(1) A Member who loses or damages an Item shall pay its replacement cost plus a processing fee of $5.
(2) The replacement cost is refunded if the lost Item is returned in good condition within 60 days of payment.

§ 7 Privacy of Borrowing Records
(1) A Member's borrowing history is deleted 30 days after each Item is returned, unless the Member has opted in to keep a reading history.
(2) Library staff must not disclose which Items a Member has borrowed to any third party except under a court order.
""",
    ),
    (
        "whistleblower-protection-act",
        "Tessaly Whistle-blower Protection Act",
        """
§ 1 Definitions
(1) "Wrongdoing" means a criminal offence, a failure to comply with a legal obligation, a danger to public health or safety, or the deliberate concealment of any of these.
(2) "Protected disclosure" means a disclosure of information that the whistle-blower reasonably believes shows Wrongdoing, made in accordance with § 3.
(3) "Ombudsman" means the Municipal Integrity Ombudsman.

§ 2 Scope
This Act applies to employees, contractors, volunteers and interns of the City of Tessaly and of any entity that the City controls.

§ 3 Making a Disclosure
(1) A disclosure may be made to the designated Integrity Contact of the person's organisation or directly to the Ombudsman.
(2) A disclosure may be made anonymously.

§ 4 Handling of Disclosures
(1) The recipient of a disclosure shall acknowledge receipt within 7 days.
(2) The recipient shall inform the whistle-blower of the action taken within 3 months of the acknowledgement.

§ 5 Protection Against Retaliation
(1) No person shall dismiss, demote, discipline or otherwise subject a whistle-blower to detriment because of a protected disclosure.
(2) Where a whistle-blower shows that they made a protected disclosure and later suffered a detriment, the employer must prove that the detriment was unrelated to the disclosure.

§ 6 Remedies
(1) A whistle-blower who suffers retaliation may complain to the Ombudsman within 6 months of the detriment.
(2) The Ombudsman may order reinstatement and compensation of up to 12 months' salary.

§ 7 Confidentiality
(1) The identity of a whistle-blower shall not be disclosed without their consent unless disclosure is required by a court order.
(2) Unauthorised disclosure of a whistle-blower's identity is an offence punishable by a fine of up to $10,000.

§ 8 False Disclosures
A disclosure that the person knows to be false is not a protected disclosure, and this Act gives that person no protection.
""",
    ),
    (
        "parking-ordinance",
        "City of Tessaly Parking Ordinance",
        """
§ 1 Definitions
(1) "Central Zone" means the area of the city centre marked on the map annexed to this Ordinance.
(2) "Residential Permit Zone" means a street in which parking is reserved for holders of a residential parking permit.
(3) "Enforcement Officer" means a person authorised by the City to issue penalty notices under this Ordinance.

§ 2 On-Street Parking Charges
(1) Pay parking applies Monday to Saturday from 08:00 to 18:00.
(2) The charge is $2.50 per hour in the Central Zone and $1.50 per hour elsewhere.
(3) The maximum stay in a pay bay in the Central Zone is 3 hours.

§ 3 Residential Permits
(1) A residential parking permit costs $60 per year for a resident's first vehicle and $120 per year for a second vehicle.
(2) A permit is issued only for a vehicle registered at an address within the Residential Permit Zone.

§ 4 Penalty Notices
(1) An Enforcement Officer may issue a penalty notice of $45 for any parking contravention.
(2) The penalty is reduced to $25 if it is paid within 14 days of the notice.
(3) If the penalty remains unpaid after 28 days, it increases to $90.

§ 5 Challenges
(1) The recipient of a penalty notice may appeal to the Parking Adjudicator within 28 days of the notice.
(2) Enforcement of the penalty is suspended while an appeal is pending.

§ 6 Towing
(1) A vehicle that obstructs a driveway, a fire hydrant or a bus lane may be towed to the City Vehicle Pound.
(2) The release fee is $150, plus $20 for each day the vehicle is stored.

§ 7 Disabled Parking
Holders of a valid disabled parking badge may park free of charge for up to 4 hours in any pay bay.
""",
    ),
    (
        "acceptable-use-policy",
        "Kestrel Valley University IT Acceptable Use Policy",
        """
§ 1 Definitions
(1) "IT Facilities" means all computers, networks, software, cloud services and accounts provided by Kestrel Valley University.
(2) "User" means any student, staff member or visitor who has been granted access to the IT Facilities.
(3) "Credentials" means usernames, passwords, security tokens and any other means of authentication.

§ 2 Scope
This Policy applies to every use of the IT Facilities, whether on campus or remotely.

§ 3 Account Security
(1) Users must not share their Credentials with any other person.
(2) Passwords must be at least 14 characters long.
(3) Multi-factor authentication is mandatory for all staff accounts.

§ 4 Prohibited Use
Users must not use the IT Facilities for commercial activities that the University has not approved, for cryptocurrency mining, for accessing another person's account, or for sending bulk unsolicited email.

§ 5 Personal Use
Reasonable personal use of the IT Facilities is permitted provided that it does not interfere with the User's work or studies or with the use of the IT Facilities by others.

§ 6 Monitoring
(1) The University may monitor network traffic to protect the security of the IT Facilities.
(2) The content of an individual User's email may be accessed only with the written approval of the Chief Information Officer, subject to § 7.
(3) Network security logs are kept for 90 days.

§ 7 Investigations
Any access to the content of an individual User's account must be recorded and reported to the University's Data Protection Officer within 5 working days.

§ 8 Sanctions
A breach of this Policy may lead to the suspension of access to the IT Facilities and to referral under the University's disciplinary procedures.
""",
    ),
    (
        "grant-agreement",
        "Harlan Braddock Foundation Community Grant Agreement",
        """
§ 1 Definitions
(1) "Foundation" means the Harlan Braddock Foundation.
(2) "Grantee" means the organisation named in the award letter.
(3) "Project" means the activities described in the Grantee's approved application.
(4) "Grant Period" means the period of 18 months beginning on the start date stated in the award letter.

§ 2 Award and Payment
(1) The Foundation awards the Grantee a grant of up to $50,000 for the Project.
(2) The grant is paid in three instalments: 60 percent on signature of this Agreement and 30 percent after approval of the interim report.
(3) The final 10 percent of the grant is retained until the Foundation approves the final report.

§ 3 Eligible Costs
(1) Indirect costs may not exceed 15 percent of the direct costs of the Project.
(2) Any single item of equipment costing more than $5,000 requires the Foundation's prior written approval.

§ 4 Reporting
(1) The Grantee shall submit an interim report within 30 days after the ninth month of the Grant Period.
(2) The Grantee shall submit a final narrative and financial report within 60 days after the end of the Grant Period.

§ 5 Variations
The Grantee may move up to 10 percent of the budget between budget lines without approval; any larger change requires the Foundation's written consent.

§ 6 Unspent Funds
Any funds not spent on the Project by the end of the Grant Period shall be returned to the Foundation within 90 days.

§ 7 Termination
The Foundation may terminate this Agreement by giving 30 days' written notice if the Grantee materially breaches it, and the Grantee shall repay any funds not used in accordance with this Agreement.

§ 8 Acknowledgement
The Grantee shall acknowledge the support of the Foundation in all publications and publicity relating to the Project.

§ 9 Records
The Grantee shall retain financial records relating to the Project for 5 years after submission of the final report.
""",
    ),
    (
        "food-vendor-licensing",
        "City of Tessaly Street Food Vendor Licensing Rule",
        """
§ 1 Definitions
(1) "Street Food Vendor" means a person who sells food prepared for immediate consumption from a vehicle, cart or stall on public land.
(2) "Pitch" means a location on public land allocated to a licence holder.
(3) "Environmental Health Officer" means an officer of the City's Environmental Health Service.

§ 2 Licences and Fees
(1) No person shall trade as a Street Food Vendor without a licence issued under this Rule.
(2) The annual licence fee is $320.
(3) A temporary event licence may be issued for a fee of $45 per day.

§ 3 Applications
(1) An applicant must hold a level 2 food hygiene certificate and must present the vehicle, cart or stall for inspection.
(2) The City shall decide each complete application within 28 days.

§ 4 Licence Conditions
(1) Trading is permitted only between 07:00 and 22:00.
(2) No Street Food Vendor may trade within 50 metres of a school entrance during school hours.
(3) The licence holder must remove all waste from the Pitch at the end of each trading day and must display the licence where customers can see it.

§ 5 Inspections
An Environmental Health Officer may inspect a Pitch at any reasonable time, and the licence holder must display the most recent hygiene rating.

§ 6 Suspension
(1) An Environmental Health Officer may suspend a licence immediately where there is an imminent risk to health.
(2) The licence holder may request a review of the suspension within 10 days.

§ 7 Revocation
(1) A licence shall be revoked if it has been suspended three times within 24 months.
(2) A person whose licence has been revoked may not apply for a new licence for 12 months.
""",
    ),
    (
        "noise-ordinance",
        "City of Tessaly Noise Control Ordinance",
        """
§ 1 Definitions
(1) "Quiet Hours" means 22:00 to 07:00 from Monday to Friday, and 23:00 to 09:00 on Saturdays, Sundays and public holidays.
(2) "Noise Officer" means an officer appointed by the City to enforce this Ordinance.
(3) "dB(A)" means the A-weighted sound pressure level in decibels.

§ 2 Residential Noise Limits
(1) During Quiet Hours, noise measured at the boundary of a residential property shall not exceed 45 dB(A).
(2) At all other times, noise measured at the boundary of a residential property shall not exceed 55 dB(A).

§ 3 Construction Work
(1) Noisy construction work is permitted only from 07:30 to 18:00 on weekdays and from 08:00 to 13:00 on Saturdays, and not at all on Sundays or public holidays.
(2) Work outside these hours requires an extended hours construction permit, which costs $60 and must be applied for at least 10 working days in advance.

§ 4 Events
(1) Outdoor amplified music requires an event noise permit.
(2) Under an event noise permit, noise shall not exceed 65 dB(A) at the nearest dwelling, and amplified music must end by 23:00.

§ 5 Complaints
The Noise Officer shall begin investigating a complaint within 5 working days of receiving it.

§ 6 Penalties
(1) For a first breach, the Noise Officer shall normally issue a written warning.
(2) A fixed penalty of $200 may be imposed for a breach following a warning, rising to $500 for a further breach within 12 months.

§ 7 Exemptions
This Ordinance does not apply to emergency work, to the sounding of alarms, or to public events organised by the City.
""",
    ),
    (
        "volunteer-code-of-conduct",
        "Greenway Trust Volunteer Code of Conduct",
        """
§ 1 Definitions
(1) "Volunteer" means a person who gives time to the Greenway Trust without payment other than the reimbursement of expenses.
(2) "Volunteer Coordinator" means the member of staff responsible for recruiting and supporting Volunteers.
(3) "Vulnerable person" means an adult who, because of age, illness or disability, may be unable to protect themselves from harm.

§ 2 Scope
This Code applies to every Volunteer taking part in any activity organised by the Greenway Trust.

§ 3 General Standards
(1) Every Volunteer must attend an induction session before their first shift.
(2) The minimum age for Volunteers is 16, and a Volunteer under 18 needs the written consent of a parent or guardian.

§ 4 Safeguarding
(1) A Volunteer who will work with children or Vulnerable persons must complete a background check before starting, and the check must be renewed every 3 years.
(2) A Volunteer must not be alone with a child at any time during a Trust activity.

§ 5 Expenses
(1) Travel by private car is reimbursed at $0.40 per mile.
(2) Expense claims must be submitted within 60 days, and receipts are required for any item over $10.

§ 6 Confidentiality
A Volunteer shall not disclose personal information about the people the Trust supports, either during or after their time with the Trust.

§ 7 Reporting Concerns
A Volunteer who has a safeguarding concern must report it to the Designated Safeguarding Lead within 24 hours.

§ 8 Breaches of the Code
(1) The Volunteer Coordinator may suspend a Volunteer who breaches this Code.
(2) A suspended Volunteer may ask the Trustees' Volunteer Committee to review the decision within 14 days.
""",
    ),
    (
        "cloud-data-processing-agreement",
        "Skyvault Hosting Data Processing Agreement",
        """
§ 1 Definitions
(1) "Controller" means the customer that determines the purposes and means of processing Customer Personal Data.
(2) "Processor" means Skyvault Hosting Ltd.
(3) "Customer Personal Data" means personal data processed by the Processor on behalf of the Controller in providing the hosting services.
(4) "Sub-processor" means any third party engaged by the Processor to process Customer Personal Data.

§ 2 Instructions
The Processor shall process Customer Personal Data only on the documented instructions of the Controller, including with regard to transfers.

§ 3 Security
(1) The Processor shall encrypt Customer Personal Data at rest using AES-256.
(2) The Processor shall commission an independent penetration test at least once a year.
(3) All staff with access to Customer Personal Data shall be bound by confidentiality obligations.

§ 4 Sub-processors
(1) The Processor shall notify the Controller at least 30 days before engaging a new Sub-processor.
(2) The Controller may object to a new Sub-processor within 14 days of the notice; if the objection is not resolved, the Controller may terminate the affected services.

§ 5 Breach Notification
The Processor shall notify the Controller without undue delay, and in any event within 48 hours, after becoming aware of a personal data breach affecting Customer Personal Data.

§ 6 Data Location
Customer Personal Data shall be stored only in data centres in the region selected by the Controller and shall not be transferred elsewhere without the Controller's prior written consent.

§ 7 Audits
The Controller may audit the Processor once per calendar year on at least 45 days' notice; the Controller bears the cost unless the audit reveals material non-compliance.

§ 8 Return and Deletion
(1) On termination, the Processor shall return Customer Personal Data in a machine-readable format if the Controller requests it within 30 days.
(2) The Processor shall delete all Customer Personal Data from its live systems within 90 days after termination.
(3) Copies held in backups shall be overwritten within 180 days after termination.
""",
    ),
    (
        "public-meeting-transparency",
        "City of Tessaly Open Meetings and Transparency Rule",
        """
§ 1 Definitions
(1) "Public Body" means the City Council, its committees, and any board established by the City Council.
(2) "Meeting" means any gathering of a quorum of a Public Body at which public business is discussed.
(3) "Closed Session" means a part of a Meeting from which the public is excluded under § 4.

§ 2 Notice of Meetings
(1) The agenda of a regular Meeting shall be published at least 5 working days before the Meeting.
(2) A special Meeting may be called on at least 48 hours' public notice.

§ 3 Public Attendance
(1) Every Meeting is open to the public except for a Closed Session.
(2) Each regular Meeting shall include a public comment period of at least 30 minutes, and each speaker may speak for up to 3 minutes.

§ 4 Closed Sessions
(1) A Public Body may hold a Closed Session only to discuss personnel matters, legal advice on pending litigation, or negotiations for the acquisition of land.
(2) A Closed Session requires a two-thirds vote of the members present, and the reasons shall be stated in open session.

§ 5 Minutes
(1) Draft minutes of every Meeting shall be published within 10 working days.
(2) Approved minutes shall be retained permanently in accordance with the Municipal Records Retention Schedule.

§ 6 Recordings
(1) Audio-visual recordings of open Meetings shall be published online within 3 working days.
(2) Recordings shall be retained for 2 years after the Meeting.

§ 7 Remedies
A court may declare void any action taken in breach of this Rule if a challenge is filed within 90 days of the action.
""",
    ),
    (
        "scholarship-terms",
        "Meridian Scholars Programme Terms and Conditions",
        """
§ 1 Definitions
(1) "Scholar" means a student of Kestrel Valley University who has accepted a Meridian Scholarship.
(2) "Award Year" means the academic year from 1 September to 31 August.
(3) "Scholarship Committee" means the committee of the University that administers the Meridian Scholars Programme.

§ 2 Value of the Scholarship
(1) The scholarship is worth $6,000 per Award Year towards tuition, plus a book allowance of $400.
(2) The scholarship is paid in two equal instalments, in October and in February.

§ 3 Eligibility
An applicant must be enrolled full-time at Kestrel Valley University and must have a household income below $55,000.

§ 4 Continuation Requirements
(1) To keep the scholarship, a Scholar must maintain a grade point average of at least 3.2 and pass at least 75 percent of the credits attempted in each Award Year.
(2) The scholarship may be held for a maximum of 4 Award Years.

§ 5 Probation
(1) A Scholar who does not meet the requirements of § 4 is placed on probation for one semester.
(2) If the Scholar fails to meet the requirements a second time, the scholarship ends.

§ 6 Deferral
A Scholar may defer the scholarship for up to 12 months with the approval of the Scholarship Committee, and must request the deferral at least 60 days before the start of the semester.

§ 7 Repayment
A Scholar who is found to have committed contract cheating under the Kestrel Valley University Academic Integrity Code shall repay all instalments paid in the current Award Year.

§ 8 Community Service
Each Scholar shall complete at least 20 hours of community service in each Award Year and report them to the Scholarship Committee.
""",
    ),
    (
        "pet-ownership-regulation",
        "City of Tessaly Companion Animal Regulation",
        """
§ 1 Definitions
(1) "Companion animal" means a dog, cat or domestic rabbit kept for companionship.
(2) "Owner" means the person in whose name a Companion animal is registered, or who has its day-to-day care.
(3) "Animal Control Officer" means an officer authorised by the City to enforce this Regulation.

§ 2 Registration
(1) Every dog and cat older than 12 weeks must be registered with the City within 14 days of being acquired.
(2) The annual registration fee is $20 for a desexed animal and $40 for any other animal.

§ 3 Microchipping
(1) Every dog and cat must be microchipped before it is registered.
(2) The Owner shall update the microchip details within 7 days of any change of address or ownership.

§ 4 Limits on Numbers
No household may keep more than 4 Companion animals, of which no more than 3 may be dogs, without a multi-animal permit.

§ 5 Dogs in Public Places
(1) Dogs must be kept on a leash no longer than 2 metres in public places, except in designated off-leash areas.
(2) The Owner must remove the dog's faeces immediately, and failure to do so is punishable by a fine of $100.

§ 6 Dangerous Dogs
(1) An Animal Control Officer may declare a dog dangerous if it has attacked a person or another animal.
(2) The Owner of a dangerous dog must keep it muzzled in public and hold liability insurance of at least $500,000.
(3) The Owner may appeal against a declaration within 21 days.

§ 7 Seized Animals
An animal seized under this Regulation is held for 7 days and may be released to its Owner on payment of a release fee of $80.
""",
    ),
]

# ---------------------------------------------------------------------------------------------
# Questions: (type, question, reference_answer, [(doc_id, quote), ...]).
# Ids q001.. are assigned in list order.
# ---------------------------------------------------------------------------------------------

SIMPLE = "simple"
COMPLEX = "complex"
COMPARATIVE = "comparative"
OUT = "out_of_scope"

QUESTIONS: list[tuple[str, str, str, list[tuple[str, str]]]] = [
    # ---- simple: one fact, one span ----------------------------------------------------------
    (
        SIMPLE,
        "Under the City of Tessaly Personal Data Protection Ordinance, how quickly must a Controller notify the Data Protection Officer of a personal data breach?",
        "The Controller must notify the Data Protection Officer within 72 hours of becoming aware of the breach.",
        [("data-protection-ordinance", "A Controller shall notify the Data Protection Officer of a personal data breach within 72 hours of becoming aware of it.")],
    ),
    (
        SIMPLE,
        "What is the largest security deposit a Landlord in Tessaly may require?",
        "A Landlord may not require a security deposit of more than two months' rent.",
        [("tenancy-regulation", "A Landlord must not require a security deposit exceeding two months' rent.")],
    ),
    (
        SIMPLE,
        "How many days of paid annual leave does a full-time Orinth Systems employee get each Leave Year?",
        "A full-time employee is entitled to 25 working days of paid annual leave per Leave Year, in addition to public holidays.",
        [("employee-leave-policy", "A full-time Employee is entitled to 25 working days of paid annual leave in each Leave Year, in addition to public holidays.")],
    ),
    (
        SIMPLE,
        "How long is the warranty on Quillfeather Ledger?",
        "The Licensor warrants that the Software will perform substantially in accordance with its documentation for 90 days from delivery.",
        [("software-licence", "The Licensor warrants that the Software will perform substantially in accordance with its documentation for 90 days from delivery.")],
    ),
    (
        SIMPLE,
        "For how long must a Dunmore Regional Council open tender be advertised?",
        "An open tender must be advertised on the Council's procurement portal for at least 35 days.",
        [("procurement-rule", "shall be awarded by open tender advertised on the Council's procurement portal for at least 35 days")],
    ),
    (
        SIMPLE,
        "How long does a Kestrel Valley University student have to appeal an Integrity Panel decision, and to whom?",
        "The student may appeal to the Pro-Vice-Chancellor (Education) within 14 days of the Integrity Panel's decision.",
        [("academic-integrity-code", "A student may appeal to the Pro-Vice-Chancellor (Education) within 14 days of the Integrity Panel's decision")],
    ),
    (
        SIMPLE,
        "How long must the City of Tessaly keep general correspondence?",
        "General correspondence must be retained for 3 years from the date it was received or sent.",
        [("records-retention-schedule", "General correspondence shall be retained for 3 years from the date of receipt or dispatch.")],
    ),
    (
        SIMPLE,
        "What is the maximum height at which a drone may be flown in Tessaly?",
        "A drone may not be flown higher than 120 metres above ground level.",
        [("drone-operation-bylaw", "A Drone shall not be flown higher than 120 metres above ground level.")],
    ),
    (
        SIMPLE,
        "What late fee does the Tessaly Public Library charge for overdue items?",
        "The library charges $0.25 per item per day, up to a maximum of $10 per item.",
        [("library-lending-policy", "A late fee of $0.25 per Item per day is charged for overdue Items, up to a maximum of $10 per Item.")],
    ),
    (
        SIMPLE,
        "Within what time must the recipient of a whistle-blower's disclosure acknowledge receipt?",
        "Receipt of the disclosure must be acknowledged within 7 days.",
        [("whistleblower-protection-act", "The recipient of a disclosure shall acknowledge receipt within 7 days.")],
    ),
    (
        SIMPLE,
        "How much is a Tessaly parking penalty if it is paid promptly?",
        "The $45 penalty is reduced to $25 if it is paid within 14 days of the notice.",
        [("parking-ordinance", "The penalty is reduced to $25 if it is paid within 14 days of the notice.")],
    ),
    (
        SIMPLE,
        "What is the minimum password length under the Kestrel Valley University IT Acceptable Use Policy?",
        "Passwords must be at least 14 characters long.",
        [("acceptable-use-policy", "Passwords must be at least 14 characters long.")],
    ),
    (
        SIMPLE,
        "What limit does the Harlan Braddock Foundation place on indirect costs?",
        "Indirect costs may not exceed 15 percent of the Project's direct costs.",
        [("grant-agreement", "Indirect costs may not exceed 15 percent of the direct costs of the Project.")],
    ),
    (
        SIMPLE,
        "How much does an annual street food vendor licence cost in Tessaly?",
        "The annual licence fee for a street food vendor is $320.",
        [("food-vendor-licensing", "The annual licence fee is $320.")],
    ),
    (
        SIMPLE,
        "What is the noise limit at the boundary of a residential property during Quiet Hours in Tessaly?",
        "During Quiet Hours, noise at the boundary of a residential property must not exceed 45 dB(A).",
        [("noise-ordinance", "During Quiet Hours, noise measured at the boundary of a residential property shall not exceed 45 dB(A).")],
    ),
    (
        SIMPLE,
        "What is the minimum age to volunteer with the Greenway Trust?",
        "Volunteers must be at least 16, and those under 18 need written consent from a parent or guardian.",
        [("volunteer-code-of-conduct", "The minimum age for Volunteers is 16, and a Volunteer under 18 needs the written consent of a parent or guardian.")],
    ),
    (
        SIMPLE,
        "How much advance notice must Skyvault give a customer before engaging a new Sub-processor?",
        "Skyvault must notify the Controller at least 30 days before engaging a new Sub-processor.",
        [("cloud-data-processing-agreement", "The Processor shall notify the Controller at least 30 days before engaging a new Sub-processor.")],
    ),
    (
        SIMPLE,
        "How long may each member of the public speak during the public comment period of a Tessaly Council meeting?",
        "Each speaker may speak for up to 3 minutes during the public comment period.",
        [("public-meeting-transparency", "each speaker may speak for up to 3 minutes")],
    ),
    (
        SIMPLE,
        "What grade point average must a Meridian Scholar maintain?",
        "A Meridian Scholar must maintain a grade point average of at least 3.2.",
        [("scholarship-terms", "a Scholar must maintain a grade point average of at least 3.2")],
    ),
    (
        SIMPLE,
        "What is the annual registration fee for a desexed cat in Tessaly?",
        "The annual registration fee for a desexed animal is $20.",
        [("pet-ownership-regulation", "The annual registration fee is $20 for a desexed animal and $40 for any other animal.")],
    ),
    (
        SIMPLE,
        "For how long is Tessaly's Data Protection Officer appointed?",
        "The Data Protection Officer is appointed by the Mayor for a term of four years, which may be renewed once.",
        [("data-protection-ordinance", "The Mayor shall appoint a Data Protection Officer for a term of four years, renewable once.")],
    ),
    (
        SIMPLE,
        "How close to a school entrance may a street food vendor trade during school hours?",
        "A street food vendor may not trade within 50 metres of a school entrance during school hours.",
        [("food-vendor-licensing", "No Street Food Vendor may trade within 50 metres of a school entrance during school hours.")],
    ),
    (
        SIMPLE,
        "Which unmanned aircraft count as a \"Drone\" under Tessaly's bylaw?",
        "A Drone is an unmanned aircraft with a take-off mass of 250 grams or more.",
        [("drone-operation-bylaw", "\"Drone\" means an unmanned aircraft with a take-off mass of 250 grams or more.")],
    ),
    (
        SIMPLE,
        "What vote is needed for a Tessaly Public Body to go into a Closed Session?",
        "A Closed Session requires a two-thirds vote of the members present, and the reasons must be stated in open session.",
        [("public-meeting-transparency", "A Closed Session requires a two-thirds vote of the members present, and the reasons shall be stated in open session.")],
    ),
    (
        SIMPLE,
        "At what rate does the Greenway Trust reimburse volunteers who travel by car?",
        "Travel by private car is reimbursed at $0.40 per mile.",
        [("volunteer-code-of-conduct", "Travel by private car is reimbursed at $0.40 per mile.")],
    ),
    # ---- complex: two or more spans ----------------------------------------------------------
    (
        COMPLEX,
        "If I ask the City of Tessaly for CCTV footage of myself, how long does the Controller have to answer, and how soon must I ask?",
        "The Controller must normally respond within 30 days of receiving the request, free of charge. The request must be made before the footage is erased, and CCTV recordings are erased after 30 days unless needed as evidence in pending proceedings.",
        [
            ("data-protection-ordinance", "The Controller shall respond within 30 days of receiving the request, free of charge."),
            ("data-protection-ordinance", "Recordings from municipal CCTV cameras shall be erased after 30 days unless they are required as evidence in pending proceedings."),
            ("data-protection-ordinance", "the request must be made before the footage is erased"),
        ],
    ),
    (
        COMPLEX,
        "Can a Tessaly Landlord raise the rent by more than 4 percent in a year, and if so who decides and how quickly?",
        "Only with approval: increases above 4 percent need the Rent Board's approval. The Landlord applies to the Rent Board, which must decide the application within 45 days.",
        [
            ("tenancy-regulation", "An annual increase shall not exceed 4 percent of the current rent unless the Rent Board approves a higher amount under § 7."),
            ("tenancy-regulation", "the Rent Board shall decide such an application within 45 days"),
        ],
    ),
    (
        COMPLEX,
        "An Orinth Systems employee has a medical emergency and cannot give the usual notice before starting parental leave. What is the normal notice period, and can it be set aside?",
        "The normal requirement is at least 60 days' notice of the intended start date of parental leave. The HR Director may waive any notice requirement in cases of emergency or medical necessity and must record the reason.",
        [
            ("employee-leave-policy", "The Employee shall give at least 60 days' notice of the intended start date of parental leave, subject to § 7."),
            ("employee-leave-policy", "The HR Director may waive any notice requirement in this Policy in cases of emergency or medical necessity"),
        ],
    ),
    (
        COMPLEX,
        "Is Quillfeather's liability to a Licensee always capped at one year of fees?",
        "No. Liability is generally capped at the fees paid in the 12 months before the claim, but the cap does not apply to the indemnity under § 7, under which Quillfeather must defend third-party intellectual property infringement claims and pay any damages finally awarded.",
        [
            ("software-licence", "Except for liability arising under § 7, the Licensor's total liability under this Agreement shall not exceed the fees paid by the Licensee in the 12 months preceding the claim."),
            ("software-licence", "The Licensor shall defend the Licensee against any third-party claim that the Software infringes an intellectual property right"),
        ],
    ),
    (
        COMPLEX,
        "Dunmore Regional Council wants to buy services with an estimated value of $60,000. How many quotations does it need, and is there a rule about whom to ask?",
        "It needs at least three written quotations, because the value is between $10,000 and $100,000. Where practicable, at least one of them should be requested from a small business in the Dunmore region.",
        [
            ("procurement-rule", "A contract with an estimated value of $10,000 or more but below $100,000 requires at least three written quotations."),
            ("procurement-rule", "at least one quotation should be requested from a small business located in the Dunmore region where practicable"),
        ],
    ),
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
        COMPLEX,
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
        "The documents do not say; the Residential Tenancy Regulation requires deposits to be returned within 21 days but sets no fine or penalty for failing to do so.",
        [],
    ),
    (
        OUT,
        "How many days of paid jury service leave does Orinth Systems give its employees?",
        "The documents do not say; the Orinth Systems Leave Policy covers annual, sick, parental and compassionate leave but not jury service.",
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
        "The documents do not give the library's opening hours; the Lending Policy covers membership, loans, fees and privacy only.",
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


def build_documents() -> list[dict]:
    docs = []
    seen: set[str] = set()
    for doc_id, title, body in DOCUMENTS:
        if doc_id in seen:
            raise SystemExit(f"duplicate document id {doc_id!r}")
        seen.add(doc_id)
        text = f"{title}\n\n{body.strip()}\n"
        docs.append({"id": doc_id, "title": title, "text": text})
    return docs


def build_questions(docs: list[dict]) -> list[dict]:
    texts = {d["id"]: d["text"] for d in docs}
    out = []
    for n, (qtype, question, answer, quotes) in enumerate(QUESTIONS, start=1):
        qid = f"q{n:03d}"
        evidence = []
        for doc_id, quote in quotes:
            if doc_id not in texts:
                raise SystemExit(f"{qid}: unknown document {doc_id!r}")
            text = texts[doc_id]
            start = text.find(quote)
            if start < 0:
                raise SystemExit(f"{qid}: quote not found in {doc_id!r}: {quote!r}")
            if text.find(quote, start + 1) >= 0:
                raise SystemExit(f"{qid}: quote appears more than once in {doc_id!r}: {quote!r}")
            evidence.append({"doc_id": doc_id, "start": start, "end": start + len(quote), "text": quote})
        out.append(
            {
                "id": qid,
                "question": question,
                "reference_answer": answer,
                "type": qtype,
                "evidence": evidence,
            }
        )
    return out


def check_documents(docs: list[dict]) -> None:
    for d in docs:
        text = d["text"]
        bad = sorted({c for c in text if ord(c) > 127 and c != "§"})
        if bad:
            raise SystemExit(f"{d['id']}: non-ASCII characters other than the section sign: {bad!r}")
        sections = re.split(r"\n(?=§)", text)[1:]
        if len(sections) < 3:
            raise SystemExit(f"{d['id']}: only {len(sections)} sections")
        for line in text.splitlines():
            if line.startswith("§") and not re.match(r"§ \d+ \S", line):
                raise SystemExit(f"{d['id']}: malformed section heading {line!r}")
        words = len(text.split())
        if not 250 <= words <= 500:
            raise SystemExit(f"{d['id']}: {words} words, outside 250-500")


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> int:
    docs = build_documents()
    check_documents(docs)
    questions = build_questions(docs)
    write_jsonl(HERE / "corpus.jsonl", docs)
    write_jsonl(HERE / "questions.jsonl", questions)
    counts: dict[str, int] = {}
    for q in questions:
        counts[q["type"]] = counts.get(q["type"], 0) + 1
    print(f"wrote {len(docs)} documents and {len(questions)} questions {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
