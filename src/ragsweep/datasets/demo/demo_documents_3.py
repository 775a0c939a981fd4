"""Demo documents, part 3 of 3: (id, title, body), as ``build_demo.py`` assembles them (CC0, see there)."""

DOCUMENTS: list[tuple[str, str, str]] = [
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
