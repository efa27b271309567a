import { no, yes, type Question } from './questions.ts';

/**
 * The questions of the second fixture (Brightwater Dental, clinic-site.ts), written with the
 * site and before any tuning on it, as a patient would ask: paraphrased, in words the pages
 * mostly do not use. Judged as the first set's (questions.ts); every fourth is held out.
 */

export const CLINIC_QUESTIONS: Question[] = [
  // price
  { kind: 'price', q: 'How much is a teeth cleaning for an adult?', expect: [/\$115\b/] },
  { kind: 'price', q: "I don't have insurance. What would my first visit cost?", expect: [/\$149\b/] },
  { kind: 'price', q: 'How pricey is whitening at your office?', expect: [/\$399\b/] },
  { kind: 'price', q: "What's the going rate for a crown?", expect: [/\$1,150\b/] },
  { kind: 'price', q: 'What does the savings plan cost for my son?', expect: [/\$199\b/] },
  { kind: 'price', q: 'Is there a charge if I miss my appointment?', expect: [/\$50\b/] },
  { kind: 'price', q: 'How much extra is laughing gas?', expect: [/\$60\b/] },
  { kind: 'price', q: 'What do Invisalign braces cost?', expect: [/\$4,800\b/] },
  // hours
  { kind: 'hours', q: 'Can I come in on a Saturday?', expect: [/\b(8|12|noon)\b|saturday morning/i] },
  { kind: 'hours', q: 'What time does the downtown office shut on Fridays?', expect: [/\b2 pm\b/] },
  { kind: 'hours', q: 'How late are you open on Mondays downtown?', expect: [/\b6 pm\b/] },
  { kind: 'hours', q: 'Are you open Sundays?', expect: [no] },
  { kind: 'hours', q: 'Which holidays are you closed on?', expect: [/thanksgiving|labor day|christmas/i] },
  // where
  { kind: 'where', q: 'Where is your downtown office?', expect: [/215 State Street/] },
  { kind: 'where', q: "What's the address of the west side clinic?", expect: [/7010 Mineral Point/] },
  { kind: 'where', q: 'Where should I leave my car when I visit downtown?', expect: [/ramp/i] },
  // who
  { kind: 'who', q: 'Who is the dentist for kids?', expect: [/Ruiz/] },
  { kind: 'who', q: 'Which of your doctors does Invisalign?', expect: [/Osei/] },
  { kind: 'who', q: 'Who founded the practice?', expect: [/Helen Park/] },
  { kind: 'who', q: 'Who can help me with a question about my bill?', expect: [/Rachel Burke|billing@brightwater/] },
  // contact
  { kind: 'contact', q: 'What number do I ring if I have a toothache at night?', expect: [/555-0199/] },
  { kind: 'contact', q: "What's your phone number?", expect: [/555-0173/] },
  { kind: 'contact', q: 'What email address can I use to reach reception?', expect: [/frontdesk@brightwater\.example/] },
  { kind: 'contact', q: 'How fast do you reply to emails?', expect: [/one business day/i] },
  // duration
  { kind: 'duration', q: 'How long does the first appointment take?', expect: [/75 minutes/] },
  { kind: 'duration', q: 'For how many months would I wear clear aligners?', expect: [/12 to 18 months/] },
  { kind: 'duration', q: 'How long is an in-office whitening appointment?', expect: [/90 minutes/] },
  { kind: 'duration', q: 'How early should I get there for my first visit?', expect: [/15 minutes/] },
  { kind: 'duration', q: 'How much warning do you need if I have to cancel?', expect: [/48 hours/] },
  { kind: 'duration', q: 'How far out can I schedule a visit?', expect: [/three months/] },
  // yes/no
  { kind: 'yes_no', q: 'Do you take Delta Dental insurance?', expect: [yes, /Delta Dental/] },
  { kind: 'yes_no', q: 'Can I pay with my HSA card?', expect: [yes] },
  { kind: 'yes_no', q: 'Do you accept personal checks?', expect: [no] },
  { kind: 'yes_no', q: 'Do you take Medicaid?', expect: [no] },
  { kind: 'yes_no', q: 'Does anyone on your staff speak Spanish?', expect: [yes, /Spanish/] },
  { kind: 'yes_no', q: 'Can my 12-year-old get her teeth whitened?', expect: [no, /16/] },
  { kind: 'yes_no', q: 'Do you do silver fillings?', expect: [no] },
  // policy
  { kind: 'policy', q: 'Can I pay for treatment in monthly instalments?', expect: [/CareCredit/] },
  { kind: 'policy', q: 'What do I need to bring to my first appointment?', expect: [/photo ID|insurance card/i] },
  { kind: 'policy', q: 'At what age should my baby first see a dentist?', expect: [/age one|first birthday|first tooth/i] },
  { kind: 'policy', q: 'What is included in the yearly savings plan?', expect: [/cleanings|15%/i] },
  { kind: 'policy', q: 'If I chip a tooth, can I be seen today?', expect: [/same day/i] },
  // elsewhere
  { kind: 'elsewhere', q: 'Do you have an office in Milwaukee?', expect: [/Madison/] },
  { kind: 'elsewhere', q: 'Is there a location in Middleton?', expect: [/Madison/] },
  // unknown
  { kind: 'unknown', q: 'Do you sell gift certificates?' },
  { kind: 'unknown', q: 'Do you do root canals?' },
  { kind: 'unknown', q: 'Do you offer porcelain veneers?' },
  { kind: 'unknown', q: 'Is there a referral bonus if I send a friend?' },
  { kind: 'unknown', q: 'Is there a play corner for kids in the waiting room?' },
  { kind: 'unknown', q: "What's the Wi-Fi password?" },
  { kind: 'unknown', q: 'Can you make a device for sleep apnea?' },
  { kind: 'unknown', q: 'How much does it cost to pull a tooth?' },
  { kind: 'unknown', q: 'Is there a discount for veterans?' },
  { kind: 'unknown', q: 'Can I bring my service dog to my appointment?' },
  { kind: 'unknown', q: 'Which lab makes your crowns?' },
  { kind: 'unknown', q: 'Do you offer Botox treatments?' },
];
