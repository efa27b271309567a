/**
 * The questions of the answers evaluation, as a visitor of the Cedar & Pine site (site.ts) would
 * ask them: paraphrased, not copied from the pages. A fact is right when the reply matches every
 * pattern of `expect` and does not say it does not know; an unknown (the site does not say) is
 * right when the reply admits it and cites no page. `elsewhere` questions name a thing the site
 * mentions differently: the right reply says what the site does say.
 *
 * Every fourth question (index 3, 7, 11...) is held out: the evaluation reports its score but
 * never prints its replies unless EVAL_SHOW_HELD_OUT=1, so tuning never looks at it.
 */

export type Kind = 'price' | 'hours' | 'where' | 'who' | 'contact' | 'duration' | 'yes_no' | 'policy' | 'elsewhere' | 'unknown';

export interface Question { q: string; kind: Kind; expect?: RegExp[] }

export const yes = /^yes\b/i;
export const no = /^no\b/i;

export const QUESTIONS: Question[] = [
  { kind: 'price', q: 'How much is a day pass?', expect: [/\$22\b/] },
  { kind: 'price', q: 'What does it cost to climb just once?', expect: [/\$22\b/] },
  { kind: 'price', q: "What's the monthly membership price?", expect: [/\$79\b/] },
  { kind: 'price', q: 'Is there a cheaper plan for students?', expect: [/\$59\b/] },
  { kind: 'price', q: 'How much does it cost to rent climbing shoes?', expect: [/\$6\b/] },
  { kind: 'price', q: 'What do you charge for a kids birthday party?', expect: [/\$350\b/] },
  { kind: 'price', q: "I'm not a member, what would a single yoga class cost me?", expect: [/\$15\b/] },
  { kind: 'price', q: 'Is there a sign-up fee when I join?', expect: [/\$25\b/] },
  { kind: 'price', q: 'How much does a member pay to bring a friend?', expect: [/\$11\b/] },
  { kind: 'price', q: 'What is the price of the belay course?', expect: [/\$55\b/] },
  { kind: 'price', q: 'How much is the youth climbing team per month?', expect: [/\$150\b/] },
  { kind: 'price', q: 'What does a yearly membership cost?', expect: [/\$790\b/] },

  { kind: 'hours', q: 'What time do you open on Saturdays?', expect: [/8 am|9 am/] },
  { kind: 'hours', q: 'How late is Riverside open on a Wednesday?', expect: [/11 pm/] },
  { kind: 'hours', q: 'Which day is the Eastside gym shut?', expect: [/monday/i] },
  { kind: 'hours', q: 'Are you open on Christmas Day?', expect: [/^no\b|closed/i] },
  { kind: 'hours', q: 'What are your opening hours on Sunday?', expect: [/8 am – 8 pm|9 am – 6 pm/] },
  { kind: 'hours', q: 'At what times are the yoga sessions?', expect: [/7 am/, /6 pm/] },
  { kind: 'hours', q: 'On which days does the youth team train?', expect: [/tuesday/i, /thursday/i] },
  { kind: 'hours', q: "What time do you open on New Year's Day?", expect: [/noon/i] },

  { kind: 'where', q: 'Where is the Riverside gym?', expect: [/120 Mill Street/] },
  { kind: 'where', q: "What's the address of your Eastside location?", expect: [/4800 SE Division/] },
  { kind: 'where', q: 'Where can I park my car at Riverside?', expect: [/lot behind the building/] },
  { kind: 'where', q: 'Where are the birthday parties held?', expect: [/Riverside/] },
  { kind: 'where', q: 'Where is the yoga studio?', expect: [/Riverside/] },

  { kind: 'who', q: 'Who started the gym?', expect: [/Tom Okafor/] },
  { kind: 'who', q: 'Who teaches the lead climbing course?', expect: [/Maya Chen/] },
  { kind: 'who', q: "Who is in charge of the kids' programs?", expect: [/Priya Nair/] },
  { kind: 'who', q: 'Who sets the routes?', expect: [/Luis Ortega/] },
  { kind: 'who', q: 'Who leads the yoga classes?', expect: [/Dana Whitfield/] },

  { kind: 'contact', q: "What's your phone number?", expect: [/555-0142/] },
  { kind: 'contact', q: 'Can I get a number to ring you on?', expect: [/555-0142/] },
  { kind: 'contact', q: 'Which email address should I write to?', expect: [/hello@cedarpine\.example/] },
  { kind: 'contact', q: 'How fast do you answer emails?', expect: [/one business day/] },
  { kind: 'contact', q: 'Where do I send my CV for a job?', expect: [/jobs@cedarpine\.example/] },
  { kind: 'contact', q: 'How do I organise a team-building event for my company?', expect: [/events@cedarpine\.example/] },

  { kind: 'duration', q: 'How long is a birthday party?', expect: [/2 hours|two hours/] },
  { kind: 'duration', q: 'How long does the intro to bouldering class last?', expect: [/60 minutes/] },
  { kind: 'duration', q: 'For how long is the waiver valid?', expect: [/one year/] },
  { kind: 'duration', q: 'How long can I put my membership on hold?', expect: [/3 months|three months/] },
  { kind: 'duration', q: 'How far ahead do I need to book a party?', expect: [/two weeks/] },
  { kind: 'duration', q: 'How much notice do I have to give to cancel?', expect: [/30 days/] },

  { kind: 'yes_no', q: 'Are there showers?', expect: [yes, /shower/] },
  { kind: 'yes_no', q: 'Can I bring my dog along?', expect: [no] },
  { kind: 'yes_no', q: 'Can I use my own climbing shoes?', expect: [yes] },
  { kind: 'yes_no', q: 'Do you refund day passes?', expect: [no] },
  { kind: 'yes_no', q: 'Is Riverside wheelchair accessible?', expect: [yes] },
  { kind: 'yes_no', q: 'Is yoga included in the membership?', expect: [yes] },
  { kind: 'yes_no', q: 'Do I need any climbing experience to start?', expect: [no] },
  { kind: 'yes_no', q: 'Do you have free wifi?', expect: [yes] },

  { kind: 'policy', q: 'How old does my child have to be to climb?', expect: [/4 years/] },
  { kind: 'policy', q: 'Does my 12 year old need an adult with them?', expect: [/under 14|parent or guardian/] },
  { kind: 'policy', q: 'Do members get a discount in the shop?', expect: [/10%/] },
  { kind: 'policy', q: 'Which shoe brands do you sell?', expect: [/La Sportiva|Scarpa/] },
  { kind: 'policy', q: 'When is the monthly bouldering competition?', expect: [/third Friday/] },
  { kind: 'policy', q: 'How big a group can you host for a corporate event?', expect: [/10 to 40/] },
  { kind: 'policy', q: 'Can I get my money back on an annual membership?', expect: [/14 days/] },
  { kind: 'policy', q: 'Do I have to pay extra for gear when I take a class?', expect: [/includes gear rental|gear rental/] },

  { kind: 'elsewhere', q: 'Do you have a gym in Seattle?', expect: [/Portland/] },
  { kind: 'elsewhere', q: 'Is there a branch in Denver?', expect: [/Portland/] },
  { kind: 'elsewhere', q: 'Can we have a birthday party at Eastside?', expect: [/Riverside/] },

  { kind: 'unknown', q: 'Do you sell gift cards?' },
  { kind: 'unknown', q: 'Do you offer ice climbing courses?' },
  { kind: 'unknown', q: 'Is there a sauna?' },
  { kind: 'unknown', q: 'Can I pay with bitcoin?' },
  { kind: 'unknown', q: 'What is your cancellation policy for birthday parties?' },
  { kind: 'unknown', q: 'Do you offer physiotherapy?' },
  { kind: 'unknown', q: 'Is there a swimming pool?' },
  { kind: 'unknown', q: 'Do you have a discount for military veterans?' },
  { kind: 'unknown', q: 'How much is a private coaching session?' },
  { kind: 'unknown', q: 'Can I rent a locker by the month?' },
  { kind: 'unknown', q: 'What is the wifi password?' },
  { kind: 'unknown', q: 'Do you host weddings?' },
  { kind: 'unknown', q: 'Do you run speed climbing training?' },
  { kind: 'unknown', q: 'Who is your insurance provider?' },
];

/** Held out from tuning: every fourth question. */
export const isHeldOut = (index: number) => index % 4 === 3;
