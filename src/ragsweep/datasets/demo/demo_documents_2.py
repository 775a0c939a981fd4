"""Demo documents, part 2 of 3: (id, title, body), as ``build_demo.py`` assembles them (CC0, see there)."""

DOCUMENTS: list[tuple[str, str, str]] = [
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
]
